package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

// sha12 is {sha} of the file at path: the first 12 hex digits of its
// SHA-256.
func sha12(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:12]
}

// submitRefused runs upload at now against s with every submitLead
// refused (503 from the service): each row it takes ends submit_failed,
// its lead created and its id journalled, for a later run to submit. It
// checks the rows of the results file.
func submitRefused(t *testing.T, s *alteringSim, now time.Time, results string, rows []int, args ...string) {
	t.Helper()
	s.refuseSubmit.Store(true)
	defer s.refuseSubmit.Store(false)
	res := runAt(t, now, secretEnv(), args...)
	if res.code != app.ExitRowsFailed {
		t.Fatalf("first run exit = %d, want %d (submissions refused)\n%s", res.code, app.ExitRowsFailed, res.stderr)
	}
	got := readResults(t, results)
	if len(got) != len(rows) {
		t.Fatalf("first run: %d results lines, want %d", len(got), len(rows))
	}
	for _, r := range got {
		if r["status"] != "submit_failed" || r["id"] == "" {
			t.Fatalf("first run: row %s ended %s (id %q); want submit_failed with its lead's id", r["row"], r["status"], r["id"])
		}
	}
}

// TestResumeAfterMidnight is issue 28 item 4: the README's nightly
// pattern ({name}-{date}-{sha}) leaves run 1's results under 23:50's date
// with its leads created and not all submitted; the rerun at 00:10 names a
// new results file. It must find run 1's by the input's identity and
// continue it (each lead submitted once, none created again), not send
// every row again without the own-lead check (every qualified lead a
// duplicate, processed, never submitted, exit 0). Without --resume it is
// refused (exit 2) naming run 1's file, nothing sent.
func TestResumeAfterMidnight(t *testing.T) {
	t.Parallel()
	const n = 4
	s := startAlteringSim(t, leadsim.Options{}, nil)
	s.on.Store(false)
	dir := t.TempDir()
	input := qualifyingRows(t, dir, n)
	pattern := filepath.Join(dir, "{name}-{date}-{sha}")
	args := func(extra ...string) []string {
		return checkUploadArgs(s.sim, append(extra, "--max-attempts", "1", "--max-consecutive-failures", "0", "--results", pattern+".results.csv",
			"--rejects", pattern+".rejects.csv", "--summary-json", pattern+".summary.json", input)...)
	}
	night := time.Date(2026, 11, 22, 23, 50, 0, 0, time.UTC)
	results := filepath.Join(dir, "qualified-2026-11-22-"+sha12(t, input)+".results.csv")
	submitRefused(t, s, night, results, []int{1, 2, 3, 4}, args("--resume")...)
	created := createsAtService(s)

	after := night.Add(20 * time.Minute)
	res := runAt(t, after, secretEnv(), args()...)
	if res.code != app.ExitUsage || !strings.Contains(res.stderr, results) || !strings.Contains(res.stderr, "--resume") {
		t.Errorf("rerun after midnight without --resume: exit %d, want %d naming %s and --resume\n%s", res.code, app.ExitUsage, results, res.stderr)
	}
	if got := createsAtService(s); got != created {
		t.Errorf("the refused rerun sent %d createLead calls, want none", got-created)
	}

	res = runAt(t, after, secretEnv(), args("--resume")...)
	if res.code != app.ExitOK {
		t.Errorf("--resume after midnight: exit %d, want 0\n%s", res.code, res.stderr)
	}
	for row, r := range finalByRow(t, results, n) {
		if r["status"] != "submitted" {
			t.Errorf("row %d ended %s: %q; want its lead (made before midnight) submitted", row, r["status"], r["note"])
		}
	}
	if got := createsAtService(s); got != created {
		t.Errorf("--resume after midnight sent %d createLead calls, want none (every lead exists)", got-created)
	}
	if got := s.Stats().Submissions; got != n {
		t.Errorf("the service holds %d submissions, want %d", got, n)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "qualified-2026-11-23-*.results.csv")); len(m) != 0 {
		t.Errorf("the rerun wrote results under the new date %v, want it to continue %s", m, results)
	}
}

