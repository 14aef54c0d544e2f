package submitter

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// OpStats counts the calls of one operation and what each HTTP attempt
// of them came to. Every attempt lands in exactly one outcome, so the
// outcomes add up to the attempts; Retries are the attempts after each
// call's first.
type OpStats struct {
	Calls, Retries int64
	// OK: a 2xx reply without GraphQL errors.
	OK int64
	// GraphQLError: a reply with GraphQL errors (the service refused the
	// request), whatever its status below 500 but 429.
	GraphQLError int64
	// Throttled: HTTP 429.
	Throttled int64
	// ServerError: any 5xx, 503 included.
	ServerError int64
	// Network: no reply (refused, reset, DNS, TLS, timeout).
	Network int64
	// Other: any other reply (401, 403, other 4xx without GraphQL errors,
	// a body that is not GraphQL or over the size cap).
	Other int64
}

// Attempts is the number of HTTP attempts the outcomes count.
func (s OpStats) Attempts() int64 {
	return s.OK + s.GraphQLError + s.Throttled + s.ServerError + s.Network + s.Other
}

// attemptClass is the OpStats outcome of one attempt.
type attemptClass int

const (
	classOK attemptClass = iota
	classGraphQLError
	classThrottled
	classServerError
	classNetwork
	classOther
	numClasses
)

// classOf is the OpStats outcome of an attempt classify judged v.
func classOf(v *verdict) attemptClass {
	switch {
	case v.kind == outcomeSuccess && len(v.errs) > 0:
		return classGraphQLError
	case v.kind == outcomeSuccess:
		return classOK
	case v.status == 0:
		return classNetwork
	case v.status == http.StatusTooManyRequests:
		return classThrottled
	case v.status >= 500:
		return classServerError
	case len(v.errs) > 0:
		return classGraphQLError
	}
	return classOther
}

// attempt counts one attempt of operation op that classify judged v, and
// took elapsed from its sending to its reply read (an attempt is one that
// had a token to send; the retries are counted by the call).
func (s *stats) attempt(op string, v *verdict, elapsed time.Duration) {
	s.attempts.Add(1)
	class := classOf(v)
	s.ops[opIndex(op)].outcomes[class].Add(1)
	if class == classOK || class == classGraphQLError {
		s.answered.Add(1)
		s.latency.observe(elapsed)
	}
	s.wire.Add(int64(elapsed))
	if class == classThrottled || class == classServerError || class == classNetwork {
		s.failedWire.Add(int64(elapsed))
	}
	if v.kind != outcomeSuccess {
		switch v.status {
		case http.StatusTooManyRequests:
			s.status429.Add(1)
		case http.StatusUnauthorized:
			s.status401.Add(1)
		case http.StatusServiceUnavailable:
			s.status503.Add(1)
		}
	}
}

// ops of the Client, indexing stats.ops.
const (
	opCreate = iota
	opSubmit
	opLead
	opPreflight
	opOther
	numOps
)

func opIndex(op string) int {
	switch op {
	case "createLead":
		return opCreate
	case "submitLead":
		return opSubmit
	case "lead":
		return opLead
	case "preflight":
		return opPreflight
	}
	return opOther
}

// opCounters are the counters behind one OpStats.
type opCounters struct {
	calls, retries atomic.Int64
	outcomes       [numClasses]atomic.Int64
}

func (c *opCounters) load() OpStats {
	o := &c.outcomes
	return OpStats{Calls: c.calls.Load(), Retries: c.retries.Load(),
		OK: o[classOK].Load(), GraphQLError: o[classGraphQLError].Load(), Throttled: o[classThrottled].Load(),
		ServerError: o[classServerError].Load(), Network: o[classNetwork].Load(), Other: o[classOther].Load()}
}

// stats are the Client's counters. Safe for concurrent use.
type stats struct {
	calls, attempts, retries, status429, status401, status503 atomic.Int64
	ops                                                       [numOps]opCounters
	// latency counts the answered attempts by how long they took.
	latency latencyCounters
	// answered counts the attempts the service answered (ok or GraphQL
	// errors): a throttled call that sees it move knows the service works.
	answered atomic.Int64
	// attemptLatency is the Prometheus histogram of the attempts'
	// latencies (with their sum), as the Concurrency measures them.
	attemptLatency latencyHistogram
	// backoff sums the calls' waits between attempts.
	backoff sumClock
	// wire sums the attempts' times from their sending to their end, and
	// failedWire those of the attempts a retry may follow (429, 5xx, no
	// reply) (nanoseconds).
	wire, failedWire atomic.Int64
}

