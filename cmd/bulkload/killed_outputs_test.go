package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/leadsim"
)

// growing returns the size of path, or of the largest temporary file of it
// (.BASE.tmp-*), whichever is there: how far the output got.
func growing(path string) int64 {
	var n int64
	names, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*"))
	for _, p := range append(names, path) {
		if st, err := os.Stat(p); err == nil {
			n = max(n, st.Size())
		}
	}
	return n
}

// killWhen starts bulkload as a process with args and kills it with
// SIGKILL once out has grown to size bytes (at its name or a temporary
// one).
func killWhen(t *testing.T, out string, size int64, args ...string) {
	t.Helper()
	cmd, stderr := subprocess(t, args...)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(60 * time.Second)
	for growing(out) < size {
		select {
		case err := <-done:
			t.Fatalf("bulkload ended before %s reached %d bytes (%v):\n%s", out, size, err, stderr)
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("%s did not reach %d bytes within a minute:\n%s", out, size, stderr)
		case <-time.After(2 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
}

// wholeCSV fails unless the file at path, when there, is a CSV file whose
// every record has the header's fields and ends with a line end.
func wholeCSV(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("%s ends inside a record: %q", filepath.Base(path), b[max(0, len(b)-60):])
	}
	if _, err := csv.NewReader(bytes.NewReader(b)).ReadAll(); err != nil {
		t.Errorf("%s after kill -9 is not whole CSV: %v", filepath.Base(path), err)
	}
}

// TestKilledRunLeavesWholeOutputs kills upload (SIGKILL) while it sends,
// with the rejects file part written, and validate while it writes its
// results file: no output is left cut inside a record at its name (the
// rejects file and validate's results file are renamed into place whole;
// an upload's results file is a journal whose half-written last line a
// resumed run cuts off). The run again with --resume writes the whole
// rejects file and removes the temporary file the killed run left.
func TestKilledRunLeavesWholeOutputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	input := filepath.Join(dir, "in.csv")
	opts := synth.Defaults()
	opts.Invalid = 0.5
	if err := synth.WriteCSVFile(input, opts, 3000); err != nil {
		t.Fatal(err)
	}
	s := startTestSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 20 * time.Millisecond}})
	results, rejects := filepath.Join(dir, "r.csv"), filepath.Join(dir, "rejects.csv")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--rejects", rejects, "--concurrency", "2", "--rate", "0", "--progress", "off", "--max-invalid", "100%")
	killWhen(t, rejects, 20_000, append(args, input)...)
	wholeCSV(t, rejects)

	// The resume may send at any pace: 16 calls in flight (2 took 15 s
	// of the test's 17 for the 1,500 valid rows at 20 ms a call).
	args[slices.Index(args, "--concurrency")+1] = "16"
	res := runCLI(t, secretEnv(), append(args, "--resume", input)...)
	if res.code != app.ExitOK {
		t.Fatalf("--resume exit = %d\n%s", res.code, res.stderr)
	}
	recs := readCSVFile(t, rejects)
	invalid := 0
	for _, r := range readResults(t, results) {
		if r["status"] == "invalid" {
			invalid++
		}
	}
	if len(recs)-1 != invalid || invalid == 0 {
		t.Errorf("rejects file holds %d rows after the resume, the results file %d invalid ones", len(recs)-1, invalid)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left after the resume: %v", left)
	}

	// validate writes its results file row by row: killed, it leaves
	// none cut at its name.
	big := filepath.Join(dir, "big.csv")
	opts.Invalid = 0.02
	if err := synth.WriteCSVFile(big, opts, 60_000); err != nil {
		t.Fatal(err)
	}
	vres := filepath.Join(dir, "v.csv")
	killWhen(t, vres, 300_000, "validate", "--results", vres, "--rejects", filepath.Join(dir, "vrej.csv"), big)
	wholeCSV(t, vres)
	wholeCSV(t, filepath.Join(dir, "vrej.csv"))
}
