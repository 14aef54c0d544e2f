//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/outfile"
)

// TestSIGHUPStopsLikeSIGTERM is issue 18 item 12: a closed terminal or SSH
// session (SIGHUP) drains the calls in flight, compacts the results file
// and writes the summary and the meta file, exit 130, as SIGTERM does;
// it used to kill the run on the spot.
func TestSIGHUPStopsLikeSIGTERM(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 80 * time.Millisecond}})
	dir := t.TempDir()
	results := filepath.Join(dir, "results.csv")
	summary := filepath.Join(dir, "summary.json")
	args := slices.Concat([]string{"upload"}, s.args(), []string{"--results", results, "--summary-json", summary,
		"--concurrency", "4", "--rate", "0", "--progress", "off", filepath.Join(samples, "leads.csv")})
	cmd, out := subprocess(t, args...)
	waitForLines(t, results, 8, 60*time.Second)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != app.ExitInterrupted {
		t.Fatalf("exit after SIGHUP = %d (%v), want %d\n%s", code, cmd.ProcessState, app.ExitInterrupted, out)
	}
	rows := readResults(t, results)
	if len(rows) == 0 || len(rows) >= 50 {
		t.Fatalf("the run stopped by SIGHUP wrote %d rows, want some but not all", len(rows))
	}
	for _, r := range rows {
		if r["status"] != "processed" && r["status"] != "submitted" {
			t.Errorf("row %s ended %q after SIGHUP, want its call drained", r["row"], r["status"])
		}
	}
	if sum := readSummaryJSON(t, summary); sum["processed"] == nil {
		t.Errorf("summary JSON after SIGHUP lacks counts: %v", sum)
	}
	if _, err := outfile.ReadMeta(results); err != nil {
		t.Errorf("no meta file after SIGHUP: %v", err)
	}
}

// TestClosedStderrDoesNotStopUpload is issue 18 item 12's second repro:
// Stderr piped to `head -1`. After the reader goes away, the next log line
// used to kill the run with SIGPIPE (exit 141), leaving no summary JSON and
// bulkload_run_in_progress 1 in the metrics file. The upload must finish.
func TestClosedStderrDoesNotStopUpload(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 20 * time.Millisecond}})
	dir := t.TempDir()
	results := filepath.Join(dir, "results.csv")
	summary := filepath.Join(dir, "summary.json")
	prom := filepath.Join(dir, "leads.prom")
	args := slices.Concat([]string{"upload"}, s.args(), []string{"--results", results, "--summary-json", summary,
		"--metrics-file", prom, "--log-level", "debug", "--concurrency", "2", "--rate", "0",
		"--progress", "off", filepath.Join(samples, "leads.csv")})
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "BULKLOAD_TEST_AS_MAIN=1", "BULKLOAD_CLIENT_SECRET="+simSecret, "XDG_STATE_HOME="+t.TempDir()) // a ledger of its own, never the user's
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// head -1: read one line, then close the pipe.
	if _, err := bufio.NewReader(stderr).ReadString('\n'); err != nil {
		t.Fatalf("no first line on stderr: %v", err)
	}
	stderr.Close()
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != app.ExitOK {
		b, _ := os.ReadFile(summary)
		t.Fatalf("with stderr closed: exit %d (%v), want 0\n%s", code, cmd.ProcessState, b)
	}
	finalByRow(t, results, 50)
	if sum := readSummaryJSON(t, summary); sum["submitted"] == nil {
		t.Errorf("summary JSON lacks counts: %v", sum)
	}
	vals, _ := parseMetrics(t, prom)
	if v := vals["bulkload_run_in_progress"]; v != 0 {
		t.Errorf("bulkload_run_in_progress = %v after the run, want 0", v)
	}
}
