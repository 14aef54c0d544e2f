package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/outfile"
)

// TestUploadStdinKilledIdentity is issue 18 item 4: a run from standard
// Input is killed mid-run. Its input's identity must be on disk already
// (written before the first call), so that night 2's different export
// (the same leadIds, row by row, other data) piped into --resume on the
// same results name is refused before anything is sent, while the same
// export piped again resumes and finishes.
func TestUploadStdinKilledIdentity(t *testing.T) {
	t.Parallel()
	const n = 1500
	dir := t.TempDir()
	night := func(seed int64) []byte {
		path := filepath.Join(dir, "night.csv")
		if err := synth.WriteCSVFile(path, synth.Options{Seed: seed, Style: synth.Defaults().Style, LeadIDPrefix: "ACME-", NoSSN: 0.2}, n); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	night1, night2 := night(1), night(2)
	if bytes.Equal(night1, night2) {
		t.Fatal("the two nights' exports are the same: the test tests nothing")
	}
	s := startTestSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 5 * time.Millisecond}})
	results := filepath.Join(dir, "export.results.csv")
	args := slices.Concat([]string{"upload", "--format", "csv", "--results", results}, s.args(), []string{"--rate", "0", "--progress", "off", "--concurrency", "2", "-"})

	// Night 1: the export comes through a pipe that stays open after its
	// first 1,200 rows; the run is killed while it sends them.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "BULKLOAD_TEST_AS_MAIN=1", "BULKLOAD_CLIENT_SECRET="+simSecret, "XDG_STATE_HOME="+t.TempDir()) // a ledger of its own, never the user's
	cmd.Stdin = pr
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	cut := 0
	for i := 0; i <= 1200; i++ { // the header and 1,200 rows
		cut += bytes.IndexByte(night1[cut:], '\n') + 1
	}
	go func() { pw.Write(night1[:cut]) }()
	waitForLines(t, results, 20, 60*time.Second)
	cmd.Process.Kill()
	cmd.Wait()
	pw.Close()
	m, err := outfile.ReadMeta(results)
	if err != nil {
		t.Fatalf("the killed stdin run left no record of its input: %v\n%s", err, out.String())
	}
	if !m.Streamed || m.FirstBytes == 0 || m.FirstSHA256 == "" {
		t.Errorf("meta = %+v, want a stream's identity with its first bytes' hash", m)
	}
	// Night 2's export on the same results name: refused, nothing sent.
	// It is pointed at a simulator of its own, so that a call the killed
	// process had in flight, which may reach s at any time under load,
	// is not counted as one the refused resume sent.
	fresh := startTestSim(t, leadsim.Options{})
	refused := slices.Concat([]string{"upload", "--format", "csv", "--results", results}, fresh.args(), []string{"--rate", "0", "--progress", "off", "--concurrency", "2", "--resume", "-"})
	res := runStdin(t, night2, refused...)
	if res.code != app.ExitUsage || !strings.Contains(res.stderr, "does not belong to this input") {
		t.Errorf("--resume of another export from stdin: exit %d, want %d saying the results file is another input's\n%s", res.code, app.ExitUsage, res.stderr)
	}
	if st := fresh.Stats(); totalCreates(fresh) != 0 || len(st.Requests[leadsim.OpCreateLead]) != 0 || len(st.Requests[leadsim.OpSubmitLead]) != 0 {
		t.Errorf("the refused resume sent leads (createLead calls %d, answers %v), want none: nothing may be sent", totalCreates(fresh), st.Requests)
	}

	// Night 1's export again: resumed and finished, at 16 calls in flight
	// (at the killed run's 2 it took most of the test's time for the
	// 1,480-odd rows left; how fast is not what is checked).
	resume := append(slices.Clone(args[:len(args)-1]), "--resume", "-")
	resume[slices.Index(resume, "--concurrency")+1] = "16"
	res = runStdin(t, night1, resume...)
	if res.code != app.ExitOK {
		t.Errorf("--resume of the same export from stdin: exit %d, want 0\n%s", res.code, res.stderr)
	}
	rows := finalByRow(t, results, n)
	if c := countStatus(rows); c["processed"] != n {
		t.Errorf("statuses %v, want all %d processed", c, n)
	}
	if m := metaOf(t, results); strings.HasPrefix(m.InputSHA256, "partial:") || m.Rows != n {
		t.Errorf("meta after the finished run = %+v, want the whole input's hash and %d rows", m, n)
	}
}

