package pace

import (
	"cmp"
	"context"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/bulkload/bulkload/internal/fakeclock"
	"golang.org/x/time/rate"
)

var autoEpoch = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

// autoSim is a service and a pool of workers on a fake clock, to test the
// Adaptive rate's dynamics without sleeping: conc workers always have a
// call to make; each call takes latency; the service is a token bucket of
// limit calls/s (0: none) and burst, answering 429 with retryAfter over it,
// and a worker whose call drew a 429 waits retryAfter before its next.
type autoSim struct {
	limit      float64
	burst      int
	changeAt   time.Duration // the limit becomes changeTo at changeAt (0: never)
	changeTo   float64
	conc       int
	latency    time.Duration
	retryAfter time.Duration
	dur        time.Duration
}

// autoRun is what an autoSim saw, per second of simulated time.
type autoRun struct {
	ok, throttled []int           // answers 2xx and 429 per second
	rate          []float64       // the Adaptive rate at the end of each second
	throttledAt   []time.Duration // when each 429 was answered, from the start
}

func (r autoRun) totals() (ok, throttled int) {
	for i := range r.ok {
		ok += r.ok[i]
		throttled += r.throttled[i]
	}
	return ok, throttled
}

// okRate is the mean of 2xx answers per second over seconds [from, to).
func (r autoRun) okRate(from, to int) float64 {
	n := 0
	for _, c := range r.ok[from:to] {
		n += c
	}
	return float64(n) / float64(to-from)
}

func (s autoSim) run(a *Adaptive, clk *fakeclock.Clock) autoRun {
	const tick = time.Millisecond
	type worker struct {
		busy, waiting    bool
		readyAt, startAt time.Time
		doneAt           time.Time
		status           int
		rebuilt          <-chan struct{}
		pausedOn         <-chan struct{} // while paused: closed when the wait ends early
	}
	var srv *rate.Limiter
	if s.limit > 0 {
		srv = rate.NewLimiter(rate.Limit(s.limit), max(1, s.burst))
	} else if s.changeTo > 0 {
		srv = rate.NewLimiter(rate.Inf, 1)
	}
	if s.retryAfter == 0 {
		s.retryAfter = time.Second
	}
	secs := int(s.dur / time.Second)
	out := autoRun{ok: make([]int, secs), throttled: make([]int, secs), rate: make([]float64, secs)}
	ws := make([]worker, s.conc)
	start := clk.Now()
	changed := false
	for now := start; now.Before(start.Add(s.dur)); now = now.Add(tick) {
		clk.Set(now)
		sec := int(now.Sub(start) / time.Second)
		if s.changeAt > 0 && !changed && now.Sub(start) >= s.changeAt {
			srv.SetLimitAt(now, rate.Limit(s.changeTo))
			changed = true
		}
		for i := range ws {
			w := &ws[i]
			if w.busy && !w.doneAt.After(now) {
				w.busy = false
				var ra time.Duration
				w.readyAt = now
				if w.status == http.StatusTooManyRequests {
					ra = s.retryAfter
					w.readyAt = now.Add(ra)
					out.throttled[sec]++
					out.throttledAt = append(out.throttledAt, now.Sub(start))
				} else {
					out.ok[sec]++
				}
				a.Observe(Outcome{Start: w.startAt, Latency: now.Sub(w.startAt), Status: w.status, RetryAfter: ra})
			}
			if w.pausedOn != nil {
				select {
				case <-w.pausedOn:
					w.readyAt = now
				default:
				}
				if !w.readyAt.After(now) {
					w.pausedOn = nil
				}
			}
			if w.waiting {
				select {
				case <-w.rebuilt: // booked on a bucket that is gone: book again
					w.waiting = false
				default:
				}
			}
			if !w.busy && !w.waiting && !w.readyAt.After(now) {
				d, paused, rebuilt := a.reserve()
				if paused {
					// As Wait does: back at the pause's end, or when
					// rebuilt closes (the opening round answered).
					w.readyAt, w.pausedOn = now.Add(d), rebuilt
					continue
				}
				w.waiting, w.startAt, w.rebuilt = true, now.Add(d), rebuilt
			}
			if w.waiting && !w.startAt.After(now) {
				w.waiting, w.busy = false, true
				w.doneAt = w.startAt.Add(s.latency)
				w.status = http.StatusOK
				if srv != nil && !srv.AllowN(now, 1) {
					w.status = http.StatusTooManyRequests
				}
			}
		}
		if next := now.Add(tick); next.Sub(start)%time.Second == 0 {
			out.rate[sec] = a.Rate()
		}
	}
	return out
}

