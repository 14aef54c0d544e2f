package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/internal/resultstest"
	"github.com/bulkload/bulkload/leadsim"
)

// sha12 is {sha} of the file at path (resultstest.SHA12).
func sha12(t *testing.T, path string) string { return resultstest.SHA12(t, path) }

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
