package app

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bulkload/bulkload/pace"
	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
)

// Concurrency is --concurrency: "auto" (the default: learn the limit
// on calls in flight, see pace.Concurrency) or a fixed number.
type Concurrency struct {
	Auto bool
	N    int
}

func (c *Concurrency) String() string {
	if c.Auto {
		return "auto"
	}
	return strconv.Itoa(c.N)
}

func (c *Concurrency) Set(s string) error {
	if s == "auto" {
		*c = Concurrency{Auto: true}
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want auto, or a whole number of calls in flight, not %q", s)
	}
	*c = Concurrency{N: n}
	return nil
}

// workers is the number of workers the pool runs: the fixed limit, or
// Auto's cap (the limit decides how many of them have a call in flight).
func (o *UploadOptions) workers() int {
	if o.Concurrency.Auto {
		return o.MaxConcurrency
	}
	return o.Concurrency.N
}

// boundShare is the share of the sending time a limit must have held calls
// back to be what bound the run; under it, the input did. rateUsed is the
// share of the rate allowed (its mean over the run) the calls must use for
// the rate to bind.
// errorBound is the share of the rows' time with the service (see
// errorShare) that the service's errors must have cost them for the
// errors to be what bound a run that no limit held back and whose input
// did not keep the rows waiting: the rows did not come slower, they
// waited out their retries.
const (
	boundShare = 0.5
	rateUsed   = 0.7
	errorBound = 0.25
)

// errorShare is the share of the rows' time with the service that its
// errors cost them: the time their calls waited out a retry's backoff or
// Retry-After and the time their failed attempts (429, 5xx, no reply, a
// timeout) were on the wire, over the time their calls waited out retries
// and their attempts were on the wire at all. It is counted per row, not
// per worker: under --concurrency auto the pool has --max-concurrency
// workers (256), and a share of their time says nothing of a small file's
// rows waiting out a Retry-After (every one of 400 rows held back and
// "2%" of the workers' time); 0 when no attempt was made.
func errorShare(st submitter.Stats) float64 {
	total := st.BackoffWaited + st.Wire
	if total <= 0 {
		return 0
	}
	return min(float64(st.BackoffWaited+st.FailedWire)/float64(total), 1)
}

// concurrencyReport is the summary's account of the calls in flight.
func concurrencyReport(st submitter.Stats) *summary.Concurrency {
	c := st.Concurrency
	out := &summary.Concurrency{Auto: c.Auto, Limit: c.Limit, PeakInFlight: c.PeakInFlight,
		LatencyCuts: c.LatencyCuts, BackPressureCuts: c.PressureCuts}
	if c.Auto {
		out.Max = c.Max
		out.BaseLatencyMs = float64(c.BaseLatency) / float64(time.Millisecond)
		out.Settled = settledConcurrency(c)
	}
	out.CreateLatencyMs = float64(c.CreateLatency) / float64(time.Millisecond)
	out.OtherLatencyMs = float64(c.OtherLatency) / float64(time.Millisecond)
	if n := st.AttemptLatency.Count(); n > 0 {
		out.MeanLatencyMs = 1e3 * st.AttemptLatency.SumSeconds / float64(n)
	}
	return out
}

// settledConcurrency is the limit to pin with --concurrency after an auto
// run: the median of the limit over the run's steady part, never below
// its mean there (rounded up), so that pinning it does not take from
// what auto got; 0 when the run had no steady part.
func settledConcurrency(c pace.ConcurrencySnapshot) int {
	if c.Steady <= 0 || c.SteadyLimit <= 0 {
		return 0
	}
	return max(c.SteadyLimit, int(math.Ceil(c.SteadyMeanLimit-0.01)))
}

