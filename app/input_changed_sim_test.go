package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/leadsim"
)

// Moved from cmd/bulkload's input_changed_test.go (argv turned into
// options): the send pass's check of the bytes the check pass hashed is
// app's.

// TestUploadInputChangedDuringRun is issue 18 item 5: the input is
// rewritten in place with another export, or truncated, while the upload
// sends it. The send pass must notice that it no longer reads the bytes
// the check pass hashed, stop taking rows, drain, and exit non-zero naming
// the input; no row of the other export is sent.
func TestUploadInputChangedDuringRun(t *testing.T) {
	t.Parallel()
	const n = 6000
	opts := func(prefix string, seed int64) synth.Options {
		return synth.Options{Seed: seed, Style: synth.Defaults().Style, LeadIDPrefix: prefix, NoSSN: 0.2}
	}
	tests := []struct {
		name   string
		change func(t *testing.T, input, other string)
		want   string
	}{
		{"rewritten with another export", func(t *testing.T, input, other string) {
			b, err := os.ReadFile(other)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(input, b, 0o600); err != nil { // same file, new bytes
				t.Fatal(err)
			}
		}, "differ from what the check"},
		{"truncated", func(t *testing.T, input, _ string) {
			st, err := os.Stat(input)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(input, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, "truncated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a simulator and a folder of its own
			s := startSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 5 * time.Millisecond}})
			dir := t.TempDir()
			input := filepath.Join(dir, "export.csv")
			other := filepath.Join(dir, "other.csv")
			if err := synth.WriteCSVFile(input, opts("A-", 1), n); err != nil {
				t.Fatal(err)
			}
			if err := synth.WriteCSVFile(other, opts("B-", 2), n); err != nil {
				t.Fatal(err)
			}
			results := filepath.Join(dir, "results.csv")
			done := make(chan runResult, 1)
			go func() {
				done <- runUpload(t, s, uploadJob(input, results, func(j *UploadJob) { j.Up.Concurrency = Concurrency{N: 8} }))
			}()
			waitForLines(t, results, 20, 60*time.Second)
			tc.change(t, input, other)
			res := <-done

			if res.code == ExitOK {
				t.Errorf("exit = 0, want non-zero: the input changed during the run\n%s", res.stderr)
			}
			if !strings.Contains(res.stderr, input) || !strings.Contains(res.stderr, "changed during the run") || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("stderr does not say that %s changed during the run (%q):\n%s", input, tc.want, res.stderr)
			}
			last, _ := journalRows(t, results)
			if len(last) == 0 || len(last) >= n {
				t.Errorf("results hold %d rows, want some but not all %d: the run must stop taking rows", len(last), n)
			}
			for row, r := range last {
				if !strings.HasPrefix(r["leadId"], "A-") {
					t.Errorf("row %d has leadId %q: a row of the other export was sent", row, r["leadId"])
				}
			}
		})
	}
}