// recovered is the rate el into a recovery from a cut to from towards
// settle.
func recovered(from, settle float64, el time.Duration) float64 {
	x := el.Seconds() / autoRecover.Seconds()
	return from + (settle-from)*(1-math.Pow(1-x, 3))
}

// near reports whether got is within 1% of want: rates move a little with
// every millisecond of a test's clock.
func near(got, want float64) bool { return got >= 0.99*want && got <= 1.01*want }

func newTestAdaptive(cfg AutoConfig) (*Adaptive, *fakeclock.Clock) {
	clk := fakeclock.New(autoEpoch)
	cfg.Now = clk.Now
	return NewAdaptive(cfg), clk
}

// TestAdaptiveOpenUntilALimitShows: --rate auto sets no limit until the
// service shows one (issue 27): every call may go at once, whatever their
// number, 2xx and 503s change nothing, and the first 429 sets the rate at
// 0.7 of the rate the calls were sent at.
func TestAdaptiveOpenUntilALimitShows(t *testing.T) {
	a, clk := newTestAdaptive(AutoConfig{})
	for range 2000 { // 1000 calls a second for 2 s, a tenth answered 503
		clk.Advance(time.Millisecond)
		if d, paused, _ := a.reserve(); d != 0 || paused {
			t.Fatalf("reserve while open = %v (paused %v), want a call at once", d, paused)
		}
		status := http.StatusOK
		if clk.Now().Nanosecond()/int(time.Millisecond)%10 == 0 {
			status = http.StatusServiceUnavailable
		}
		a.Observe(Outcome{Start: clk.Now().Add(-time.Millisecond), Latency: time.Millisecond, Status: status})
	}
	if r := a.Rate(); r != 0 {
		t.Errorf("Rate() after 2 s of answers and 503s = %v, want 0 (no limit)", r)
	}
	if r, found := a.Settled(); found || r != 0 {
		t.Errorf("Settled() while open = %v, %v; want 0, no limit found", r, found)
	}
	clk.Advance(time.Millisecond)
	a.Observe(Outcome{Start: clk.Now().Add(-time.Millisecond), Status: http.StatusTooManyRequests})
	if r := a.Rate(); !near(r, 0.7*1000) {
		t.Errorf("Rate() after the first 429 at 1000 calls/s = %v, want 0.7 of it", r)
	}
	if d, paused, _ := a.reserve(); paused || d > 0 {
		t.Errorf("first reserve after the limit was set = %v (paused %v), want a call at once (a bucket of one)", d, paused)
	}
	if d, _, _ := a.reserve(); d <= 0 {
		t.Errorf("second reserve at once after the limit was set = %v, want a wait", d)
	}
}

// TestAdaptiveStartsFromALimitFoundBefore: a resume starts held just under
// the limit the earlier run found, and probes past it only after the hold.
func TestAdaptiveStartsFromALimitFoundBefore(t *testing.T) {
	a, clk := newTestAdaptive(AutoConfig{Limit: 150})
	if r := a.Rate(); !near(r, 0.97*150) {
		t.Errorf("Rate() at the start with a limit of 150 found before = %v, want 97%% of it", r)
	}
	if r, found := a.Settled(); !found || !near(r, 0.97*150) || a.Limit() != 150 {
		t.Errorf("Settled() = %v, %v, Limit() = %v; want 145.5, found, 150", r, found, a.Limit())
	}
	run := autoSim{limit: 150, burst: 15, conc: 32, latency: 20 * time.Millisecond, dur: 20 * time.Second}.run(a, clk)
	ok, throttled := run.totals()
	if got := run.okRate(0, 20); got < 0.9*150 {
		t.Errorf("calls/s over the resumed run = %.1f, want at least 90%% of 150 from its start", got)
	}
	if share := float64(throttled) / float64(ok+throttled); share > 0.01 {
		t.Errorf("share answered 429 = %.2f%%, want at most 1%%", 100*share)
	}
}

