package main

import (
	"bytes"
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

// TestValidateNeverReplacesUploadOutcomes is the repro: validate
// after upload, both with their default outputs, leaves the upload's
// journal alone; validate --results on it is refused without --overwrite,
// and so is any other output pointed at it.
func TestValidateNeverReplacesUploadOutcomes(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := copySample(t, dir, "leads.csv")
	results := filepath.Join(dir, "leads.results.csv")
	up := append(append([]string{"upload"}, s.args()...), "--rate", "0", "--progress", "off", input)
	if res := runCLI(t, secretEnv(), up...); res.code != app.ExitOK {
		t.Fatalf("upload exit = %d\n%s", res.code, res.stderr)
	}
	journal, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	unchanged := func(what string) {
		t.Helper()
		if b, _ := os.ReadFile(results); !bytes.Equal(b, journal) {
			t.Fatalf("%s changed the upload's results file", what)
		}
	}

	if res := runCLI(t, nil, "validate", input); res.code != app.ExitOK {
		t.Fatalf("validate exit = %d\n%s", res.code, res.stderr)
	}
	unchanged("validate with its default output")
	finalByRowStatus(t, filepath.Join(dir, "leads.validation.csv"), 50, "valid")

	for _, args := range [][]string{
		{"validate", "--results", results, input},
		{"validate", "--rejects", results, input},
		{"validate", "--summary-json", results, input},
		append(append([]string{"upload"}, s.args()...), "--summary-json", results, "--results", filepath.Join(dir, "other.csv"), input),
	} {
		res := runCLI(t, secretEnv(), args...)
		if res.code != app.ExitUsage || !strings.Contains(res.stderr, "holds the outcomes of an upload") || !strings.Contains(res.stderr, "--overwrite") {
			t.Errorf("%q: exit %d, want %d saying it holds an upload's outcomes\n%s", args, res.code, app.ExitUsage, res.stderr)
		}
		unchanged(strings.Join(args, " "))
	}
	if got := s.Stats().LeadsCreated; got != 50 {
		t.Errorf("leads created = %d, want the first upload's 50 only", got)
	}

	res := runCLI(t, nil, "validate", "--overwrite", "--results", results, input)
	if res.code != app.ExitOK {
		t.Fatalf("validate --overwrite exit = %d\n%s", res.code, res.stderr)
	}
	finalByRowStatus(t, results, 50, "valid")
}

// TestOutputsCheckedBeforeFirstCall: an output that cannot be written
// stops the run before any lead is sent, with exit 2 naming the flag.
func TestOutputsCheckedBeforeFirstCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	input := filepath.Join(samples, "leads.csv")
	notADir := filepath.Join(dir, "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		flags []string
		want  string
	}{
		{"summary-json in a missing directory", []string{"--summary-json", filepath.Join(dir, "nodir", "s.json")}, "--summary-json"},
		{"rejects in a missing directory", []string{"--rejects", filepath.Join(dir, "nodir", "r.csv")}, "--rejects"},
		{"results under a file", []string{"--results", filepath.Join(notADir, "r.csv")}, "--results"},
		{"summary-json is a directory", []string{"--summary-json", dir}, "--summary-json"},
		{"two outputs on one file", []string{"--rejects", filepath.Join(dir, "same.csv"), "--summary-json", filepath.Join(dir, "same.csv")}, "both name"},
		{"results over the input", []string{"--results", input}, "is the input file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startTestSim(t, leadsim.Options{})
			args := append([]string{"upload"}, s.args()...)
			args = append(args, "--rate", "0", "--progress", "off")
			if !containsFlag(tc.flags, "--results") {
				args = append(args, "--results", filepath.Join(t.TempDir(), "results.csv"))
			}
			args = append(append(args, tc.flags...), input)
			res := runCLI(t, secretEnv(), args...)
			if res.code != app.ExitUsage || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("exit %d, want %d naming %s\n%s", res.code, app.ExitUsage, tc.want, res.stderr)
			}
			if n := len(s.Stats().CreateCalls); n != 0 {
				t.Errorf("%d leads sent before the output was found unwritable", n)
			}
			// validate checks the same outputs, the same way.
			vargs := append([]string{"validate"}, tc.flags...)
			if !containsFlag(tc.flags, "--results") {
				vargs = append(vargs, "--results", filepath.Join(t.TempDir(), "v.csv"))
			}
			if res := runCLI(t, nil, append(vargs, input)...); res.code != app.ExitUsage || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("validate: exit %d, want %d naming %s\n%s", res.code, app.ExitUsage, tc.want, res.stderr)
			}
		})
	}
}

func containsFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag {
			return true
		}
	}
	return false
}