// TestResumeShardCountChanged is issue 28 item 4: a backfill ran in two
// shards and left leads created; a rerun with another --shard count (or
// none) takes rows that the earlier shards may have sent: it is refused
// (exit 2) naming their results files, nothing sent. A shard of the same
// count whose results path moved ({date}) continues its own file.
func TestResumeShardCountChanged(t *testing.T) {
	t.Parallel()
	const n = 6
	s := startAlteringSim(t, leadsim.Options{}, nil)
	s.on.Store(false)
	dir := t.TempDir()
	input := qualifyingRows(t, dir, n)
	pattern := filepath.Join(dir, "{name}-{date}-{shard}.results.csv")
	day := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	args := func(extra ...string) []string {
		return checkUploadArgs(s.sim, append(extra, "--max-attempts", "1", "--max-consecutive-failures", "0", "--results", pattern, "--resume", input)...)
	}
	shardResults := map[int]string{}
	taken := 0
	for k := range 2 {
		shardResults[k] = filepath.Join(dir, "qualified-2026-11-22-"+strconv.Itoa(k)+"-of-2.results.csv")
		s.refuseSubmit.Store(true)
		res := runAt(t, day, secretEnv(), args("--shard", strconv.Itoa(k)+"/2")...)
		s.refuseSubmit.Store(false)
		if res.code != app.ExitRowsFailed {
			t.Fatalf("shard %d/2: exit %d, want %d\n%s", k, res.code, app.ExitRowsFailed, res.stderr)
		}
		for _, r := range readResults(t, shardResults[k]) {
			if r["status"] != "submit_failed" {
				t.Fatalf("shard %d/2: row %s ended %s, want submit_failed", k, r["row"], r["status"])
			}
			taken++
		}
	}
	if taken != n {
		t.Fatalf("the two shards took %d rows, want %d", taken, n)
	}
	created := createsAtService(s)

	for _, shard := range [][]string{{"--shard", "0/3"}, {"--shard", "2/3"}, nil} {
		res := runAt(t, day.Add(time.Hour), secretEnv(), args(shard...)...)
		if res.code != app.ExitUsage || !strings.Contains(res.stderr, "another --shard count") || !strings.Contains(res.stderr, shardResults[0]) || !strings.Contains(res.stderr, shardResults[1]) {
			t.Errorf("--resume %v after a 2-shard run: exit %d, want %d naming both shards' results files\n%s", shard, res.code, app.ExitUsage, res.stderr)
		}
		if got := createsAtService(s); got != created {
			t.Errorf("--resume %v sent %d createLead calls, want none", shard, got-created)
		}
	}

	// The next day, shard 1/2 continues its own file.
	res := runAt(t, day.Add(24*time.Hour), secretEnv(), args("--shard", "1/2")...)
	if res.code != app.ExitOK || !strings.Contains(res.stderr, "continuing the earlier run") {
		t.Errorf("shard 1/2 the next day: exit %d, want 0, continuing its earlier run\n%s", res.code, res.stderr)
	}
	for _, r := range readResults(t, shardResults[1]) {
		if r["status"] != "submitted" {
			t.Errorf("shard 1/2 the next day: row %s ended %s, want its lead submitted", r["row"], r["status"])
		}
	}
	if got := createsAtService(s); got != created {
		t.Errorf("shard 1/2 the next day sent %d createLead calls, want none", got-created)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "qualified-2026-11-23-*")); len(m) != 0 {
		t.Errorf("shard 1/2 the next day wrote %v, want it to continue %s", m, shardResults[1])
	}
}

// TestResumeAfterRowsAppended is issue 28 item 4 with {sha}: rows are
// appended to the input after run 1, so {sha} names a new results file;
// the rerun finds run 1's by the bytes it read (the first bytes of the
// input now) and sends only the rows appended.
func TestResumeAfterRowsAppended(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := filepath.Join(dir, "leads.csv")
	recs := sampleRecords(t)
	writeCSV(t, input, recs[:5])
	pattern := filepath.Join(dir, "{name}-{sha}.results.csv")
	args := checkUploadArgs(s, "--resume", "--results", pattern, input)
	day := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	if res := runAt(t, day, secretEnv(), args...); res.code != app.ExitOK {
		t.Fatalf("first run: exit %d\n%s", res.code, res.stderr)
	}
	first := filepath.Join(dir, "leads-"+sha12(t, input)+".results.csv")
	sent := totalCreates(s)
	writeCSV(t, input, recs[:8])
	res := runAt(t, day.Add(time.Hour), secretEnv(), args...)
	if res.code != app.ExitOK {
		t.Errorf("rerun after rows were appended: exit %d\n%s", res.code, res.stderr)
	}
	if got := totalCreates(s) - sent; got != 3 {
		t.Errorf("rerun after 3 rows were appended sent %d createLead calls, want 3", got)
	}
	if got := len(readResults(t, first)); got != 7 {
		t.Errorf("%s has %d lines after the rerun, want 7 (the run continued it)", first, got)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "leads-"+sha12(t, input)+".results.csv")); len(m) != 0 {
		t.Errorf("the rerun wrote %v, want it to continue %s", m, first)
	}
}