func TestAdaptiveClimbsWhileCallsSucceed(t *testing.T) {
	a, clk := newTestAdaptive(AutoConfig{Start: DefaultStartRate})
	run := autoSim{conc: 64, latency: 5 * time.Millisecond, dur: 5 * time.Second}.run(a, clk)
	// ×1.4 a second from 20: 20·1.4^5 ≈ 108 after 5 s.
	if got := run.rate[4]; got < 90 || got > 120 {
		t.Errorf("rate after 5 s without a limit = %.1f, want about 108 (×1.4/s from 20)", got)
	}
	for i := 1; i < len(run.rate); i++ {
		if run.rate[i] <= run.rate[i-1] {
			t.Errorf("rate fell from %.1f to %.1f in second %d without a 429", run.rate[i-1], run.rate[i], i)
		}
	}
}

func TestAdaptiveDoesNotClimbPastWhatTheCallsUse(t *testing.T) {
	// 4 calls in flight of 100 ms each: 40 calls/s at most.
	a, clk := newTestAdaptive(AutoConfig{Start: DefaultStartRate})
	run := autoSim{conc: 4, latency: 100 * time.Millisecond, dur: 30 * time.Second}.run(a, clk)
	if got := run.rate[len(run.rate)-1]; got > 40/autoUtilized+1 {
		t.Errorf("rate after 30 s at 40 calls/s of demand = %.1f, want at most %.1f", got, 40/autoUtilized)
	}
	if got := run.okRate(10, 30); got < 0.95*40 {
		t.Errorf("calls/s = %.1f, want at least 95%% of 40 (the rate must not be the bottleneck)", got)
	}
}

func TestAdaptiveClimbsSlowlyWhileLatencyRises(t *testing.T) {
	a, clk := newTestAdaptive(AutoConfig{Start: DefaultStartRate})
	for range 100 {
		clk.Advance(10 * time.Millisecond)
		a.Observe(Outcome{Start: clk.Now(), Latency: 20 * time.Millisecond, Status: 200})
	}
	r0 := a.Rate()
	for range 300 {
		clk.Advance(10 * time.Millisecond)
		a.Observe(Outcome{Start: clk.Now(), Latency: 200 * time.Millisecond, Status: 200})
	}
	// ×1.1 a second instead of ×1.4: 1.33 in 3 s, not 2.74.
	if got := a.Rate(); got > r0*1.4 || got < r0*1.2 {
		t.Errorf("rate went from %.1f to %.1f in 3 s while latency rose from 20 ms to 200 ms; want about ×1.33 (×1.1 a second)", r0, got)
	}
}

// TestAdaptiveCutWaitsATurn: a cut answers a 429, so the service's bucket
// is dry: the first call after it waits its turn at the new rate. The
// fresh bucket a cut makes held a turn for a call at once, and on
// loopback every probe's 429 drew a second one a millisecond later
// (bench/rate.sh's r50b: 5 cuts, 10 refusals after the opening).
func TestAdaptiveCutWaitsATurn(t *testing.T) {
	a, clk := newTestAdaptive(AutoConfig{Start: 100})
	a.Observe(Outcome{Start: clk.Now(), Status: 429})
	if got := a.Rate(); !near(got, 70) {
		t.Fatalf("Rate() after the first 429 = %v, want 70", got)
	}
	d, paused, _ := a.reserve()
	if paused || d < 10*time.Millisecond {
		t.Errorf("first reserve after a cut to 70/s = %v (paused %v), want a turn about 1/70 s away (14 ms)", d, paused)
	}
}

