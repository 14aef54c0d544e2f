package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/report"
	"github.com/bulkload/bulkload/submitter"
)

// uploadAuto uploads n clean synthetic rows to s with --concurrency auto
// (the default) and --rate 0, and returns the run, its final rows and its
// summary JSON.
func uploadAuto(t *testing.T, s *sim, n int, extra ...string) (cliResult, map[int]resultRow, report.Summary) {
	t.Helper()
	dir := t.TempDir()
	input := filepath.Join(dir, "leads.csv")
	opts := synth.Defaults()
	opts.Invalid = 0
	if err := synth.WriteCSVFile(input, opts, n); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results.csv")
	summary := filepath.Join(dir, "summary.json")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--summary-json", summary, "--rate", "0", "--progress", "off")
	args = append(args, extra...)
	res := runCLI(t, secretEnv(), append(args, input)...)
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatalf("summary JSON: %v\nstderr:\n%s", err, res.stderr)
	}
	var sum report.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatalf("summary JSON: %v", err)
	}
	return res, finalByRow(t, results, n), sum
}

// TestConcurrencyAutoFindsCapacity: --concurrency auto, the default,
// against simulators far from its start of 8 calls in flight. Against one
// that serves 48 at once the limit ends above the start; against one that
// serves 2 at once (and queues 4 more, shedding the rest with 503) it ends
// below its start, at no more than the 6 the service holds without
// shedding, and no row runs out of attempts. The summary says what bound the
// run. Nothing is timed: the figures are the limits reached.
func TestConcurrencyAutoFindsCapacity(t *testing.T) {
	tests := []struct {
		name       string
		opts       leadsim.Options
		rows       int
		limitIn    [2]int
		wantKind   string
		wantInText string
	}{
		{"far above the start", leadsim.Options{Capacity: 48, QueueLimit: 48, CreateLatency: leadsim.Latency{Fixed: 40 * time.Millisecond}, SubmitLatency: leadsim.Latency{Fixed: 40 * time.Millisecond}},
			1500, [2]int{submitter.DefaultStartConcurrency + 1, 96}, report.BoundCapacity, "in flight"},
		{"small capacity", leadsim.Options{Capacity: 2, QueueLimit: 4, CreateLatency: leadsim.Latency{Fixed: 20 * time.Millisecond}, SubmitLatency: leadsim.Latency{Fixed: 20 * time.Millisecond}},
			// At most Capacity+QueueLimit: what the service holds without
			// shedding, below the start of 8. How close to 2 it settles
			// depends on the host's load (a busy host looks like queueing:
			// 5 under go test -race with CI on 2 CPUs).
			200, [2]int{1, 2 + 4}, report.BoundCapacity, "the service's capacity"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := startTestSim(t, tc.opts)
			res, rows, sum := uploadAuto(t, s, tc.rows)
			if res.code != exitOK {
				t.Fatalf("upload exit = %d, want %d\nstderr:\n%s", res.code, exitOK, res.stderr)
			}
			for row, r := range rows {
				if r["status"] != "processed" && r["status"] != "submitted" {
					t.Errorf("row %d status = %q (%s), want processed or submitted", row, r["status"], r["error"])
				}
				if a, _ := strconv.Atoi(r["attempts"]); a >= 5 {
					t.Errorf("row %d took %d attempts, want fewer than --max-attempts 5", row, a)
				}
			}
			c := sum.Concurrency
			if c == nil || !c.Auto || c.Limit < tc.limitIn[0] || c.Limit > tc.limitIn[1] {
				t.Errorf("summary concurrency = %+v, want auto with a limit in %v", c, tc.limitIn)
			}
			if b := sum.BoundBy; b == nil || b.Kind != tc.wantKind || !strings.Contains(b.Text, tc.wantInText) {
				t.Errorf("summary boundBy = %+v, want kind %s saying %q", b, tc.wantKind, tc.wantInText)
			}
			if sum.Settings["concurrency"] != "auto" || sum.Settings["maxConcurrency"] != float64(submitter.DefaultMaxConcurrency) {
				t.Errorf("settings concurrency %v, maxConcurrency %v; want auto, %d", sum.Settings["concurrency"], sum.Settings["maxConcurrency"], submitter.DefaultMaxConcurrency)
			}
			if !strings.Contains(res.stderr, "bound by") || !strings.Contains(res.stderr, "concurrency      auto") {
				t.Errorf("summary on stderr lacks the concurrency and bound-by lines:\n%s", res.stderr)
			}
			st := s.Stats().Capacity
			t.Logf("limit %d (peak %d), %s; simulator: peak %d in flight, %d shed, mean queue wait %.1f ms", c.Limit, c.PeakInFlight, sum.BoundBy.Text, st.PeakInFlight, st.Shed, st.MeanQueueWaitMs)
		})
	}
}