// TestMovedResultsOfAnotherEndpoint: an earlier run of the same input
// against another endpoint (a sandbox) is not this run's: the next day's
// run against production sends every row; one whose meta file does not
// say its endpoint (written before bulkload recorded it) cannot be told
// apart, and is refused (exit 2) naming it.
func TestMovedResultsOfAnotherEndpoint(t *testing.T) {
	t.Parallel()
	const n = 3
	sandbox, production := startTestSim(t, leadsim.Options{}), startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := qualifyingRows(t, dir, n)
	pattern := filepath.Join(dir, "{name}-{date}.results.csv")
	day := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	if res := runAt(t, day, secretEnv(), checkUploadArgs(sandbox, "--resume", "--results", pattern, input)...); res.code != app.ExitOK {
		t.Fatalf("sandbox run: exit %d\n%s", res.code, res.stderr)
	}
	sandboxResults := filepath.Join(dir, "qualified-2026-11-22.results.csv")
	meta, err := os.ReadFile(sandboxResults + ".meta")
	if err != nil || !strings.Contains(string(meta), `"endpoint"`) {
		t.Fatalf("the sandbox run's meta file %s does not record its endpoint: %s %v", sandboxResults+".meta", meta, err)
	}
	res := runAt(t, day.Add(24*time.Hour), secretEnv(), checkUploadArgs(production, "--resume", "--results", pattern, input)...)
	if res.code != app.ExitOK || totalCreates(production) != n {
		t.Errorf("production run the next day: exit %d, %d leads sent; want 0 and %d (the sandbox's results are not production's)\n%s", res.code, totalCreates(production), n, res.stderr)
	}

	// A meta file without its endpoint: refused, nothing sent.
	productionResults := filepath.Join(dir, "qualified-2026-11-23.results.csv")
	for _, p := range []string{sandboxResults, productionResults} {
		b, err := os.ReadFile(p + ".meta")
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for l := range strings.SplitSeq(string(b), "\n") {
			if !strings.Contains(l, `"endpoint"`) {
				lines = append(lines, l)
			}
		}
		old := strings.Replace(strings.Join(lines, "\n"), `",`+"\n}", `"`+"\n}", 1)
		if err := os.WriteFile(p+".meta", []byte(old), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(sandboxResults)
	res = runAt(t, day.Add(48*time.Hour), secretEnv(), checkUploadArgs(production, "--resume", "--results", pattern, input)...)
	if res.code != app.ExitUsage || !strings.Contains(res.stderr, productionResults) || !strings.Contains(res.stderr, "does not record the endpoint") {
		t.Errorf("run beside results without an endpoint: exit %d, want %d naming %s\n%s", res.code, app.ExitUsage, productionResults, res.stderr)
	}
	if got := totalCreates(production); got != n {
		t.Errorf("the refused run sent %d leads, want none", got-n)
	}
}

// TestResumeAfterMidnightKilled is issue 28 item 4 as the issue tells it:
// the README's {name}-{date}-{sha} run is killed (SIGKILL) with rows
// created and a createLead in flight; the rerun a day later (the clock
// injected) continues its results file: every lead is submitted once, none
// of the journalled ones is created again. The simulator holds the
// createLeads after the 6th until the kill, so the kill lands mid-run
// whatever the host's load (it used to come when 4 lines were seen, and a
// slow poll could find all 12 leads created).
func TestResumeAfterMidnightKilled(t *testing.T) {
	t.Parallel()
	const n = 12
	gate := newHoldGate("createLead", 6)
	s := startTestSimHandler(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 10 * time.Millisecond}}, gate.wrap)
	dir := t.TempDir()
	input := qualifyingRows(t, dir, n)
	pattern := filepath.Join(dir, "{name}-{date}-{sha}.results.csv")
	args := checkUploadArgs(s, "--resume", "--concurrency", "1", "--results", pattern, input)
	cmd, out := subprocess(t, args...)
	matches := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "qualified-*-"+sha12(t, input)+".results.csv"))
		return m
	}
	var results string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && results == ""; time.Sleep(20 * time.Millisecond) {
		if m := matches(); len(m) == 1 {
			results = m[0]
		}
	}
	if results == "" {
		t.Fatalf("no results file appeared\n%s", out)
	}
	gate.waitHeld(t, 1, cmd, out)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	gate.release()
	if created := s.Stats().LeadsCreated; created != 6 {
		t.Fatalf("the kill left %d of %d leads created, want the 6 before the one held", created, n)
	}

	res := runAt(t, time.Now().Add(24*time.Hour), secretEnv(), args...)
	if res.code != app.ExitOK {
		t.Errorf("--resume a day later: exit %d, want 0\n%s", res.code, res.stderr)
	}
	if m := matches(); len(m) != 1 || m[0] != results {
		t.Errorf("results files %v, want the killed run's %s alone (continued)", m, results)
	}
	for row, r := range finalByRow(t, results, n) {
		if r["status"] != "submitted" {
			t.Errorf("row %d ended %s: %q; want submitted", row, r["status"], r["note"])
		}
	}
	st := s.Stats()
	if st.Submissions != n {
		t.Errorf("the service holds %d submissions, want %d (each lead once)", st.Submissions, n)
	}
	if st.ResultCodes[1002] > 1 {
		t.Errorf("the service answered %d duplicates, want at most the one in flight at the kill", st.ResultCodes[1002])
	}
}