func TestAdaptiveCuts(t *testing.T) {
	type step struct {
		name    string
		n       int           // observations (default 1), each after advance
		advance time.Duration // before each observation
		status  int           // 0: none, only read the rate
		sentAgo time.Duration // the attempt was sent this long before now
		retry   time.Duration // its Retry-After
		want    float64       // Rate() after the step
	}
	tests := []struct {
		name  string
		cfg   AutoConfig
		steps []step
	}{
		{"first 429 keeps 0.7 of the rate, once per episode", AutoConfig{Start: 100}, []step{
			{name: "start", want: 100},
			{name: "429", status: 429, want: 70},
			{name: "429 of an attempt sent before the cut: same episode", status: 429, sentAgo: time.Millisecond, want: 70},
			{name: "429 of an attempt sent before the cut, answered late: same episode", advance: 1500 * time.Millisecond, status: 429, sentAgo: 2 * time.Second, want: recovered(70, 97, 1500*time.Millisecond)},
		}},
		{"after a cut, wait for answers at the new rate", AutoConfig{Start: 100}, []step{
			{name: "429", status: 429, want: 70},
			{name: "429 sent after the cut, too few answers yet: wait", advance: 10 * time.Millisecond, status: 429, sentAgo: 5 * time.Millisecond, want: recovered(70, 97, 10*time.Millisecond)},
			{name: "answers at the new rate", n: 9, advance: time.Millisecond, status: 200, sentAgo: time.Millisecond, want: recovered(70, 97, 19*time.Millisecond)},
			{name: "429 with enough answers but 20 ms after the cut (a bucket a burst emptied): wait", advance: time.Millisecond, status: 429, sentAgo: time.Millisecond, want: recovered(70, 97, 20*time.Millisecond)},
			{name: "answers until 0.1 s after the cut", n: 8, advance: 10 * time.Millisecond, status: 200, sentAgo: time.Millisecond, want: recovered(70, 97, 100*time.Millisecond)},
			{name: "429 with enough answers 0.1 s after the cut: a new episode, 0.85 once a limit is known", advance: time.Millisecond, status: 429, sentAgo: time.Millisecond, want: 0.85 * recovered(70, 97, 101*time.Millisecond)},
		}},
		{"saturated: what the service accepted is the limit", AutoConfig{Start: 100}, []step{
			{name: "429", status: 429, want: 70},
			{name: "5 answers", n: 5, advance: 10 * time.Millisecond, status: 200, sentAgo: time.Millisecond, want: recovered(70, 97, 50*time.Millisecond)},
			{name: "4 refusals", n: 4, advance: 10 * time.Millisecond, status: 429, sentAgo: time.Millisecond, want: recovered(70, 97, 90*time.Millisecond)},
			{name: "5 of 10 accepted in 0.1 s: the limit is 50/s", advance: 10 * time.Millisecond, status: 429, sentAgo: time.Millisecond, want: 0.97 * 50},
		}},
		{"recover to 97% of the limit found, then hold", AutoConfig{Start: 100}, []step{
			{name: "429", status: 429, want: 70},
			{name: "recovering", advance: time.Second, want: 70 + (97-70)*(1-0.125)},
			{name: "settled", advance: time.Second, want: 97},
			{name: "holds", advance: 4 * time.Second, want: 97},
			{name: "429 while settled keeps 0.85", status: 429, want: 97 * 0.85},
		}},
		{"probe past the hold, then the limit is half way", AutoConfig{Start: 100}, []step{
			{name: "429", status: 429, want: 70},
			{name: "settled", advance: 2 * time.Second, want: 97},
			{name: "hold", advance: 5 * time.Second, want: 97},
			// +2% of the limit a second, the slope doubling in 5 s: in
			// 20 steps of 0.1 s, 0.2·(1+0.02k) for k = 1..20.
			{name: "probe: +2% of the limit a second, and faster", n: 20, advance: 100 * time.Millisecond, want: 97 + 4.84},
			{name: "429: limit half way, rate 0.85 of the peak", status: 429, want: 0.85 * (97 + 4.84)},
			{name: "settles at 97% of it", advance: 2 * time.Second, want: 0.97 * (97 + 101.84) / 2},
		}},
		{"a 503 alone does not cut", AutoConfig{Start: 100}, []step{
			{name: "503", status: 503, want: 100},
			{name: "503", advance: time.Millisecond, status: 503, want: 100},
		}},
		{"a burst of 503s does not cut either (the concurrency's to answer)", AutoConfig{Start: 100}, []step{
			{name: "503s", n: 10, advance: time.Millisecond, status: 503, want: 100},
		}},
		{"max-rate caps the start and the climb", AutoConfig{Start: 100, Max: 50}, []step{
			{name: "start", want: 50},
			{name: "climb", advance: 3 * time.Second, status: 200, want: 50},
		}},
		{"never below the floor", AutoConfig{Start: 0.6}, []step{
			{name: "429", status: 429, want: autoFloor},
			{name: "429 a second later", advance: time.Second, status: 429, want: autoFloor},
		}},
		{"Retry-After: no increase before it", AutoConfig{Start: 100}, []step{
			{name: "429, Retry-After 1 s", status: 429, retry: time.Second, want: 70},
			{name: "frozen", advance: 900 * time.Millisecond, want: 70},
			{name: "recovering after it", advance: 1100 * time.Millisecond, want: 70 + (97-70)*(1-0.125)},
		}},
		{"Retry-After: no climb before it", AutoConfig{Start: 20}, []step{
			{name: "503, Retry-After 1 s", status: 503, retry: time.Second, want: 20},
			{name: "frozen", advance: time.Second, want: 20},
			{name: "climbs after it", advance: time.Second, want: 28},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, clk := newTestAdaptive(tc.cfg)
			for _, st := range tc.steps {
				for range max(st.n, 1) {
					clk.Advance(st.advance)
					if st.status != 0 {
						a.Observe(Outcome{Start: clk.Now().Add(-st.sentAgo), Status: st.status, RetryAfter: st.retry})
					} else {
						a.Rate() // the rate moves along in steps, as calls come
					}
				}
				if got := a.Rate(); !near(got, st.want) {
					t.Errorf("%s: Rate() = %v, want %v", st.name, got, st.want)
				}
				if got := float64(a.lim.Limit()); !near(got, st.want) {
					t.Errorf("%s: limiter limit = %v, want %v", st.name, got, st.want)
				}
			}
		})
	}
}

