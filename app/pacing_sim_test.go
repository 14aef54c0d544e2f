package app

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/pace"
	"github.com/bulkload/bulkload/summary"
)

// The pacing's decisions in an upload against a simulator: where --rate
// auto settles, what a Retry-After delays, what --concurrency auto finds
// and what "bound by" names. Moved from cmd/bulkload (its argv became
// options): the decisions are app's, not the command line's.

// TestUploadRateAutoSettles: against a service that allows 15 calls/s (below
// Auto's start), --rate auto comes down under the limit, every
// row succeeds, and the summary says where it settled.
func TestUploadRateAutoSettles(t *testing.T) {
	// Parallel: the service's limit (15 calls/s, a bucket of one) is far
	// below what 4 calls in flight send even on a loaded host, whose
	// second call within 67 ms is refused; the simulator and its limit
	// are this test's own. (It was serial, "on a CPU of its own": 10 s of
	// the serial part, while it settles at 4-6 calls/s against 15.)
	t.Parallel()
	s := startSim(t, leadsim.Options{RateLimit: 15, RateBurst: 1, RateLimitRetryAfter: "0.05"})
	res, rows, summaryPath := uploadSample(t, s, func(j *UploadJob) {
		j.Up.Rate = Rate{Auto: true}
		j.Up.Concurrency = Concurrency{N: 4}
		j.Up.MaxAttempts = 2
	})
	if res.code != ExitOK {
		t.Fatalf("upload exit = %d, want %d\nstderr:\n%s", res.code, ExitOK, res.stderr)
	}
	for row, r := range rows {
		if r["status"] != "processed" && r["status"] != "submitted" {
			t.Errorf("row %d status = %q (%s), want processed or submitted", row, r["status"], r["error"])
		}
	}
	b, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rate     *summary.Rate  `json:"rate"`
		Settings map[string]any `json:"settings"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("summary JSON: %v", err)
	}
	if r := got.Rate; r == nil || !r.Auto || !r.LimitFound || r.CallsPerSecond > 15 || r.CallsPerSecond <= 0 || r.Status429 == 0 {
		t.Errorf("summary JSON rate = %+v, want auto, a limit found, settled in (0, 15] and some 429s", r)
	}
	if got.Settings["rate"] != "auto" {
		t.Errorf("summary JSON settings.rate = %v, want auto", got.Settings["rate"])
	}
	if !strings.Contains(res.stderr, "settled at ") || !strings.Contains(res.stderr, "answered 429 (pin it with --rate ") {
		t.Errorf("summary on stderr lacks the settled rate:\n%s", res.stderr)
	}
}

// TestUploadRetryAfterDelaysItsRowOnly: a tenth of the createLeads answered
// 503 with Retry-After: 2 (one bad backend) delay their own rows, not every
// row: the calls seldom wait for the rate (--rate auto sets none: the
// service shows no limit), every row is sent. On main every such answer
// paused every call for 2 s, and calls waited for the rate most of the run
// (issue 27: 200 rows in 47 s instead of 4.4). The figure is a share of the
// run, not a time.
func TestUploadRetryAfterDelaysItsRowOnly(t *testing.T) {
	// Parallel: the figure is the share of the run's time that calls
	// waited for the rate, and the rate sets no limit here (the service
	// shows none: no 429), so the host's load lengthens the run, not
	// those waits; on main it was 77%, wherever it ran. The Retry-After
	// stays 2 s: the old rule paused every call for a Retry-After of 2 s
	// or more only (autoPauseAfter), so a shorter one would not catch it.
	t.Parallel()
	s := startSim(t, leadsim.Options{Fail503: 0.1, Fail503RetryAfter: "2", CreateLatency: leadsim.Latency{Fixed: 5 * time.Millisecond}, Seed: 5})
	res, rows, sum := uploadAuto(t, s, 100, func(j *UploadJob) {
		j.Up.Rate = Rate{Auto: true}
		j.Up.MaxAttempts = 10
	})
	if res.code != ExitOK {
		t.Fatalf("upload exit = %d, want %d\nstderr:\n%s", res.code, ExitOK, res.stderr)
	}
	for row, r := range rows {
		if r["status"] != "processed" && r["status"] != "submitted" {
			t.Errorf("row %d status = %q (%s), want processed or submitted", row, r["status"], r["error"])
		}
	}
	if n := s.Stats().Rejections[leadsim.RejectFault503]; n == 0 {
		t.Fatal("no 503 was injected: the test tests nothing")
	}
	b := sum.BoundBy
	if b == nil || b.RateWaitShare > 0.2 {
		t.Errorf("summary boundBy = %+v, want calls waiting for the rate 20%% of the run at most", b)
	}
	if r := sum.Rate; r == nil || !r.Auto || r.LimitFound {
		t.Errorf("summary rate = %+v, want auto and no limit found (the service showed none)", r)
	}
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
	// Parallel, its two services side by side: the limit found comes from
	// the calls' latency, which other tests' CPU lengthens, but the limit
	// is not asserted here (see above); what is (every row sent, fewer
	// than 5 attempts each, the summary's fields within the cap) holds
	// whatever the load, as TestConcurrencyAutoRandomShapes's does.
	t.Parallel()
	tests := []struct {
		name string
		opts leadsim.Options
		rows int
	}{
		{"far above the start", leadsim.Options{Capacity: 48, QueueLimit: 48, CreateLatency: leadsim.Latency{Fixed: 40 * time.Millisecond}, SubmitLatency: leadsim.Latency{Fixed: 40 * time.Millisecond}}, 200},
		{"small capacity", leadsim.Options{Capacity: 2, QueueLimit: 4, CreateLatency: leadsim.Latency{Fixed: 20 * time.Millisecond}, SubmitLatency: leadsim.Latency{Fixed: 20 * time.Millisecond}}, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a simulator and a folder of its own
			s := startSim(t, tc.opts)
			res, rows, sum := uploadAuto(t, s, tc.rows, nil)
			if res.code != ExitOK {
				t.Fatalf("upload exit = %d, want %d\nstderr:\n%s", res.code, ExitOK, res.stderr)
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
func checkAutoSummary(t *testing.T, res runResult, sum summary.Summary) {
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
	s := startSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 10 * time.Millisecond}, SubmitLatency: leadsim.Latency{Fixed: 10 * time.Millisecond}})
	res, _, sum := uploadAuto(t, s, 100, func(j *UploadJob) { j.Up.Concurrency = Concurrency{N: 2} })
	if res.code != ExitOK {
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
		name   string
		opts   leadsim.Options
		change func(j *UploadJob)
	}{
		{"slow calls at random", leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 5 * time.Millisecond,
			Dist: leadsim.LatencyDist{Kind: leadsim.DistBimodal, Slow: 500 * time.Millisecond, Share: 0.2}}, Seed: 3}, nil},
		{"a share of 503s", leadsim.Options{Fail503: 0.2, CreateLatency: leadsim.Latency{Fixed: 50 * time.Millisecond}, Seed: 4},
			func(j *UploadJob) { j.Up.MaxAttempts = 20 }},
		// A short file against heavy-tailed latency (issue 27 item 1's
		// house check: Pareto at least 50 ms, tail index 1.5, cut to a
		// median of 5 in flight; lognormal median 100 ms, σ 1). That the
		// limit no longer collapses is TestConcurrencyModelShortRuns in
		// package pace: here, under go test -race on a loaded host, the
		// client's own delays rose with the calls in flight and took the
		// limit to 1-3 in two of eight draws.
		{"pareto latency, short file", leadsim.Options{CreateLatency: leadsim.Latency{
			Dist: leadsim.LatencyDist{Kind: leadsim.DistPareto, Scale: 50 * time.Millisecond, Alpha: 1.5}}, Seed: 15}, nil},
		{"lognormal latency, short file", leadsim.Options{CreateLatency: leadsim.Latency{
			Dist: leadsim.LatencyDist{Kind: leadsim.DistLognormal, Scale: 100 * time.Millisecond, Sigma: 1}}, Seed: 12}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startSim(t, tc.opts)
			res, rows, sum := uploadAuto(t, s, 200, tc.change)
			if res.code != ExitOK {
				t.Fatalf("upload exit = %d, want %d\nstderr:\n%s", res.code, ExitOK, res.stderr)
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

// TestBoundByTheServicesErrors: with a fixed --concurrency and a share of
// 503s whose retries wait (here a Retry-After of 50 ms, far longer than a
// call), no limit holds the calls back and the rows spend most of the
// workers' time waiting out their retries: "bound by" names the service's
// errors and the backoff, not "the input: rows came slower than the
// service took them", which it said on main (the 16-core run's fail20-c8:
// 20% 503s, 8 workers, every place in flight taken 0% of the time).
func TestBoundByTheServicesErrors(t *testing.T) {
	// Not parallel: what bound the run comes from the time calls waited.
	s := startSim(t, leadsim.Options{Fail503: 0.3, Fail503RetryAfter: "0.05"})
	res, _, sum := uploadAuto(t, s, 60, func(j *UploadJob) {
		j.Up.Concurrency = Concurrency{N: 2}
		j.Up.MaxAttempts = 20
	})
	if res.code != ExitOK {
		t.Fatalf("upload exit = %d\nstderr:\n%s", res.code, res.stderr)
	}
	b := sum.BoundBy
	if b == nil || b.Kind != summary.BoundErrors || !strings.Contains(b.Text, "answered 503") || !strings.Contains(b.Text, "backoff") ||
		!strings.Contains(b.Text, "--concurrency 2") || strings.Contains(b.Text, "slower") {
		t.Errorf("summary boundBy = %+v, want the service's errors and the retries' backoff", b)
	}
	if !strings.Contains(res.stderr, "the service's errors and the retries' backoff") {
		t.Errorf("the summary on stderr does not name the service's errors:\n%s", res.stderr)
	}
}

// TestBoundByTheServicesErrorsAuto: the same with no tuning option
// (--concurrency auto, --rate auto): a 503 share whose Retry-After holds
// back the rows of a small file is named, in the summary, its JSON and
// the HTML report, with no pin. On main before this test the rows'
// waits were weighed against --max-concurrency's 256 workers, of which 20
// rows take a few, and it said "the input: rows came slower than the
// service took them" (the house check's fail10, fail20, ra2 and rahuge:
// 400 rows, no tuning flags).
func TestBoundByTheServicesErrorsAuto(t *testing.T) {
	// Not parallel: what bound the run comes from the time calls waited.
	// A Retry-After of 300 ms: far longer than a call, even one slowed
	// by a loaded machine (the errors' share of the rows' time holds).
	// 20 rows: under -race on a loaded machine the client's own delays
	// look like a queue and auto may cut its limit to 5; with 60 rows
	// every place was then taken 71% of the time ("capacity"), a share
	// that 20 rows, most of them waiting out a Retry-After, do not reach.
	s := startSim(t, leadsim.Options{Fail503: 0.3, Fail503RetryAfter: "0.3"})
	report := filepath.Join(t.TempDir(), "run.html")
	res, _, sum := uploadAuto(t, s, 20, func(j *UploadJob) {
		j.Up.Rate = Rate{Auto: true}
		j.Up.MaxAttempts = 20
		j.In.Report = report
	})
	if res.code != ExitOK {
		t.Fatalf("upload exit = %d\nstderr:\n%s", res.code, res.stderr)
	}
	if sum.Concurrency == nil || !sum.Concurrency.Auto {
		t.Fatalf("summary concurrency = %+v, want auto", sum.Concurrency)
	}
	b := sum.BoundBy
	if b == nil || b.Kind != summary.BoundErrors || !strings.Contains(b.Text, "answered 503") || !strings.Contains(b.Text, "Retry-After") ||
		strings.Contains(b.Text, "slower") || strings.Contains(b.Text, "pin it") || strings.Contains(b.Text, "--concurrency") {
		t.Fatalf("summary boundBy = %+v, want the service's errors and the retries' backoff, no pin", b)
	}
	if b.ErrorShare < errorBound || b.InputWaitShare >= boundShare {
		t.Errorf("boundBy shares: errors %.2f, input %.2f; want errors at least %v, input under %v", b.ErrorShare, b.InputWaitShare, errorBound, boundShare)
	}
	if !strings.Contains(res.stderr, "bound by         the service's errors and the retries' backoff") {
		t.Errorf("the summary on stderr does not name the service's errors:\n%s", res.stderr)
	}
	page, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.UnescapeString(string(page)), b.Text) {
		t.Errorf("the HTML report does not show the bound-by line %q", b.Text)
	}
}

// TestBoundByTimeouts: 30% of the createLeads take 3 s against a
// --timeout of 1 s, whatever the load (one slow backend): the rows'
// time goes to the attempts that time out, and "bound by" names the
// service's errors and the calls that got no reply, not the input (the
// waits of 1 ms backoff alone are no share of the rows' time: the failed
// attempts' time on the wire is what counts), and advises no pin. Before
// 95f96cf it said "the input: rows came slower than the service took
// them". The timeouts far longer than a call, so that calls slowed by a
// loaded machine under -race leave the share above a quarter (with 60
// rows and a --timeout of 300 ms it fell to 0.21 there: 140 calls/s on 64
// workers, 0.45 s a call).
func TestBoundByTimeouts(t *testing.T) {
	// Not parallel: what bound the run comes from the time calls took.
	s := startSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: time.Millisecond,
		Dist: leadsim.LatencyDist{Kind: leadsim.DistBimodal, Fast: time.Millisecond, Slow: 3 * time.Second, Share: 0.3}}, Seed: 5})
	res, _, sum := uploadAuto(t, s, 30, func(j *UploadJob) {
		// A place for every row: under --concurrency auto the calls
		// that time out hold their places during the climb from 8, and
		// under -race on a loaded machine the climb held the calls
		// back more than half the run ("concurrency-climb").
		j.Up.Concurrency = Concurrency{N: 64}
		j.Up.Rate = Rate{Auto: true}
		j.Up.Timeout = time.Second
		j.Up.MaxAttempts = 20
	})
	if res.code != ExitOK {
		t.Fatalf("upload exit = %d\nstderr:\n%s", res.code, res.stderr)
	}
	b := sum.BoundBy
	if b == nil || b.Kind != summary.BoundErrors || !strings.Contains(b.Text, "got no reply") || strings.Contains(b.Text, "pin it") {
		t.Fatalf("summary boundBy = %+v, want the service's errors, the calls that got no reply, no pin", b)
	}
	if b.ErrorShare < errorBound {
		t.Errorf("boundBy errorShare %.2f, want at least %v", b.ErrorShare, errorBound)
	}
	t.Logf("errorShare %.2f: %s", b.ErrorShare, b.Text)
}
