package app

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/internal/resultstest"
	"github.com/bulkload/bulkload/leadsim"
)

// A results file that moved: the README's {date} and {sha} patterns name
// a new file after midnight, after rows were appended, for another shard
// count or another endpoint, and the run finds the earlier one (or
// refuses). Moved from cmd/bulkload's moved_test.go (argv turned into
// options; the run's clock as runOpts.now, at(t)); the killed run's
// test stays there.

// at are the run options of a run at now: its clock stands there.
func at(now time.Time) runOpts { return runOpts{now: func() time.Time { return now }} }

// sha12 is {sha} of the file at path (resultstest.SHA12).
func sha12(t *testing.T, path string) string { return resultstest.SHA12(t, path) }

// submitRefused runs the upload j at now against s with every submitLead
// refused (503 from the service): each row it takes ends submit_failed,
// its lead created and its id journalled, for a later run to submit. It
// checks the rows of the results file.
func submitRefused(t *testing.T, s *alteringSim, now time.Time, results string, rows []int, j *UploadJob) {
	t.Helper()
	s.RefuseSubmit.Store(true)
	defer s.RefuseSubmit.Store(false)
	res := runUpload(t, s.Server, j, at(now))
	if res.code != ExitRowsFailed {
		t.Fatalf("first run exit = %d, want %d (submissions refused)\n%s", res.code, ExitRowsFailed, res.stderr)
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
	s.On.Store(false)
	dir := t.TempDir()
	input := qualifyingRows(t, dir, n)
	pattern := filepath.Join(dir, "{name}-{date}-{sha}")
	job := func(resume bool) *UploadJob {
		return uploadJob(input, pattern+".results.csv", func(j *UploadJob) {
			j.Up.MaxAttempts = 1
			j.Up.MaxConsecutiveFailures = 0
			j.In.Rejects = pattern + ".rejects.csv"
			j.In.SummaryJSON = pattern + ".summary.json"
			j.Up.Resume = resume
		})
	}
	night := time.Date(2026, 11, 22, 23, 50, 0, 0, time.UTC)
	results := filepath.Join(dir, "qualified-2026-11-22-"+sha12(t, input)+".results.csv")
	submitRefused(t, s, night, results, []int{1, 2, 3, 4}, job(true))
	created := s.Stats().CreatesAnswered()

	after := night.Add(20 * time.Minute)
	res := runUpload(t, s.Server, job(false), at(after))
	if res.code != ExitUsage || !strings.Contains(res.stderr, results) || !strings.Contains(res.stderr, "--resume") {
		t.Errorf("rerun after midnight without --resume: exit %d, want %d naming %s and --resume\n%s", res.code, ExitUsage, results, res.stderr)
	}
	if got := s.Stats().CreatesAnswered(); got != created {
		t.Errorf("the refused rerun sent %d createLead calls, want none", got-created)
	}

	res = runUpload(t, s.Server, job(true), at(after))
	if res.code != ExitOK {
		t.Errorf("--resume after midnight: exit %d, want 0\n%s", res.code, res.stderr)
	}
	for row, r := range finalByRow(t, results, n) {
		if r["status"] != "submitted" {
			t.Errorf("row %d ended %s: %q; want its lead (made before midnight) submitted", row, r["status"], r["note"])
		}
	}
	if got := s.Stats().CreatesAnswered(); got != created {
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
	s.On.Store(false)
	dir := t.TempDir()
	input := qualifyingRows(t, dir, n)
	pattern := filepath.Join(dir, "{name}-{date}-{shard}.results.csv")
	day := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	// job is the upload of shard ("" none) with --resume.
	job := func(shard string) *UploadJob {
		return uploadJob(input, pattern, func(j *UploadJob) {
			j.Up.MaxAttempts = 1
			j.Up.MaxConsecutiveFailures = 0
			j.Up.Resume = true
			j.Up.Shard = shard
		})
	}
	shardResults := map[int]string{}
	taken := 0
	for k := range 2 {
		shardResults[k] = filepath.Join(dir, "qualified-2026-11-22-"+strconv.Itoa(k)+"-of-2.results.csv")
		s.RefuseSubmit.Store(true)
		res := runUpload(t, s.Server, job(strconv.Itoa(k)+"/2"), at(day))
		s.RefuseSubmit.Store(false)
		if res.code != ExitRowsFailed {
			t.Fatalf("shard %d/2: exit %d, want %d\n%s", k, res.code, ExitRowsFailed, res.stderr)
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
	created := s.Stats().CreatesAnswered()

	for _, shard := range []string{"0/3", "2/3", ""} {
		res := runUpload(t, s.Server, job(shard), at(day.Add(time.Hour)))
		if res.code != ExitUsage || !strings.Contains(res.stderr, "another --shard count") || !strings.Contains(res.stderr, shardResults[0]) || !strings.Contains(res.stderr, shardResults[1]) {
			t.Errorf("--resume --shard %q after a 2-shard run: exit %d, want %d naming both shards' results files\n%s", shard, res.code, ExitUsage, res.stderr)
		}
		if got := s.Stats().CreatesAnswered(); got != created {
			t.Errorf("--resume --shard %q sent %d createLead calls, want none", shard, got-created)
		}
	}

	// The next day, shard 1/2 continues its own file.
	res := runUpload(t, s.Server, job("1/2"), at(day.Add(24*time.Hour)))
	if res.code != ExitOK || !strings.Contains(res.stderr, "continuing the earlier run") {
		t.Errorf("shard 1/2 the next day: exit %d, want 0, continuing its earlier run\n%s", res.code, res.stderr)
	}
	for _, r := range readResults(t, shardResults[1]) {
		if r["status"] != "submitted" {
			t.Errorf("shard 1/2 the next day: row %s ended %s, want its lead submitted", r["row"], r["status"])
		}
	}
	if got := s.Stats().CreatesAnswered(); got != created {
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
	s := startSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := filepath.Join(dir, "leads.csv")
	recs := sampleRecords(t)
	writeCSV(t, input, recs[:5])
	pattern := filepath.Join(dir, "{name}-{sha}.results.csv")
	job := func() *UploadJob { return uploadJob(input, pattern, func(j *UploadJob) { j.Up.Resume = true }) }
	day := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	if res := runUpload(t, s, job(), at(day)); res.code != ExitOK {
		t.Fatalf("first run: exit %d\n%s", res.code, res.stderr)
	}
	first := filepath.Join(dir, "leads-"+sha12(t, input)+".results.csv")
	sent := totalCreates(s)
	writeCSV(t, input, recs[:8])
	res := runUpload(t, s, job(), at(day.Add(time.Hour)))
	if res.code != ExitOK {
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
	sandbox, production := startSim(t, leadsim.Options{}), startSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := qualifyingRows(t, dir, n)
	pattern := filepath.Join(dir, "{name}-{date}.results.csv")
	day := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	job := func() *UploadJob { return uploadJob(input, pattern, func(j *UploadJob) { j.Up.Resume = true }) }
	if res := runUpload(t, sandbox, job(), at(day)); res.code != ExitOK {
		t.Fatalf("sandbox run: exit %d\n%s", res.code, res.stderr)
	}
	sandboxResults := filepath.Join(dir, "qualified-2026-11-22.results.csv")
	meta, err := os.ReadFile(sandboxResults + ".meta")
	if err != nil || !strings.Contains(string(meta), `"endpoint"`) {
		t.Fatalf("the sandbox run's meta file %s does not record its endpoint: %s %v", sandboxResults+".meta", meta, err)
	}
	res := runUpload(t, production, job(), at(day.Add(24*time.Hour)))
	if res.code != ExitOK || totalCreates(production) != n {
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
	res = runUpload(t, production, job(), at(day.Add(48*time.Hour)))
	if res.code != ExitUsage || !strings.Contains(res.stderr, productionResults) || !strings.Contains(res.stderr, "does not record the endpoint") {
		t.Errorf("run beside results without an endpoint: exit %d, want %d naming %s\n%s", res.code, ExitUsage, productionResults, res.stderr)
	}
	if got := totalCreates(production); got != n {
		t.Errorf("the refused run sent %d leads, want none", got-n)
	}
}