// TestAdaptiveRetryAfterPausesEveryCallOnlyWhenMostCarryOne: a Retry-After
// delays the call it answered (the transport waits it), not every call,
// unless most answers of the last second carry one (issue 27: a 503 with
// Retry-After: 2 on every tenth call used to pause every call).
func TestAdaptiveRetryAfterPausesEveryCallOnlyWhenMostCarryOne(t *testing.T) {
	for _, cfg := range []AutoConfig{{}, {Start: 100}} {
		a, clk := newTestAdaptive(cfg)
		for i := range 50 { // every tenth answer a 503 with Retry-After: 2
			clk.Advance(10 * time.Millisecond)
			o := Outcome{Start: clk.Now(), Status: http.StatusOK}
			if i%10 == 9 {
				o.Status, o.RetryAfter = http.StatusServiceUnavailable, 2*time.Second
			}
			a.Observe(o)
			if d, paused, _ := a.reserve(); paused || d > 100*time.Millisecond {
				t.Fatalf("start %v: reserve after answer %d (a tenth with Retry-After: 2) = %v (paused %v), want a place at once", cfg.Start, i, d, paused)
			}
		}
		// Most answers now carry one: the service asks everyone to wait.
		clk.Advance(2 * time.Second)
		for range autoRetryAfterMin - 1 { // too few answers in the window yet: no pause
			a.Observe(Outcome{Start: clk.Now(), Status: http.StatusServiceUnavailable, RetryAfter: 30 * time.Second})
		}
		if _, paused, _ := a.reserve(); paused {
			t.Errorf("start %v: paused by %d answers with a Retry-After, want %d at least", cfg.Start, autoRetryAfterMin-1, autoRetryAfterMin)
		}
		a.Observe(Outcome{Start: clk.Now(), Status: http.StatusServiceUnavailable, RetryAfter: 30 * time.Second})
		clk.Advance(10 * time.Second)
		if d, paused, _ := a.reserve(); !paused || d != 20*time.Second {
			t.Errorf("start %v: reserve 10 s into a Retry-After of 30 s most answers carried = %v (paused %v), want a 20 s pause", cfg.Start, d, paused)
		}
		clk.Advance(20 * time.Second)
		if _, paused, _ := a.reserve(); paused {
			t.Errorf("start %v: reserve after the Retry-After: still paused", cfg.Start)
		}
	}
}