// TestConcurrencyFixedBound: a fixed --concurrency that is the tightest
// limit is named as what bound the run, and never exceeded.
func TestConcurrencyFixedBound(t *testing.T) {
	s := startTestSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 10 * time.Millisecond}, SubmitLatency: leadsim.Latency{Fixed: 10 * time.Millisecond}})
	res, _, sum := uploadAuto(t, s, 200, "--concurrency", "2")
	if res.code != exitOK {
		t.Fatalf("upload exit = %d\nstderr:\n%s", res.code, res.stderr)
	}
	if c := sum.Concurrency; c == nil || c.Auto || c.Limit != 2 || c.PeakInFlight > 2 {
		t.Errorf("summary concurrency = %+v, want fixed 2, never more in flight", c)
	}
	if b := sum.BoundBy; b == nil || b.Kind != report.BoundConcurrency || !strings.Contains(b.Text, "--concurrency 2") {
		t.Errorf("summary boundBy = %+v, want --concurrency 2", b)
	}
	if peak := s.Stats().Capacity.PeakInFlight; peak > 2 {
		t.Errorf("simulator saw %d in flight at once, want at most 2", peak)
	}
}

// TestBoundBy: what bound a run, from the waits for a place and for the
// rate and how much of the rate the calls used.
func TestBoundBy(t *testing.T) {
	auto := &uploadOptions{concurrency: concurrencyFlag{auto: true}, maxConcurrency: 256, rate: rateFlag{auto: true}}
	conc := func(full float64, limit, max int, latencyCuts int) submitter.ConcurrencySnapshot {
		return submitter.ConcurrencySnapshot{Auto: true, Limit: limit, Max: max, LatencyCuts: latencyCuts, RosePast: limit + 4,
			Waited: time.Duration(full * float64(100*time.Second)), Since: 100 * time.Second}
	}
	tests := []struct {
		name string
		st   submitter.Stats
		up   *uploadOptions
		want string
	}{
		{"capacity", submitter.Stats{Attempts: 5000, Concurrency: conc(0.9, 52, 256, 3), RateWaited: 95 * time.Second, RateAllowed: 200}, auto, report.BoundCapacity},
		{"max-concurrency", submitter.Stats{Attempts: 5000, Concurrency: conc(0.9, 256, 256, 0)}, auto, report.BoundMaxConcurrency},
		{"concurrency climbing", submitter.Stats{Attempts: 5000, Concurrency: conc(0.9, 64, 256, 0)}, auto, report.BoundConcurrencyClimb},
		{"rate limit", submitter.Stats{Attempts: 14000, Concurrency: conc(0.1, 64, 256, 0), RateWaited: 90 * time.Second, RateAllowed: 150, LimitFound: true, SettledRate: 145}, auto, report.BoundRateLimit},
		{"rate climbing", submitter.Stats{Attempts: 14000, Concurrency: conc(0.1, 64, 256, 0), RateWaited: 90 * time.Second, RateAllowed: 150}, auto, report.BoundRateClimb},
		{"waits for the rate it does not use", submitter.Stats{Attempts: 5000, Concurrency: conc(0.2, 64, 256, 0), RateWaited: 90 * time.Second, RateAllowed: 150}, auto, report.BoundInput},
		{"input", submitter.Stats{Attempts: 500, Concurrency: conc(0.1, 64, 256, 0)}, auto, report.BoundInput},
		{"fixed concurrency", submitter.Stats{Attempts: 500, Concurrency: submitter.ConcurrencySnapshot{Limit: 8, Max: 8, Waited: 80 * time.Second, Since: 100 * time.Second}},
			&uploadOptions{concurrency: concurrencyFlag{n: 8}, rate: rateFlag{auto: true}}, report.BoundConcurrency},
		{"fixed rate", submitter.Stats{Attempts: 2000, Concurrency: conc(0.1, 64, 256, 0), RateWaited: 90 * time.Second, RateAllowed: 20},
			&uploadOptions{concurrency: concurrencyFlag{auto: true}, rate: rateFlag{perSecond: 20}}, report.BoundRate},
		{"max rate", submitter.Stats{Attempts: 10000, Concurrency: conc(0.1, 64, 256, 0), RateWaited: 90 * time.Second, RateAllowed: 100, CurrentRate: 100},
			&uploadOptions{concurrency: concurrencyFlag{auto: true}, rate: rateFlag{auto: true}, maxRate: 100}, report.BoundMaxRate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := boundBy(tc.st, tc.up)
			if b == nil || b.Kind != tc.want {
				t.Fatalf("boundBy = %+v, want kind %s", b, tc.want)
			}
			if strings.Contains(b.Text, "no limit found") {
				t.Errorf("text %q says no limit was found", b.Text)
			}
		})
	}
}