// metaOf reads the meta file beside results.
func metaOf(t *testing.T, results string) *outfile.Meta {
	t.Helper()
	m, err := outfile.ReadMeta(results)
	if err != nil {
		t.Fatalf("meta file: %v", err)
	}
	return m
}

// TestUploadStdinIdentityKeptCurrent: a stream's identity is kept current
// while the run reads (the meta file's bytes grow past the first bytes),
// and a --resume whose input begins with the same first bytes but differs
// before the bytes the earlier run read stops with an error naming the
// Input, not exit 0 (issue 18 item 4).
func TestUploadStdinIdentityKeptCurrent(t *testing.T) {
	t.Parallel()
	const n = 1500
	dir := t.TempDir()
	night := func(seed int64) []byte {
		path := filepath.Join(dir, "night.csv")
		if err := synth.WriteCSVFile(path, synth.Options{Seed: seed, Style: synth.Defaults().Style, LeadIDPrefix: "ACME-", NoSSN: 0.2}, n); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	rowsEnd := func(b []byte, rows int) int { // the offset after the header and rows rows
		cut := 0
		for i := 0; i <= rows; i++ {
			cut += bytes.IndexByte(b[cut:], '\n') + 1
		}
		return cut
	}
	night1, night2 := night(1), night(2)
	s := startTestSim(t, leadsim.Options{})
	results := filepath.Join(dir, "export.results.csv")
	args := slices.Concat([]string{"upload", "--format", "csv", "--results", results}, s.args(), []string{"--rate", "0", "--progress", "off", "-"})

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "BULKLOAD_TEST_AS_MAIN=1", "BULKLOAD_CLIENT_SECRET="+simSecret, "XDG_STATE_HOME="+t.TempDir()) // a ledger of its own, never the user's
	cmd.Stdin = pr
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	cut := rowsEnd(night1, 1200)
	go func() {
		pw.Write(night1[:cut])
		// The rest once the run sends: the pipe stays open.
		time.Sleep(500 * time.Millisecond)
		pw.Write(night1[cut:])
	}()
	waitForLines(t, results, 20, 60*time.Second)
	var m *outfile.Meta
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m, err = outfile.ReadMeta(results); err == nil && m.InputBytes > m.FirstBytes && m.InputBytes == int64(len(night1)) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	pw.Close()
	if m == nil || m.InputBytes != int64(len(night1)) || m.FirstBytes == 0 || m.FirstBytes >= m.InputBytes || !strings.HasPrefix(m.InputSHA256, "partial:") {
		t.Fatalf("meta = %+v, want it kept current: first bytes %d or fewer, then all %d bytes read, partial\n%s", m, cut, len(night1), out.String())
	}

	// The same first bytes, then night 2's rows (and blank lines, so that
	// it is no shorter than night 1).
	mixed := append(slices.Clone(night1[:cut]), night2[rowsEnd(night2, 1200):]...)
	mixed = append(mixed, bytes.Repeat([]byte("\n"), 4096)...)
	res := runStdin(t, mixed, append(slices.Clone(args[:len(args)-1]), "--resume", "-")...)
	if res.code == app.ExitOK || !strings.Contains(res.stderr, "not the input of the earlier run") || !strings.Contains(res.stderr, "hash otherwise") {
		t.Errorf("--resume of an input that differs after its first bytes: exit %d, want non-zero naming it\n%s", res.code, res.stderr)
	}
	// Night 1's export again: resumed and finished.
	res = runStdin(t, night1, append(slices.Clone(args[:len(args)-1]), "--resume", "-")...)
	if res.code != app.ExitOK {
		t.Errorf("--resume of the same export: exit %d, want 0\n%s", res.code, res.stderr)
	}
}
