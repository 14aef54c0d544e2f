package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

// copySample copies a sample file into dir and returns its path.
func copySample(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(samples, name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSecondRunOnResultsFileRefused starts an upload as a process, then a
// second upload and a validate on the same results file while it runs: both
// exit 2 at once, naming the process that holds the file, and send nothing.
// After the first is killed, the OS has released its lock and --resume
// goes on.
func TestSecondRunOnResultsFileRefused(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 60 * time.Millisecond}})
	results := filepath.Join(t.TempDir(), "results.csv")
	input := filepath.Join(samples, "leads.csv")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--concurrency", "1", "--rate", "0", "--progress", "off")
	cmd, out := subprocess(t, slices.Concat(args, []string{input})...)
	pid := strconv.Itoa(cmd.Process.Pid)
	waitForLines(t, results, 2, 30*time.Second)

	for _, second := range [][]string{
		slices.Concat(args, []string{input}),
		slices.Concat(args, []string{"--resume", input}),
		{"validate", "--results", results, input},
	} {
		res := runCLI(t, secretEnv(), second...)
		if res.code != app.ExitUsage || !strings.Contains(res.stderr, "process "+pid) {
			t.Errorf("%s while another run holds %s: exit %d, want %d naming process %s\n%s", second[0], results, res.code, app.ExitUsage, pid, res.stderr)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for id, n := range s.Stats().CreateCalls {
		if n > 1 {
			t.Errorf("leadId %q created %d times while one run held the results file", id, n)
		}
	}

	// The kill left the lock file; the OS released the lock.
	res := runCLI(t, secretEnv(), slices.Concat(args, []string{"--resume", input})...)
	if res.code != app.ExitOK {
		t.Fatalf("--resume after the holder was killed: exit %d, want 0\n%s\n%s", res.code, res.stderr, out)
	}
	finalByRow(t, results, 50)
	if _, err := os.Stat(results + ".lock"); err == nil {
		t.Errorf("the lock file is left after a run that ended normally")
	}
}
