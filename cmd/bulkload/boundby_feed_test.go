package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/summary"
)

// TestBoundByASlowFeed: standard input fed a row at a time, with the same
// share of 503s and their Retry-After: the reader waited for the input
// most of the run, the rows' retries cost it nothing more than a worker,
// and "bound by" says the input, though the errors' share of the rows'
// time is past a quarter (checked, so that the input's wait is what
// decided). --concurrency 8: under auto, on a loaded machine, the limit
// may be cut for latency (once to 1, "capacity"), which is not what this
// test is about.
func TestBoundByASlowFeed(t *testing.T) {
	t.Parallel()
	// A Retry-After of 0.4 s, long beside a call even under -race on a
	// loaded host (at 0.1 s, calls of tens of ms there brought the
	// errors' share to 0.20), and a feed slower still, so that the
	// reader's wait stays most of the run's time.
	s := startTestSim(t, leadsim.Options{Fail503: 0.3, Fail503RetryAfter: "0.4"})
	dir := t.TempDir()
	input := filepath.Join(dir, "leads.csv")
	opts := synth.Defaults()
	opts.Invalid = 0
	const rows = 15
	if err := synth.WriteCSVFile(input, opts, rows); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	pr, pw := io.Pipe()
	go func() {
		// A feed that trickles: a row every 250 ms (the header and
		// the first row at once).
		for i, l := range lines {
			if i > 1 {
				time.Sleep(250 * time.Millisecond)
			}
			if _, err := io.WriteString(pw, l); err != nil {
				return
			}
		}
		pw.Close()
	}()
	sumPath := filepath.Join(dir, "summary.json")
	var out, errb bytes.Buffer
	env := secretEnv()
	env["XDG_STATE_HOME"] = t.TempDir()
	e := &app.Env{Getenv: func(k string) string { return env[k] }, Stdin: pr, Stdout: &out, Stderr: &errb, Now: time.Now, Deps: testDeps(t)}
	// --max-invalid 100%: no rows read ahead before the first call, so
	// that every row comes as the feed gives it.
	code := runEnv(context.Background(), e, slices.Concat([]string{"upload", "--format", "csv"}, s.args(),
		[]string{"--max-invalid", "100%", "--concurrency", "8", "--max-attempts", "20", "--progress", "off", "--results", filepath.Join(dir, "results.csv"), "--summary-json", sumPath, "-"}))
	if code != app.ExitOK {
		t.Fatalf("upload exit = %d\nstderr:\n%s", code, errb.String())
	}
	var sum summary.Summary
	b, err := os.ReadFile(sumPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Retries == 0 || sum.BoundBy == nil || sum.BoundBy.ErrorShare < 0.25 {
		t.Fatalf("retries %d, boundBy %+v: want retries whose waits took a quarter of the rows' time or more", sum.Retries, sum.BoundBy)
	}
	if sum.BoundBy.Kind != summary.BoundInput || sum.BoundBy.InputWaitShare < 0.5 {
		t.Errorf("boundBy = %+v, want the input (the reader waited for it most of the run)", sum.BoundBy)
	}
}
