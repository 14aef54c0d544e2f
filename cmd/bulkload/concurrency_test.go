package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/pace"
	"github.com/bulkload/bulkload/summary"
)

// uploadAuto uploads n clean synthetic rows to s with --concurrency auto
// (the default) and --rate 0, and returns the run, its final rows and its
// summary JSON.
func uploadAuto(t *testing.T, s *sim, n int, extra ...string) (cliResult, map[int]resultRow, summary.Summary) {
	t.Helper()
	dir := t.TempDir()
	input := filepath.Join(dir, "leads.csv")
	opts := synth.Defaults()
	opts.Invalid = 0
	if err := synth.WriteCSVFile(input, opts, n); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results.csv")
	summaryPath := filepath.Join(dir, "summary.json")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--summary-json", summaryPath, "--rate", "0", "--progress", "off")
	args = append(args, extra...)
	res := runCLI(t, secretEnv(), append(args, input)...)
	b, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatalf("summary JSON: %v\nstderr:\n%s", err, res.stderr)
	}
	var sum summary.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatalf("summary JSON: %v", err)
	}
	return res, finalByRow(t, results, n), sum
}

// TestConcurrencyAutoFindsCapacity: --concurrency auto, the default,
// runs end to end against simulators far from its start of 8 calls in
// flight: one that serves 48 at once, and one that serves 2 at once and
// queues 4 more, shedding the rest with 503. Every row is sent, none runs
// out of attempts against the shedding one, and the summary says auto and
// what bound the run, never more in flight than its cap. The limits it
// reaches are not asserted here: against a real simulator they depend on
// the host's load (a busy client's own delays look like a queue: the K=48
// run ended at 2 to 8 under go test -race on 2 loaded CPUs, the K=2 one at
// 7), so the test failed by chance. They are asserted where time is
// simulated and the figures are the rule's alone: TestConcurrencyModel
// (a capacity far above the start, K=200, and K=2 behind a short queue)
// and TestConcurrencyStartsSettled in package pace.
func TestConcurrencyAutoFindsCapacity(t *testing.T) {
	// Not parallel: the limit found comes from the calls' latency, which
	// other tests' CPU would lengthen.
	tests := []struct {
		name string
		opts leadsim.Options
		rows int
	}{
		{"far above the start", leadsim.Options{Capacity: 48, QueueLimit: 48, CreateLatency: leadsim.Latency{Fixed: 40 * time.Millisecond}, SubmitLatency: leadsim.Latency{Fixed: 40 * time.Millisecond}}, 400},
		{"small capacity", leadsim.Options{Capacity: 2, QueueLimit: 4, CreateLatency: leadsim.Latency{Fixed: 20 * time.Millisecond}, SubmitLatency: leadsim.Latency{Fixed: 20 * time.Millisecond}}, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startTestSim(t, tc.opts)
			res, rows, sum := uploadAuto(t, s, tc.rows)
			if res.code != app.ExitOK {
				t.Fatalf("upload exit = %d, want %d\nstderr:\n%s", res.code, app.ExitOK, res.stderr)
			}
			for row, r := range rows {
				if r["status"] != "processed" && r["status"] != "submitted" {
					t.Errorf("row %d status = %q (%s), want processed or submitted", row, r["status"], r["error"])
				}
				if a, _ := strconv.Atoi(r["attempts"]); a >= 5 {
					t.Errorf("row %d took %d attempts, want fewer than --max-attempts 5", row, a)
				}
			}
			checkAutoSummary(t, res, sum)
		})
	}
}