// boundBy says what held the run back, from the calls' waits: for a place
// in flight (the concurrency) or for the rate, whichever they waited for
// longer if it was at least half the time; else the service's errors when
// they cost the rows a quarter or more of their time with the service
// (errorShare) and the reader waited for the input less than half the
// time (inputWaited: how long it waited for the input's rows, whatever
// the workers did meanwhile); else the input. A slow feed (standard input
// a row at a time, a source that trickles) keeps the reader waiting most
// of the run, and its rows' retries, however long, cost the run nothing
// more than a worker, of which there were to spare. The concurrency's
// wait and the calls a second are those of the run's steady part (after
// auto's climb) when it has one: the climb of the first seconds is not
// what held the run back. nil before the first call.
func boundBy(st submitter.Stats, inputWaited time.Duration, up *UploadOptions) *summary.BoundBy {
	c := st.Concurrency
	if c.Since <= 0 {
		return nil
	}
	since := c.Since.Seconds()
	b := &summary.BoundBy{ConcurrencyWaitShare: c.Waited.Seconds() / since, RateWaitShare: st.RateWaited.Seconds() / since}
	callsPerSecond := float64(st.Attempts) / since
	if steady := c.Steady.Seconds(); steady >= steadyShare*since && steady > 0 {
		b.ConcurrencyWaitShare = c.SteadyWaited.Seconds() / steady
		callsPerSecond = float64(c.SteadyAttempts) / steady
	}
	b.ConcurrencyWaitShare, b.RateWaitShare = min(b.ConcurrencyWaitShare, 1), min(b.RateWaitShare, 1)
	// Calls wait for the rate whenever there are more workers than
	// calls in flight (each books its turn), so waiting alone does not
	// make the rate what binds: the calls must also use most of it, over
	// the time a rate was in force (--rate auto sets none until a 429).
	rateBinds := b.RateWaitShare >= boundShare && st.RateAllowed > 0 && st.RateLimited > 0 &&
		float64(st.Attempts)/since >= rateUsed*st.RateAllowed*st.RateLimited.Seconds()/since
	concBinds := b.ConcurrencyWaitShare >= boundShare
	// When both held calls back, a limit in force beats one still
	// climbing: --rate auto climbs while nothing answers 429, following
	// the calls, and the workers waiting for a place in flight book their
	// turns at the rate meanwhile, so its wait says nothing once the
	// concurrency has found the service's capacity (or is fixed or at its
	// cap). Between two limits in force, or two climbs, the longer wait
	// wins.
	concFound := !c.Auto || c.Limit >= c.Max || c.LatencyCuts > 0 || c.PressureCuts > 0
	rateFound := st.LimitFound || !up.Rate.Auto || (up.MaxRate > 0 && st.CurrentRate >= 0.99*up.MaxRate)
	b.ErrorShare, b.InputWaitShare = errorShare(st), min(inputWaited.Seconds()/since, 1)
	switch {
	case !rateBinds && !concBinds && b.ErrorShare >= errorBound && b.InputWaitShare < boundShare:
		errorsBound(b, st, up, callsPerSecond)
	case !rateBinds && !concBinds && b.InputWaitShare >= boundShare:
		b.Kind = summary.BoundInput
		b.Text = fmt.Sprintf("the input: rows came slower than the service took them (%.0f calls/s; the reader waited for rows %.0f%% of the time, every place in flight taken %.0f%%, calls waiting for the rate %.0f%%)",
			callsPerSecond, 100*b.InputWaitShare, 100*b.ConcurrencyWaitShare, 100*b.RateWaitShare)
	case !rateBinds && !concBinds:
		// Nothing held the calls back and the reader did not wait for
		// rows either: every row was at hand, and the run lasted as long
		// as its calls took to answer (400 rows against random 2 s calls:
		// the slowest answers are the run's end) or as the client took
		// to read, check and send them. Neither the input's nor a
		// limit's doing.
		b.Kind = summary.BoundLatency
		b.Text = fmt.Sprintf("the calls' own time: no limit held them back and every row was at hand (the reader waited for rows %.0f%% of the time), so the run lasted as long as the service took to answer (createLead %s on average) or bulkload took to read, check and send the rows (%.0f calls/s; every place in flight taken %.0f%% of the time, calls waiting for the rate %.0f%%)",
			100*b.InputWaitShare, c.CreateLatency.Round(time.Millisecond), callsPerSecond, 100*b.ConcurrencyWaitShare, 100*b.RateWaitShare)
	case concBinds && (!rateBinds || concFound && !rateFound || concFound == rateFound && b.ConcurrencyWaitShare >= b.RateWaitShare):
		concurrencyBound(b, st, callsPerSecond)
	default:
		rateBound(b, st, up, float64(st.Attempts)/since)
	}
	return b
}

// pinSteadyTime and pinSteadyAttempts: the least steady part a pin is
// advised from. A run of under a second (rahuge: 58 rows deferred in
// 0.2 s) cut once on a loaded host and advised "pin it with
// --concurrency 14" from 162 ms: a point of the first sawtooth's tooth,
// not a capacity. Five seconds is several rounds even of slow calls
// (1.4 s), and 100 calls several rounds at the start of 8.
const (
	pinSteadyTime     = 5 * time.Second
	pinSteadyAttempts = 100
)