func TestAdaptiveSettlesUnderTheLimit(t *testing.T) {
	// Latency 20 ms unless given; bench/rate.sh's loopback simulator
	// answers in a millisecond or two, and at 2000/s with a bucket of a
	// second (bursty) such answers once made the rate fall to half the
	// limit (a refusal 6 ms after a cut measured the "accepted rate").
	tests := []struct {
		name    string
		limit   float64
		burst   int
		latency time.Duration
	}{
		{"50/s smooth", 50, 5, 0},
		{"300/s smooth", 300, 30, 0},
		{"300/s bursty", 300, 300, 0},
		{"2000/s smooth", 2000, 200, 0},
		{"50/s bursty", 50, 50, 0},
		{"2000/s bursty", 2000, 2000, 0},
		{"50/s bursty, 2 ms", 50, 50, 2 * time.Millisecond},
		{"300/s bursty, 2 ms", 300, 300, 2 * time.Millisecond},
		{"2000/s bursty, 1 ms", 2000, 2000, time.Millisecond},
		{"2000/s bursty, 5 ms", 2000, 2000, 5 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, clk := newTestAdaptive(AutoConfig{})
			latency := cmp.Or(tc.latency, 20*time.Millisecond)
			run := autoSim{limit: tc.limit, burst: tc.burst, conc: 64, latency: latency, dur: 90 * time.Second}.run(a, clk)
			ok, throttled := run.totals()
			share := float64(throttled) / float64(ok+throttled)
			steady := run.okRate(60, 90)
			settled, found := a.Settled()
			t.Logf("limit %.0f: steady %.1f/s (%.1f%%), settled %.1f (found %v), 429 share %.2f%%, rate by second %.0f",
				tc.limit, steady, 100*steady/tc.limit, settled, found, 100*share, run.rate)
			// A bucket of a second lets through more than the limit for a
			// while, and the accepted rate measured then is a little above
			// it: the 429 share and the steady rate are what count.
			// An accepted rate averaged over 125 ms buckets is the limit
			// within a few tenths of a percent.
			top := tc.limit * 1.005
			if tc.burst >= int(tc.limit) {
				top = tc.limit * 1.03
			}
			if !found || settled > top || settled < 0.9*tc.limit {
				t.Errorf("Settled() = %.1f, %v, want a limit found and a rate in [90%%, %.0f%%] of %.0f", settled, found, 100*top/tc.limit, tc.limit)
			}
			if steady < 0.9*tc.limit {
				t.Errorf("steady calls/s = %.1f, want at least 90%% of %.0f", steady, tc.limit)
			}
			if share > 0.02 {
				t.Errorf("share of calls answered 429 = %.2f%%, want at most 2%%", 100*share)
			}
		})
	}
}

func TestAdaptiveFollowsALimitThatHalves(t *testing.T) {
	for _, latency := range []time.Duration{20 * time.Millisecond, 2 * time.Millisecond} {
		a, clk := newTestAdaptive(AutoConfig{})
		run := autoSim{limit: 300, burst: 30, changeAt: 40 * time.Second, changeTo: 150, conc: 64,
			latency: latency, dur: 70 * time.Second}.run(a, clk)
		if got := run.rate[42]; got > 150 {
			t.Errorf("latency %v: rate 2 s after the limit fell from 300 to 150 = %.1f, want at most 150 (rates by second %.0f)", latency, got, run.rate)
		}
		if got := run.okRate(50, 70); got < 0.9*150 {
			t.Errorf("latency %v: calls/s after the limit fell to 150 = %.1f, want at least 90%% of it", latency, got)
		}
	}
}