// LatencyBuckets are the upper bounds, in seconds, of the latency
// histogram's buckets (Stats.AttemptLatency): from a loopback call to the
// default call timeout.
var LatencyBuckets = [...]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// latencyHistogram counts the latency of the attempts that got a reply or
// timed out, as the Concurrency measures it. Safe for concurrent use.
type latencyHistogram struct {
	buckets [len(LatencyBuckets) + 1]atomic.Int64 // the last: above every bound
	sumNano atomic.Int64
}

func (h *latencyHistogram) observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(LatencyBuckets) && s > LatencyBuckets[i] {
		i++
	}
	h.buckets[i].Add(1)
	h.sumNano.Add(int64(d))
}

// LatencyHistogram is a snapshot of the attempts' latencies: Counts[i]
// attempts took at most LatencyBuckets[i] seconds and more than the bound
// before (not cumulative); the last count is above every bound.
type LatencyHistogram struct {
	Counts     [len(LatencyBuckets) + 1]int64
	SumSeconds float64
}

// Count is the number of attempts counted.
func (h LatencyHistogram) Count() int64 {
	var n int64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

func (h *latencyHistogram) load() LatencyHistogram {
	var out LatencyHistogram
	for i := range h.buckets {
		out.Counts[i] = h.buckets[i].Load()
	}
	out.SumSeconds = time.Duration(h.sumNano.Load()).Seconds()
	return out
}

// waitClock measures the time during which at least one caller waits.
// Safe for concurrent use; nil does nothing.
type waitClock struct {
	mu      sync.Mutex
	now     func() time.Time
	waiting int
	since   time.Time
	total   time.Duration
}

func (w *waitClock) enter() {
	if w == nil {
		return
	}
	w.mu.Lock()
	if w.waiting == 0 {
		w.since = w.now()
	}
	w.waiting++
	w.mu.Unlock()
}

func (w *waitClock) leave() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.waiting--
	if w.waiting == 0 {
		w.total += w.now().Sub(w.since)
	}
	w.mu.Unlock()
}

// waited is the time with a caller waiting, until now.
func (w *waitClock) waited() time.Duration {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.total
	if w.waiting > 0 {
		t += w.now().Sub(w.since)
	}
	return t
}

// sumClock sums the lengths of many callers' waits, those under way
// included: a wait of minutes (a long Retry-After) counts as it goes, not
// only once it ends, so that the progress line's "bound by" sees it.
// Safe for concurrent use.
type sumClock struct {
	mu      sync.Mutex
	base    time.Time // the first wait's start: the waits' starts are counted from it
	waiting int64
	starts  time.Duration // the sum of the waits under way's starts, from base
	done    time.Duration
}

// enter begins a wait at start.
func (c *sumClock) enter(start time.Time) {
	c.mu.Lock()
	if c.base.IsZero() {
		c.base = start
	}
	c.waiting++
	c.starts += start.Sub(c.base)
	c.mu.Unlock()
}

// leave ends at end the wait that began at start.
func (c *sumClock) leave(start, end time.Time) {
	c.mu.Lock()
	c.waiting--
	c.starts -= start.Sub(c.base)
	c.done += end.Sub(start)
	c.mu.Unlock()
}

// total is the waits' sum at now: those ended, and those under way so far.
func (c *sumClock) total(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting == 0 {
		return c.done
	}
	return c.done + max(0, time.Duration(c.waiting)*now.Sub(c.base)-c.starts)
}

// rateClock integrates the rate in force over time, for its mean over the
// time a rate was in force (--rate auto sets none until the service shows
// one): what the rate allowed, to compare with what the calls used. Safe
// for concurrent use; nil does nothing.
type rateClock struct {
	mu      sync.Mutex
	now     func() time.Time
	first   time.Time
	last    time.Time
	rate    float64       // in force since last; 0 = unlimited
	calls   float64       // the integral of the rate since first
	limited time.Duration // the time a rate was in force
}

// note records that the rate in force is r from now on (0: unlimited).
func (c *rateClock) note(r float64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.first.IsZero() {
		c.first, c.last, c.rate = now, now, r
		return
	}
	c.addLocked(now)
	c.rate = r
}

func (c *rateClock) addLocked(now time.Time) {
	dt := now.Sub(c.last)
	if dt > 0 {
		if c.rate > 0 {
			c.calls += c.rate * dt.Seconds()
			c.limited += dt
		}
		c.last = now
	}
}

// mean is the mean rate in force over the time a rate was, calls/s, and
// that time; 0, 0 when none ever was.
func (c *rateClock) mean() (callsPerSecond float64, limited time.Duration) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first.IsZero() {
		return 0, 0
	}
	c.addLocked(c.now())
	if c.limited <= 0 {
		return 0, 0
	}
	return c.calls / c.limited.Seconds(), c.limited
}