// steadyShare is the share of the run its steady part must cover to speak
// for it: a run that climbed most of its time is told by the whole.
const steadyShare = 0.25

func concurrencyBound(b *summary.BoundBy, st submitter.Stats, callsPerSecond float64) {
	c := st.Concurrency
	settled := settledConcurrency(c)
	steady := fmt.Sprintf("%.0f calls/s", callsPerSecond)
	if settled > 0 {
		steady = fmt.Sprintf("%.0f calls/s at a median of %d in flight after the climb", callsPerSecond, c.SteadyLimit)
	}
	// Pin advice only where the limit found is the service's capacity:
	// an outage's timeouts, a share of 503s or slow calls at random say
	// nothing of it (and took nothing from the limit: see
	// pace.Concurrency), and a pin below what auto had would lower
	// the run's throughput.
	pin := ""
	switch {
	case st.Outages > 0:
		pin = "; the run met an outage: its limits say nothing of the capacity, no pin advised"
	case settled > 0 && (c.Steady < pinSteadyTime || c.SteadyAttempts < pinSteadyAttempts):
		pin = fmt.Sprintf("; %s and %d calls after the climb, too few to advise a pin", c.Steady.Round(time.Millisecond), c.SteadyAttempts)
	case settled > 0:
		pin = fmt.Sprintf("; pin it with --concurrency %d", settled)
	}
	switch {
	case !c.Auto:
		b.Kind = summary.BoundConcurrency
		b.Text = fmt.Sprintf("--concurrency %d (%.0f calls/s; calls waited for a place %.0f%% of the time; --concurrency auto finds what the service takes)",
			c.Limit, callsPerSecond, 100*b.ConcurrencyWaitShare)
	case c.Limit >= c.Max:
		b.Kind = summary.BoundMaxConcurrency
		b.Text = fmt.Sprintf("--max-concurrency %d (%s; latency held: the service may take more, raise it if its owner agrees)", c.Max, steady)
	case c.LatencyCuts > 0 && c.LatencyCuts >= c.PressureCuts:
		b.Kind = summary.BoundCapacity
		b.Text = fmt.Sprintf("the service's capacity: latency rose with more calls in flight, last past %d (%s%s)", c.RosePast, steady, pin)
	case c.PressureCuts > 0:
		b.Kind = summary.BoundCapacity
		b.Text = fmt.Sprintf("the service's capacity: its 503s, 504s, timeouts or 429s grew with more calls in flight, last past %d (%s%s)", c.PressurePast, steady, pin)
	default:
		b.Kind = summary.BoundConcurrencyClimb
		b.Text = fmt.Sprintf("the concurrency's climb: %d in flight and still growing when the run ended (%.0f calls/s; latency held)", c.Limit, callsPerSecond)
	}
}

// errorsBound: no limit held the calls back, the input did not keep the
// rows waiting, and the service's errors cost the rows a share of their
// time: they bound the run (fail20-c8: 20% of the calls 503, 8 workers,
// every place in flight taken 0% of the time, and "bound by the input:
// rows came slower than the service took them"; ra2 under auto, one call
// in ten 503 with Retry-After: 2, the same words at 14 calls/s). No pin
// is advised: the errors took nothing from the limit (pace.Concurrency),
// and --concurrency 1 would only queue the rows behind each wait.
func errorsBound(b *summary.BoundBy, st submitter.Stats, up *UploadOptions, callsPerSecond float64) {
	b.Kind = summary.BoundErrors
	var answers []string
	if st.Attempts > 0 {
		share := func(n int64) float64 { return 100 * float64(n) / float64(st.Attempts) }
		if st.Status503 > 0 {
			answers = append(answers, fmt.Sprintf("%.1f%% answered 503", share(st.Status503)))
		}
		if st.Status429 > 0 {
			answers = append(answers, fmt.Sprintf("%.1f%% answered 429", share(st.Status429)))
		}
		if n := st.CreateLead.Network + st.SubmitLead.Network + st.Lead.Network + st.Preflight.Network; n > 0 {
			answers = append(answers, fmt.Sprintf("%.1f%% got no reply", share(n)))
		}
	}
	what := "errors"
	if len(answers) > 0 {
		what = strings.Join(answers, ", ")
	}
	b.Text = fmt.Sprintf("the service's errors and the retries' backoff: %d retries of %d attempts (%s); they took %.0f%% of the rows' time with the service: %s waiting out retries (backoff or Retry-After) and %s on failed attempts, of %s (%.0f calls/s; every place in flight taken %.0f%% of the time, calls waiting for the rate %.0f%%)",
		st.Retries, st.Attempts, what, 100*b.ErrorShare, roundDuration(st.BackoffWaited), roundDuration(st.FailedWire), roundDuration(st.BackoffWaited+st.Wire),
		callsPerSecond, 100*b.ConcurrencyWaitShare, 100*b.RateWaitShare)
	if !up.Concurrency.Auto {
		b.Text += fmt.Sprintf("; with --concurrency %d a row waiting out its backoff holds one of the %d", up.Concurrency.N, up.Concurrency.N)
	}
}