func TestAdaptiveWaitHonoursContext(t *testing.T) {
	a, _ := newTestAdaptive(AutoConfig{Start: 100})
	for range autoRetryAfterMin {
		a.Observe(Outcome{Start: autoEpoch, Status: 429, RetryAfter: time.Minute})
	}
	if _, paused, _ := a.reserve(); !paused {
		t.Fatal("not paused by answers that all carry a Retry-After of a minute")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Wait(ctx, nil); err == nil {
		t.Error("Wait with a cancelled context during a pause = nil, want the context's error")
	}
}

// TestAdaptiveSettledNeverAboveWhatWasAccepted: the rate to pin is 97% of
// the limit found, but no more than the service accepted of late.
func TestAdaptiveSettledNeverAboveWhatWasAccepted(t *testing.T) {
	a, clk := newTestAdaptive(AutoConfig{Start: 100})
	if r, found := a.Settled(); found || r != 100 {
		t.Errorf("Settled() before any 429 = %v, %v; want the rate reached, 100, and no limit found", r, found)
	}
	a.Observe(Outcome{Start: clk.Now(), Status: 429})
	for range 1000 { // 50 accepted calls a second for 20 s
		clk.Advance(20 * time.Millisecond)
		a.Observe(Outcome{Start: clk.Now(), Status: 200})
	}
	if r, found := a.Settled(); !found || r < 45 || r > 55 {
		t.Errorf("Settled() after a limit of 100 and 50 calls/s accepted = %v, %v; want about 50 and a limit found", r, found)
	}
	// The input's tail: a few calls a second no longer use the rate, and
	// say nothing of what the service accepts.
	for range 50 {
		clk.Advance(200 * time.Millisecond)
		a.Observe(Outcome{Start: clk.Now(), Status: 200})
	}
	if r, _ := a.Settled(); r < 45 || r > 55 {
		t.Errorf("Settled() after a tail of 5 calls/s = %v, want still about 50", r)
	}
}

// TestAdaptiveOpeningRound: while open, a fixed --concurrency 32 sends the
// opening rounds (autoOpening calls, then twice as many, up to
// autoOpeningLast) and waits for each round's answers before the next
// goes, so that a service that shows its limit only by refusing
// (bench/rate.sh's r50s: 50 calls/s, a bucket of 5; or one drained; or
// r50b, a full bucket of 50) refuses part of a round, not 32 calls at
// once; and the rate the first 429 sets is brought down by what the
// service accepts once its bucket is dry, not set from the burst the
// full bucket let through (on main r50b drew 32 429s at once and 2% over
// the run). Against no limit the rounds cost about one latency of half
// the workers.
func TestAdaptiveOpeningRound(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sim      autoSim
		maxFirst int     // 429s in the first second at most
		maxShare float64 // 429s over the run at most
		minCalls int     // answers over the run at least
	}{
		{"smooth 50/s, bucket 5", autoSim{limit: 50, burst: 5, conc: 32, latency: 20 * time.Millisecond, dur: 40 * time.Second}, autoOpening - 5, 0.01, 0},
		{"50/s, bucket drained", autoSim{limit: 50, burst: 1, conc: 32, latency: 20 * time.Millisecond, dur: 40 * time.Second}, autoOpening, 0.01, 0},
		// r50b: the bucket of 50 lets the rounds of 8 and 16 through and
		// refuses 6 of the round of 32; the calls after it are paced by
		// what the dry bucket accepts.
		{"50/s, bucket full, 1 ms", autoSim{limit: 50, burst: 50, conc: 32, latency: time.Millisecond, dur: 40 * time.Second}, 16, 0.01, 0},
		{"50/s, bucket full, 5 ms", autoSim{limit: 50, burst: 50, conc: 32, latency: 5 * time.Millisecond, dur: 40 * time.Second}, 16, 0.01, 0},
		{"50/s, bucket full, 20 ms", autoSim{limit: 50, burst: 50, conc: 32, latency: 20 * time.Millisecond, dur: 40 * time.Second}, 16, 0.012, 0},
		// The sim's calls take a tick more than their latency: 32 workers
		// for 2 s, less the rounds' idle workers (24 for one latency,
		// then 16) and a latency of slack.
		{"no limit", autoSim{conc: 32, latency: 20 * time.Millisecond, dur: 2 * time.Second}, 0, 0, 32*2000/21 - 24 - 16 - 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, clk := newTestAdaptive(AutoConfig{})
			run := tc.sim.run(a, clk)
			ok, throttled := run.totals()
			share := float64(throttled) / float64(ok+throttled)
			t.Logf("first second: %d 2xx, %d 429; run: %d 2xx, %d 429 (%.2f%%)", run.ok[0], run.throttled[0], ok, throttled, 100*share)
			first := 0
			for _, at := range run.throttledAt {
				if at < time.Second {
					first++
				}
			}
			if first > tc.maxFirst {
				t.Errorf("429s in the first second = %d, want at most %d (the opening rounds')", first, tc.maxFirst)
			}
			if share > tc.maxShare {
				t.Errorf("429s over the run = %.2f%%, want at most %.2f%%", 100*share, 100*tc.maxShare)
			}
			if ok < tc.minCalls {
				t.Errorf("answers = %d, want at least %d (every worker busy after the round)", ok, tc.minCalls)
			}
		})
	}
}