// checkAutoSummary checks what holds of a --concurrency auto run whatever
// the host's load: the summary says auto, with the default cap, a limit
// and a peak in flight within it, and names what bound the run, in the
// JSON and on stderr.
func checkAutoSummary(t *testing.T, res cliResult, sum summary.Summary) {
	t.Helper()
	c := sum.Concurrency
	if c == nil || !c.Auto || c.Max != pace.DefaultMaxConcurrency || c.Limit < 1 || c.Limit > c.Max || c.PeakInFlight < 1 || c.PeakInFlight > c.Max {
		t.Errorf("summary concurrency = %+v, want auto, cap %d, a limit and a peak in flight within it", c, pace.DefaultMaxConcurrency)
		return
	}
	if b := sum.BoundBy; b == nil || b.Kind == "" || b.Text == "" {
		t.Errorf("summary boundBy = %+v, want what bound the run", b)
	}
	if sum.Settings["concurrency"] != "auto" || sum.Settings["maxConcurrency"] != float64(pace.DefaultMaxConcurrency) {
		t.Errorf("settings concurrency %v, maxConcurrency %v; want auto, %d", sum.Settings["concurrency"], sum.Settings["maxConcurrency"], pace.DefaultMaxConcurrency)
	}
	if !strings.Contains(res.stderr, "bound by") || !strings.Contains(res.stderr, "concurrency      auto") {
		t.Errorf("summary on stderr lacks the concurrency and bound-by lines:\n%s", res.stderr)
	}
	t.Logf("limit %d (peak %d), %d latency and %d back-pressure cuts; %s", c.Limit, c.PeakInFlight, c.LatencyCuts, c.BackPressureCuts, sum.BoundBy.Text)
}

// TestConcurrencyFixedBound: a fixed --concurrency that is the tightest
// limit is named as what bound the run, and never exceeded.
func TestConcurrencyFixedBound(t *testing.T) {
	// Not parallel: what bound the run comes from the time calls waited.
	s := startTestSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 10 * time.Millisecond}, SubmitLatency: leadsim.Latency{Fixed: 10 * time.Millisecond}})
	res, _, sum := uploadAuto(t, s, 200, "--concurrency", "2")
	if res.code != app.ExitOK {
		t.Fatalf("upload exit = %d\nstderr:\n%s", res.code, res.stderr)
	}
	if c := sum.Concurrency; c == nil || c.Auto || c.Limit != 2 || c.PeakInFlight > 2 {
		t.Errorf("summary concurrency = %+v, want fixed 2, never more in flight", c)
	}
	if b := sum.BoundBy; b == nil || b.Kind != summary.BoundConcurrency || !strings.Contains(b.Text, "--concurrency 2") {
		t.Errorf("summary boundBy = %+v, want --concurrency 2", b)
	}
	if peak := s.Stats().Capacity.PeakInFlight; peak > 2 {
		t.Errorf("simulator saw %d in flight at once, want at most 2", peak)
	}
}

// TestConcurrencyAutoRandomShapes: --concurrency auto end to end against
// services whose slow calls and 503s do not depend on the load (issue 27):
// a slow credit bureau behind a random fifth of the createLeads, and one
// bad backend answering a fifth of the calls 503. Every row is sent and
// the summary says auto and what bound the run. That neither shape
// collapses the limit (it used to end at 5-17 with the slow calls, and at
// 1 with the 503s) is asserted where time is simulated:
// TestConcurrencyModelShapes in package pace (90% of the best fixed
// limit's throughput, and no limit under the start once climbed). Against
// a real simulator the limits depend on the host's load as much as on the
// shape (a busy host's own delays look like a queue: the 503 case ended
// at 3 after 9 latency cuts under go test on 2 loaded CPUs), so they are
// not asserted here.
func TestConcurrencyAutoRandomShapes(t *testing.T) {
	// Parallel, and its shapes side by side: what it asserts (every row
	// sent, the summary's fields) holds whatever the host's load; the
	// limits found, which do not, are asserted in package pace.
	t.Parallel()
	tests := []struct {
		name  string
		opts  leadsim.Options
		extra []string
	}{
		{"slow calls at random", leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 5 * time.Millisecond,
			Dist: leadsim.LatencyDist{Kind: leadsim.DistBimodal, Slow: 500 * time.Millisecond, Share: 0.2}}, Seed: 3}, nil},
		{"a share of 503s", leadsim.Options{Fail503: 0.2, CreateLatency: leadsim.Latency{Fixed: 50 * time.Millisecond}, Seed: 4},
			[]string{"--max-attempts", "20"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startTestSim(t, tc.opts)
			res, rows, sum := uploadAuto(t, s, 400, tc.extra...)
			if res.code != app.ExitOK {
				t.Fatalf("upload exit = %d, want %d\nstderr:\n%s", res.code, app.ExitOK, res.stderr)
			}
			for row, r := range rows {
				if r["status"] != "processed" && r["status"] != "submitted" {
					t.Errorf("row %d status = %q (%s), want processed or submitted", row, r["status"], r["error"])
				}
			}
			checkAutoSummary(t, res, sum)
		})
	}
}