// roundDuration is d for a sentence: to the second from 10 s, else to
// the millisecond.
func roundDuration(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

func rateBound(b *summary.BoundBy, st submitter.Stats, up *UploadOptions, callsPerSecond float64) {
	share429 := 0.0
	if st.Attempts > 0 {
		share429 = 100 * float64(st.Status429) / float64(st.Attempts)
	}
	switch {
	case !up.Rate.Auto && up.Rate.PerSecond > 0:
		b.Kind = summary.BoundRate
		b.Text = fmt.Sprintf("--rate %g (%.0f calls/s; %.1f%% answered 429)", up.Rate.PerSecond, callsPerSecond, share429)
	case !up.Rate.Auto:
		b.Kind = summary.BoundRateLimit
		b.Text = fmt.Sprintf("the service's rate limit: 429s made --rate 0 slow down (%.0f calls/s; %.1f%% answered 429)", callsPerSecond, share429)
	case up.MaxRate > 0 && st.CurrentRate >= 0.99*up.MaxRate:
		b.Kind = summary.BoundMaxRate
		b.Text = fmt.Sprintf("--max-rate %g (%.0f calls/s; %.1f%% answered 429)", up.MaxRate, callsPerSecond, share429)
	case st.LimitFound:
		b.Kind = summary.BoundRateLimit
		b.Text = fmt.Sprintf("the service's rate limit: settled at %.0f calls/s; %.1f%% answered 429", st.SettledRate, share429)
	default:
		b.Kind = summary.BoundRateClimb
		b.Text = fmt.Sprintf("the rate's climb: %.0f calls/s allowed and still growing when the run ended (no 429 yet)", st.CurrentRate)
	}
}

// boundTracker says what binds the calls now, for the progress display:
// what bound them since its last look, not since the start (the climb of
// the first seconds would speak for the whole run). Safe for concurrent
// use.
type boundTracker struct {
	stats func() submitter.Stats
	// input is the time the reader has waited for the input's rows
	// (timedSource.Waited); nil: none.
	input func() time.Duration
	up    *UploadOptions

	mu        sync.Mutex
	prev      submitter.Stats
	prevInput time.Duration
}

// note is the progress bar's short account: "  52/52 in flight, bound by
// capacity".
func (t *boundTracker) note() string {
	st := t.stats()
	var input time.Duration
	if t.input != nil {
		input = t.input()
	}
	t.mu.Lock()
	prev, prevInput := t.prev, t.prevInput
	t.prev, t.prevInput = st, input
	t.mu.Unlock()
	d := st
	d.Attempts -= prev.Attempts
	d.Retries -= prev.Retries
	d.Status429 -= prev.Status429
	d.Status503 -= prev.Status503
	d.BackoffWaited -= prev.BackoffWaited
	d.Wire -= prev.Wire
	d.FailedWire -= prev.FailedWire
	d.CreateLead.Network -= prev.CreateLead.Network
	d.SubmitLead.Network -= prev.SubmitLead.Network
	d.Lead.Network -= prev.Lead.Network
	d.Preflight.Network -= prev.Preflight.Network
	d.RateWaited -= prev.RateWaited
	d.Concurrency.Waited -= prev.Concurrency.Waited
	d.Concurrency.Since -= prev.Concurrency.Since
	d.Concurrency.Steady = 0 // the interval speaks for itself
	d.RateLimited -= prev.RateLimited
	if d.RateLimited > 0 {
		// The mean rate allowed over the interval's time with a rate in
		// force, from the means since the start.
		d.RateAllowed = (st.RateAllowed*st.RateLimited.Seconds() - prev.RateAllowed*prev.RateLimited.Seconds()) / d.RateLimited.Seconds()
	}
	b := boundBy(d, input-prevInput, t.up)
	if b == nil {
		return ""
	}
	return fmt.Sprintf("  %d/%d in flight, bound by %s", st.Concurrency.InFlight, st.Concurrency.Limit, b.Kind)
}
