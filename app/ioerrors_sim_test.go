package app

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkload/bulkload/leadsim"
)

// A run that ends with its input or its results file failing under it: a
// gzip stream cut off mid-stream drains the calls in flight; a results
// file that cannot be compacted stays valid for --resume. Moved from
// cmd/bulkload's stop_test.go (argv turned into options).

// TestUploadCorruptInputDrains: a .gz cut off mid-stream stops the reading
// only: the calls in flight finish and are recorded, as on SIGTERM, and the
// run then reports the input error. (A regular file is read through before
// the first call, so its error stops the run with nothing sent; a stream
// with --max-invalid 100% is sent as it comes, which is the case here.)
func TestUploadCorruptInputDrains(t *testing.T) {
	t.Parallel()
	s := startSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 150 * time.Millisecond}})
	dir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join(samples, "leads.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	results := filepath.Join(dir, "results.csv")
	// --ledger off: with a ledger, the rows read go to the workers once
	// claimed (a transaction), and the error, a few rows later, may stop
	// the taking of rows before any call is in flight: nothing to drain.
	res := runUpload(t, s, fromStdin(results, func(j *UploadJob) {
		j.Checks.MaxInvalid = "100%"
		j.Up.Concurrency = Concurrency{N: 4}
		j.Ledger.Location = "off"
	}), runOpts{stdin: gz.Bytes()[:gz.Len()*2/3]})
	if res.code == ExitOK || res.code == ExitInterrupted {
		t.Fatalf("exit = %d, want the input error's\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "rows read") {
		t.Errorf("no summary after the input error:\n%s", res.stderr)
	}
	rows := readResults(t, results)
	if len(rows) == 0 {
		t.Fatalf("no row recorded: the test tests nothing\n%s", res.stderr)
	}
	for _, r := range rows {
		switch r["status"] {
		case "processed", "submitted", "invalid":
		default:
			t.Errorf("row %s ended %s (%s): want the calls in flight finished, not cut off", r["row"], r["status"], r["error"])
		}
	}
}

// TestUploadCompactionFails: every row is uploaded but the results file
// cannot be compacted (its directory vanished under it: the compacted copy
// has nowhere to go). The run exits 1, not 2, says the journal is intact
// and valid for --resume, and never claims "results written"; --resume then
// finishes the job.
func TestUploadCompactionFails(t *testing.T) {
	t.Parallel()
	s := startSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 30 * time.Millisecond}})
	base := t.TempDir()
	dir := filepath.Join(base, "out")
	moved := filepath.Join(base, "moved")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results.csv")
	input := filepath.Join(samples, "leads.csv")
	job := func(resume bool) *UploadJob {
		return uploadJob(input, results, func(j *UploadJob) {
			j.Up.Concurrency = Concurrency{N: 1}
			j.Up.Resume = resume
		})
	}
	var res runResult
	var wg sync.WaitGroup
	wg.Go(func() { res = runUpload(t, s, job(false)) })
	waitForLines(t, results, 3, 60*time.Second)
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if res.code != ExitRowsFailed {
		t.Fatalf("exit = %d, want %d\n%s", res.code, ExitRowsFailed, res.stderr)
	}
	if !strings.Contains(res.stderr, "could not be compacted") || !strings.Contains(res.stderr, "valid for --resume") {
		t.Errorf("stderr does not say the journal is intact and valid for --resume:\n%s", res.stderr)
	}
	if strings.Contains(res.stderr, "results written") {
		t.Errorf("\"results written\" logged although they were not:\n%s", res.stderr)
	}
	if err := os.Rename(moved, dir); err != nil {
		t.Fatal(err)
	}
	if res := runUpload(t, s, job(true)); res.code != ExitOK {
		t.Fatalf("--resume: exit = %d, want 0\n%s", res.code, res.stderr)
	}
	finalByRow(t, results, 50)
}
