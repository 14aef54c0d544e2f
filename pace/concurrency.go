package pace

import (
	"context"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Tuning of the concurrency (--concurrency auto). The figures come from the
// anchors named in docs/design.md and from bench/conc.sh's and
// bench/shapes.sh's runs against leadsim.
const (
	// DefaultStartConcurrency is where auto starts: today's fixed default,
	// polite before anything is known.
	DefaultStartConcurrency = 8
	// DefaultMaxConcurrency caps auto unless --max-concurrency says
	// otherwise: a polite client against a service nobody has measured.
	// 256 calls in flight is what the client's transport keeps idle connections
	// for (a call above it would open and close a connection each time);
	// at 1.5 s a call it is 170 calls/s, a 200,000-lead night file in
	// about 30 minutes; and a service that takes fewer shows it by its
	// latency long before.
	DefaultMaxConcurrency = 256

	concTolerance   = 0.08                   // latency this much above its base (plus concSlack and the noise) is a queue in the service
	concSlack       = 500 * time.Microsecond // absolute slack: half a millisecond's noise is no queue
	concEarly       = 0.5                    // a round whose first samples are this much above the base decides early
	concRoundMax    = 64                     // samples that make a round at most
	concRoundMin    = 8                      // samples that make a round at least (a round at a lower limit sends for more than one base)
	concRoundTime   = 100 * time.Millisecond // a round sends at least this long (up to concRoundMax calls) against a faster service
	concBaseAnswers = 8                      // answers of a round at least to count towards the base (or the limit, when lower)
	concFirstKeep   = 3 * time.Second        // the first round's quickest quarter stands for the base this long: by then rounds at the limit it cut to show it
	concFirstTop    = 2.0                    // the first round's slowest quarter past this times its median: a heavy tail, no queue
	concFirstQueue  = 1.5                    // the first round's median past this times its quickest quarter's: the start is above the capacity
	concHeldMixed   = 1                      // rounds a held first round waits at most for one that tells, past bursts of createLeads mixed with other calls
	concFirstFall   = 0.75                   // the median after the first rounds' cut under this times theirs (and half way to the quickest quarter): the cut found a queue
	concUnder       = 0.95                   // a latency cut lands this much under the capacity it estimates, to see the base again
	concGrowth      = 0.05                   // after slow start, the limit's share added per round that binds
	concCut503      = 0.75                   // share kept after a round whose overload answers (503, 504, timeouts) rose past the usual share
	concCut429      = 0.9                    // share kept after a round with 429s while the limit binds
	concPressure    = 0.1                    // share of a round's answers that are overload beyond the usual share, to cut
	concBaseWindow  = 20 * time.Second       // the base and the usual shares are of the rounds this far back
	concCutSpan     = time.Second            // latency cuts within this span take the limit at most to half of where the span began
	concClip        = 4.0                    // a latency counts as at most this times the base, and a round waits no longer for its last answers
	concBaseQuant   = 0.25                   // the base is this quantile of the recent rounds' means
	concPrior       = 8                      // answers' weight of the prior spread (half the base) before rounds show the service's own
	concPriorSpread = 0.5                    // the prior spread of one answer, as a share of the base
	concHeavyCut    = 0.8                    // against such a service, a latency cut keeps this share of the limit at least
	concThick       = 32                     // answers of rounds with no queue that tell the service's spread
	concHeavySpread = 0.7                    // answers whose standard deviation is past this share of their round's mean come from a heavy tail
	concHeavy       = 0.5                    // a spread of one answer past this share of the base: a round past the threshold by less than concEarly waits for the next to confirm it
	concUsualPrior  = 0.1                    // the usual share of overload answers before any round: one in ten answers
	concCutMisses   = 2                      // rounds after a latency cut whose latency did not fall: the cut was not for a queue, undo it
	concStartStep   = 0.5                    // share of slow start's doubling taken at once: the rest comes one place per answer
)

// NoLimit is the fixed limit of a Concurrency that sets none: the
// caller's pool is the limit.
const NoLimit = 1 << 30

// ConcurrencyConfig configures a Concurrency. Zero values take the
// defaults.
type ConcurrencyConfig struct {
	// Fixed > 0 is a fixed limit (--concurrency N): nothing is learned.
	Fixed int
	// Start is auto's first limit (default DefaultStartConcurrency), Max
	// its cap (--max-concurrency, default DefaultMaxConcurrency).
	Start, Max int
	// Settled starts auto past its climb, at Start: the limit an earlier
	// run of the same job settled at (a resume). It grows from there as
	// after a cut, and slow start is not run again.
	Settled bool
	Now     func() time.Time // nil = time.Now
}

// Concurrency is the limit on calls in flight shared by every call of a
// Client: each HTTP attempt takes a place before it is sent and gives it
// back with its outcome. Fixed, it is --concurrency N. Auto (--concurrency
// auto) learns the limit: it grows while the limit binds and latency holds,
// and cuts when more calls in flight make the latency rise (a queue in the
// service), when the share of calls the service sheds (503, 504, timeouts)
// rises with them, or when it throttles them (429). Slow calls and 503s
// that do not grow with the calls in flight take nothing from the limit.
// The design and its anchors (TCP slow start, Netflix Gradient2, Vector's
// ARC) are in docs/design.md, "Adaptive concurrency (--concurrency auto)";
// the conc* constants are its tuning.
//
// Latency is measured per attempt, as the service's time: from the request
// written to the reply's first byte (createLead's, when a round has any).
// Time in retry backoff, at the rate limiter, waiting for a place or in the
// client's own work does not count. Safe for concurrent use.
type Concurrency struct {
	now   func() time.Time
	fixed bool
	max   int

	mu       sync.Mutex
	limit    float64
	inFlight int
	peak     int
	queue    []*concWaiter

	// The round: the calls sent from roundStart while sending, up to the
	// limit or for a base latency; it ends when all sent are answered, or
	// concClip bases after the last was sent.
	round      int64 // its number, from 1; 0 before the first call
	roundStart time.Time
	roundLevel int // the limit when it started
	lastSent   time.Time
	sending    bool
	sent       int
	answered   int
	n, hard    int           // answers; of them overload answers
	throttled  int           // 429s
	lat        [2]latencySum // of the 2xx answers: createLead's, the others'
	bound      bool          // the limit bound during the round
	slowStart  bool
	sinceCut   int  // rounds since the last cut
	exceeded   bool // the last round's latency was past the threshold, not by much: the next one confirms a queue
	// The calls sent during the round after its own (their ticket is the
	// round's number, negated), and their overload answers: a service
	// that sheds them at once (its queue full) answers each in a
	// millisecond, and its freed place is taken by the next call, shed as
	// fast. The round's own calls, sent before, are still waiting for
	// their answers; they alone would not see it for a base or more.
	outSent, outHard int

	// The rounds of the last concBaseWindow, and what they say: the base
	// latency (a low quantile of their means), the spread of one answer
	// around it, and the usual share of overload answers at the lower
	// limits.
	history     []concRound
	base, sigma float64 // seconds; 0: no round yet
	tight       bool    // the answers of rounds with no queue are many and spread little (see baseFromHistoryLocked)
	heavy       bool    // they are many and spread wide
	baseN       int     // the answers of a typical round
	usual       float64 // the usual share of overload answers

	first         [2][]float64 // the first round's latencies (seconds) as lat, for its base (and the second's, when the first is held)
	held          heldFirst    // the first round looked like a queue: the second tells
	firstDone     bool
	latencyCuts   int
	pressureCuts  int
	rosePast      int // the limit before the last latency cut
	pressurePast  int // the limit before the last back-pressure cut
	lastCut       time.Time
	cutSpanFrom   time.Time // the first latency cut of the concCutSpan now running
	cutSpanLimit  float64   // the limit before it
	check         cutCheck  // the last latency cut, until the latency falls
	undone        int       // latency cuts undone: the latency did not fall
	fullSince     time.Time // every place taken (or calls waiting) since
	fullTotal     time.Duration
	firstAcquired time.Time
	steady        steadyClock
	// opLat sums the latencies of every 2xx answer of the run (not only
	// the rounds'): createLead's, the others'.
	opLat [2]latencySum
	// ramp is where slow start's doubling goes: the limit takes
	// concStartStep of the step at once and grows to ramp by one place
	// per 2xx answer (0: none). See Release.
	ramp float64
}

// concRound is what one round said, for the base.
type concRound struct {
	at           time.Time
	level        int     // the limit when it started
	n            int     // latencies counted
	mean, varW   float64 // their mean and variance, each at most concClip bases (seconds)
	answers      int     // answers of any kind
	overload     int     // of them 503, 504 or timeouts
	firstQuarter bool    // the first round's quickest quarter, standing for the base
	calm         bool    // no queue: its mean was within the tolerance of the base (or there was none)
}

// cutCheck follows a latency cut: if the answers after it are no quicker
// than those that caused it, the latency was not the calls' doing.
type cutCheck struct {
	on        bool
	from      float64 // the limit before the cut
	slowStart bool    // slow start before the cut
	mean      float64 // the latency that caused it
	base      float64 // the base then
	at        time.Time
	misses    int
	// last is the latency of the last window judged (0: none since the
	// cut): a window slower than it, at the same limit or a lower one,
	// found a service that got slower meanwhile.
	last float64
	// round is the round whose end made the cut, and before sums the
	// latencies of the 2xx answers to its calls sent after its own
	// (sent last at the limit before the cut, answered after it), as
	// lat: the latency at that limit once its queue had built, where
	// the round's own mean (mean) is of calls sent a base earlier, only
	// partly queued.
	round  int64
	before [2]latencySum
	// lat sums the latencies of the 2xx answers to calls sent since, as
	// the round's (createLead's, the others'), each at most concClip
	// times base: the same measure as mean, whatever the base does
	// meanwhile; until they are concBaseAnswers.
	lat [2]latencySum
	// median, for a cut of the first round: the median of its
	// latencies, and those of the answers since (the first round's
	// rule is on medians: a heavy tail's quickest quarter is far under
	// its median, though no call queued).
	median  float64
	samples []float64
}

// heldFirst is a first round that looked like a queue, held until the
// second round, at the same limit, tells whether it was one.
type heldFirst struct {
	on            bool
	quick, median float64 // its quickest quarter's mean latency and its median (seconds)
	mixed         int     // rounds after it that could not tell (carryHeldLocked)
}

type concWaiter struct {
	ready   chan struct{}
	granted bool
	ticket  int64
}

// NewConcurrency returns a fixed Concurrency when cfg.Fixed > 0, else an
// auto one at cfg.Start.
func NewConcurrency(cfg ConcurrencyConfig) *Concurrency {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Concurrency{now: cfg.Now}
	if cfg.Fixed > 0 {
		c.fixed, c.max, c.limit = true, cfg.Fixed, float64(cfg.Fixed)
		return c
	}
	if cfg.Max <= 0 {
		cfg.Max = DefaultMaxConcurrency
	}
	if cfg.Start <= 0 {
		cfg.Start = DefaultStartConcurrency
	}
	c.max = cfg.Max
	c.limit = float64(min(cfg.Start, cfg.Max))
	c.usual = concUsualPrior
	c.slowStart = !cfg.Settled
	return c
}

// capLocked is the limit as a number of calls.
func (c *Concurrency) capLocked() int { return max(1, int(c.limit+0.5)) }

// setLimitLocked makes the limit l (at least 1, at most the cap), and ends
// the climb when slow start is over or the cap is reached.
func (c *Concurrency) setLimitLocked(l float64) {
	c.limit = min(max(1, l), float64(c.max))
	now := c.now()
	if c.steady.from.IsZero() && (!c.slowStart || c.capLocked() >= c.max) {
		c.steady.start(now, c.capLocked(), c.waitedLocked(now))
	}
	c.steady.note(now, c.capLocked())
}

// waitedLocked is the time with every place taken, until now.
func (c *Concurrency) waitedLocked(now time.Time) time.Duration {
	t := c.fullTotal
	if !c.fullSince.IsZero() {
		t += now.Sub(c.fullSince)
	}
	return t
}

// Acquire takes a place for one attempt, waiting in line for one, or
// returns ctx's error. The ticket goes back with Release.
func (c *Concurrency) Acquire(ctx context.Context) (ticket int64, err error) {
	c.mu.Lock()
	if len(c.queue) == 0 && c.inFlight < c.capLocked() {
		ticket = c.takeLocked()
		c.mu.Unlock()
		return ticket, nil
	}
	w := &concWaiter{ready: make(chan struct{})}
	c.queue = append(c.queue, w)
	c.bound = true
	c.fullLocked()
	c.mu.Unlock()
	select {
	case <-w.ready:
		return w.ticket, nil
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		if w.granted {
			c.inFlight--
			c.answerLocked(w.ticket)
			c.grantLocked()
		} else {
			for i, x := range c.queue {
				if x == w {
					c.queue = append(c.queue[:i], c.queue[i+1:]...)
					break
				}
			}
			c.fullLocked()
		}
		return 0, ctx.Err()
	}
}

// takeLocked gives one attempt a place, and returns its ticket: the round
// it belongs to; for one sent after the round's calls, that round's number
// negated; 0 for a fixed limit.
func (c *Concurrency) takeLocked() int64 {
	if c.firstAcquired.IsZero() {
		c.firstAcquired = c.now()
		if c.fixed || !c.slowStart {
			c.steady.start(c.firstAcquired, c.capLocked(), 0)
		}
	}
	c.inFlight++
	c.peak = max(c.peak, c.inFlight)
	if c.inFlight >= c.capLocked() {
		c.bound = true
		c.fullLocked()
	}
	if c.fixed {
		return 0
	}
	now := c.now()
	if c.round == 0 {
		c.startRoundLocked(now)
	}
	c.overdueLocked(now)
	if !c.sending {
		c.outSent++
		return -c.round
	}
	if span, _ := c.roundSpanLocked(); span > 0 && now.Sub(c.roundStart).Seconds() >= span {
		// A base latency has passed: the round's calls are those sent
		// so far, and if none was, the round starts again with this one.
		// If all were answered already, the round ends, and this call
		// is the next one's first.
		switch {
		case c.sent == 0:
			c.roundStart = now
		case c.answered >= c.sent:
			c.endRoundLocked(0)
		default:
			c.sending = false
			c.outSent++
			return -c.round
		}
	}
	c.sent++
	c.lastSent = now
	if _, calls := c.roundSpanLocked(); c.sent >= calls {
		c.sending = false
	}
	return c.round
}

// overdueLocked ends the round when its last calls have been out for
// concClip bases since the last was sent: a slow call says all it can by
// then (it counts as concClip bases), and a round that waited for the
// slowest of a heavy tail would decide once a tail.
func (c *Concurrency) overdueLocked(now time.Time) {
	if c.sending || c.answered >= c.sent {
		return
	}
	if clip := c.clipBaseLocked(); clip == 0 || now.Sub(c.lastSent).Seconds() < concClip*clip {
		return
	}
	c.endRoundLocked(c.sent - c.answered)
}

// clipBaseLocked is the latency a round's answers are clipped at a
// multiple of (seconds): the base, or, in the first round, once half its
// calls are answered, the median of its calls' latencies (those still
// out being slower than every answer); 0 while
// there is neither. The first round would otherwise wait for its
// slowest call: against a slow credit bureau behind one call in ten,
// more than half of the first rounds of eight have one, and the limit
// stayed at its start for the 2 s it took (pace's short model runs).
func (c *Concurrency) clipBaseLocked() float64 {
	if c.base > 0 || c.firstDone {
		return c.base
	}
	first := c.first[1]
	if len(c.first[0]) > 0 {
		first = c.first[0]
	}
	m := (c.sent - 1) / 2 // the median call's place, the calls still out being slower than every answer
	if c.sent == 0 || len(first) <= m {
		return 0
	}
	s := slices.Clone(first)
	slices.Sort(s)
	return s[m]
}

// roundSpanLocked is how long a round sends (seconds; 0 before a base
// latency is known) and how many calls at most: one base latency, up to
// the limit (at least concRoundMin, for as many bases as that takes at the
// limit, at most concRoundMax). Against a fast
// service (a base under concRoundTime) a round sends for concRoundTime,
// up to concRoundMax calls: a round of one base latency would be the
// limit's few calls (8 calls of 20 ms), whose mean swings with the
// client's own stalls on a busy machine, and the limit would swing with
// it, a cut or a step every few milliseconds: its mean over the swing,
// not K, is what the service gets (bench/README.md, cap8).
func (c *Concurrency) roundSpanLocked() (span float64, calls int) {
	span, calls = c.base, min(max(c.capLocked(), concRoundMin), concRoundMax)
	if rt := concRoundTime.Seconds(); c.base > 0 && c.base < rt {
		span, calls = rt, concRoundMax
	}
	return max(span, c.base*math.Ceil(concRoundMin/float64(c.capLocked()))), calls
}

// startRoundLocked starts a round at now: the next calls sent, for
// roundSpanLocked's span and calls, are its calls, and it ends when they
// are all answered.
func (c *Concurrency) startRoundLocked(now time.Time) {
	c.round++
	c.roundStart, c.roundLevel, c.sending, c.sent, c.answered = now, c.capLocked(), true, 0, 0
	c.n, c.hard, c.throttled, c.lat = 0, 0, 0, [2]latencySum{}
	c.outSent, c.outHard = 0, 0
	c.bound = len(c.queue) > 0 || c.inFlight >= c.capLocked()
}

// answerLocked counts an attempt of ticket as answered (or given up),
// and ends the round once every call of it is.
func (c *Concurrency) answerLocked(ticket int64) {
	if ticket == 0 || ticket != c.round {
		return
	}
	c.answered++
	if !c.sending && c.answered >= c.sent {
		c.endRoundLocked(0)
	}
}

// latencySum sums the latencies of a round's 2xx answers, in seconds,
// each at most concClip bases.
type latencySum struct {
	ok         int
	sum, sumSq float64
}

// variance is the variance of the latencies summed (0 for fewer than 2).
func (l *latencySum) variance() float64 {
	if l.ok < 2 {
		return 0
	}
	m := l.sum / float64(l.ok)
	return max(l.sumSq/float64(l.ok)-m*m, 0)
}

func (l *latencySum) add(x float64) {
	l.ok++
	l.sum += x
	l.sumSq += x * x
}

// latLocked is the round's latencies that count: createLead's when it has
// any. Calls of different operations take different times (createLead
// pulls a credit report); their mix changes from round to round, and
// would look like a queue that comes and goes. createLead's show the
// service's queue as well as any.
func (c *Concurrency) latLocked() *latencySum {
	if c.lat[0].ok > 0 {
		return &c.lat[0]
	}
	return &c.lat[1]
}

// meanLocked is the mean latency of the round's 2xx answers that count,
// 0 if none.
func (c *Concurrency) meanLocked() float64 {
	l := c.latLocked()
	if l.ok == 0 {
		return 0
	}
	return l.sum / float64(l.ok)
}

// grantLocked gives the free places to the attempts waiting longest.
func (c *Concurrency) grantLocked() {
	for len(c.queue) > 0 && c.inFlight < c.capLocked() {
		w := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		w.granted = true
		w.ticket = c.takeLocked()
		close(w.ready)
	}
	c.fullLocked()
}

// fullLocked starts or ends a stretch of time with every place taken (or
// calls waiting for one): the limit binds.
func (c *Concurrency) fullLocked() {
	full := len(c.queue) > 0 || c.inFlight >= c.capLocked()
	switch {
	case full && c.fullSince.IsZero():
		c.fullSince = c.now()
	case !full && !c.fullSince.IsZero():
		c.fullTotal += c.now().Sub(c.fullSince)
		c.fullSince = time.Time{}
	}
}

// isOverload reports an answer that says the service could not take the
// call: 503, 504 or no reply in time.
func isOverload(o Outcome) bool {
	return o.Status == http.StatusServiceUnavailable || o.Status == http.StatusGatewayTimeout || o.Timeout
}

// Release gives back the place of an attempt that ended with o; learn is
// false for an attempt that says nothing of the service (interrupted, or
// no attempt made).
func (c *Concurrency) Release(ticket int64, o Outcome, learn bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight--
	if !c.steady.from.IsZero() {
		c.steady.attempts++
	}
	inRound := ticket != 0 && ticket == c.round
	if learn && inRound {
		c.learnLocked(o)
	}
	if learn && ticket < 0 && c.check.on && ticket == -c.check.round && o.Status >= 200 && o.Status < 300 && o.Op != "preflight" {
		k := 1
		if o.Op == "createLead" {
			k = 0
		}
		c.check.before[k].add(min(o.Latency.Seconds(), concClip*c.check.base))
	}
	if learn && c.slowStart && c.limit < c.ramp && o.Status >= 200 && o.Status < 300 && o.Op != "preflight" {
		// The rest of slow start's doubling, one place per answer (as
		// TCP's slow start opens its window by one segment per ACK):
		// the whole step at once sent 64 calls together into a service
		// that had room for 32 (K 64, queue 32: 64 -> 128 in flight),
		// and it shed the other 32 and 9 more before the first 503s
		// cut the limit (conc.sh's halve: 1.9-2.1% of its calls). One
		// at a time, the first calls past its queue are shed at once
		// and stop the climb after a few.
		c.setLimitLocked(min(c.limit+1, c.ramp))
	}
	if learn && ticket != 0 && ticket == -c.round && isOverload(o) && o.Op != "preflight" {
		c.outHard++
	}
	if learn && o.Status >= 200 && o.Status < 300 && o.Op != "preflight" {
		k := 1
		if o.Op == "createLead" {
			k = 0
		}
		c.opLat[k].add(o.Latency.Seconds())
	}
	if learn && !c.fixed && isOverload(o) && c.overloadLocked() {
		// The service sheds more calls than it usually does: this one's
		// place goes, at once, not at the round's end, or it would be
		// taken by the next call, shed as fast, again and again. A share
		// of 503s that does not grow with the calls in flight (one bad
		// backend) takes nothing: its calls are retried, and the limit
		// is not what it answers.
		if c.slowStart && c.ramp > 0 {
			// In slow start's doubling: the service is full at the
			// calls in flight now. Slow start ends there (a cut for
			// back pressure), and the round starts again: its calls,
			// sent as the queue was filling, would make the latency cut
			// that comes next land above the capacity (the mean of such
			// a round was 1.36 bases against 1.5 at a full queue: K 64,
			// queue 32, a cut to 67 where one from a full round is 60).
			now := c.now()
			c.pressureCuts++
			c.pressurePast = c.capLocked()
			c.cutLocked(now, min(c.limit-1, float64(c.inFlight)))
			c.startRoundLocked(now)
		} else {
			c.setLimitLocked(c.limit - 1)
		}
	}
	if inRound {
		c.answerLocked(ticket)
	}
	if !c.fixed && c.round != 0 {
		c.overdueLocked(c.now())
	}
	c.grantLocked()
}

// overloadLocked reports whether the round's overload answers so far are
// more than the usual share explains: by concPressure of its calls and by
// three standard deviations of the usual share's count, and at least one.
// Its calls are those sent, not those answered: a shed call answers at
// once, and the first answers of a round would be its 503s. The calls sent
// since the round's own count too (outSent, outHard): against a capacity
// that halves, they are the ones shed, by the hundred a second, while the
// round's own still wait in the service's queue.
func (c *Concurrency) overloadLocked() bool {
	n, p := float64(max(c.n, c.sent)+c.outSent), c.usual
	hard := c.hard + c.outHard
	excess := float64(hard) - n*p
	return hard > 0 && excess >= max(1, concPressure*n, 3*math.Sqrt(n*p*(1-p)))
}

// learnLocked counts one answer of the round, and ends the round early
// on strong evidence: latency far past the base, or overload answers
// beyond the usual share.
func (c *Concurrency) learnLocked(o Outcome) {
	if o.Op == "preflight" {
		return // one query before the first row, answered at once
	}
	c.n++
	switch {
	case o.Status >= 200 && o.Status < 300:
		l := o.Latency.Seconds()
		k := 1
		if o.Op == "createLead" {
			k = 0
		}
		if !c.firstDone {
			c.first[k] = append(c.first[k], l)
		}
		if c.check.on && !c.roundStart.Before(c.check.at) {
			c.check.lat[k].add(min(l, concClip*c.check.base))
			if c.check.median > 0 {
				c.check.samples = append(c.check.samples, l)
			}
		}
		if c.base > 0 {
			l = min(l, concClip*c.base)
		}
		c.lat[k].add(l)
	case isOverload(o):
		c.hard++
	case o.Status == http.StatusTooManyRequests:
		c.throttled++
	}
	if c.base == 0 {
		return
	}
	_, need := c.roundSpanLocked()
	lat := c.latLocked()
	if lat.ok >= min(need, concRoundMin) && c.meanLocked() > c.base*(1+concEarly)+concSlack.Seconds()+c.noiseLocked(lat.ok, lat.variance()) {
		c.endRoundLocked(0)
		return
	}
	if c.n >= min(need, concRoundMin) && float64(c.hard) >= concPressure*float64(need) && c.overloadLocked() {
		c.endRoundLocked(0)
	}
}

// noiseLocked is how far the mean of n latencies, whose own variance is
// varW, may stray from the base by chance: three standard errors of their
// difference (Welch's), at the spread of one answer the recent rounds
// show (a slow credit bureau behind some calls, heavy tails, the client's
// own stalls) for the base, and at the larger of that and the round's own
// for the round. A round of a heavy tail spreads wider than the rounds
// before it told, early in a run (a Pareto tail's variance has no
// bound): its mean is that much less sure, and judged at the recent
// rounds' spread alone it looked like a queue one round in a few, ending
// slow start at 16 (pace's short model runs). A queue delays a round's
// calls alike: its own spread stays small; and against a service shown
// tight (see baseFromHistoryLocked) a round that spreads wide is one
// whose later calls queued, not chance: its own spread is not counted.
func (c *Concurrency) noiseLocked(n int, varW float64) float64 {
	s2 := c.sigma * c.sigma
	if c.tight {
		varW = 0
	}
	return 3 * math.Sqrt(max(s2, varW)/float64(max(n, 1))+s2/float64(max(c.baseN, 1)))
}

// pushRoundLocked keeps the round r for the base, drops those older than
// concBaseWindow, and works out again the base, the spread and the usual
// share of overload answers.
func (c *Concurrency) pushRoundLocked(r concRound) {
	keep := c.history[:0]
	for _, h := range c.history {
		if age := r.at.Sub(h.at); age < concBaseWindow && (!h.firstQuarter || age < concFirstKeep) {
			keep = append(keep, h)
		}
	}
	c.history = append(keep, r)
	c.baseFromHistoryLocked()
}

// baseFromHistoryLocked works out from the rounds kept the base (see
// baseBelowLocked), the spread of one answer, whether the service's
// answers are tight or heavy-tailed, and the usual share of overload
// answers.
//
// The spread is the standard deviation of one answer's latency in the
// rounds at the lower half of the limits that showed no queue, with a
// prior of half the base (weighing concPrior answers) until they have
// shown the service's own: eight calls of 50 ms say nothing of the one in
// ten that takes 2 s. Tight: concThick answers of those rounds, spread
// under concHeavy bases. Heavy: they spread wider, or the answers of all
// the rounds spread past concHeavySpread of their round's mean (a queue
// delays most calls of a round alike; a slow call in ten or a heavy tail
// does not). The usual share of overload answers is that of the rounds at
// the lower half of the limits, with a prior of one in ten (weighing ten
// answers): 503s that come as often at a low limit as at a high one are
// not the calls' doing.
func (c *Concurrency) baseFromHistoryLocked() {
	levels := make([]int, 0, len(c.history))
	for _, h := range c.history {
		levels = append(levels, h.level)
	}
	slices.Sort(levels)
	lower := levels[(len(levels)-1)/2]
	var calm, calmVar, all, allVar, allSq float64
	rounds, answers, overload := 0, 0, 0
	for _, h := range c.history {
		if h.level <= lower {
			answers += h.answers
			overload += h.overload
		}
		if h.firstQuarter {
			continue
		}
		rounds++
		n := float64(h.n)
		all += n
		allVar += n * h.varW
		allSq += n * h.mean * h.mean
		if h.calm && h.level <= lower {
			calm += n
			calmVar += n * h.varW
		}
	}
	c.usual = float64(overload+1) / float64(answers+10)
	tight := func(base float64) bool { return calm >= concThick && calmVar <= concHeavy*concHeavy*base*base*calm }
	// Heavy before the base, which it gives its quantile: by the base so far.
	c.heavy = calm >= concThick && !tight(c.base) || all >= concThick && allVar > concHeavySpread*concHeavySpread*allSq
	c.base = c.baseBelowLocked(0)
	c.tight = tight(c.base)
	prior := concPriorSpread * c.base
	c.sigma = math.Sqrt((calmVar + concPrior*prior*prior) / (calm + concPrior))
	c.baseN = max(int(all)/max(rounds, 1), min(int(all), concBaseAnswers))
}

// baseBelowLocked is the base for a round at level: the latency with no
// queue, as the rounds kept at lower limits show it (all of them when
// there are none, or level is 0), and the rounds at higher limits that
// showed no queue (calm); 0 when there are none. (Without those: once a
// capacity halved, the rounds at the limits under the last were over
// the new capacity too, their queue made the base, and the limit climbed
// on it: K 64 -> 32, queue wait 205-253 ms from 5 s after in 4 draws of
// 24.) It is the lowest
// of their means, or, against a heavy-tailed service, a low quantile
// (concBaseQuant): the lowest would be a round's luck to have none of the
// slow calls, and every typical round would look like a queue. Rounds of
// few answers (a low limit) are taken together, in the order they came,
// by concBaseAnswers answers: their means would be all luck.
func (c *Concurrency) baseBelowLocked(level int) float64 {
	lower := false
	for _, h := range c.history {
		if h.level < level {
			lower = true
			break
		}
	}
	var means []float64
	var chunk latencySum
	for _, h := range c.history {
		if lower && h.level >= level && !h.calm {
			continue
		}
		if h.firstQuarter {
			means = append(means, h.mean)
			continue
		}
		chunk.ok += h.n
		chunk.sum += h.mean * float64(h.n)
		if chunk.ok >= concBaseAnswers {
			means = append(means, chunk.sum/float64(chunk.ok))
			chunk = latencySum{}
		}
	}
	if len(means) == 0 && chunk.ok > 0 {
		means = append(means, chunk.sum/float64(chunk.ok))
	}
	if len(means) == 0 {
		return 0
	}
	slices.Sort(means)
	if !c.heavy {
		return means[0]
	}
	return means[int(concBaseQuant*float64(len(means)-1)+0.5)]
}

// endRoundLocked decides on the round's answers; unanswered calls of it
// (the round is overdue) count as concClip bases each.
func (c *Concurrency) endRoundLocked(unanswered int) {
	now := c.now()
	defer c.startRoundLocked(now)
	lat := c.latLocked()
	clip := c.clipBaseLocked()
	if !c.firstDone && clip > 0 {
		// The first round's answers were not clipped as they came (no
		// base yet): they are now, and its calls still out count as
		// clipped, as they do for the first round's rule.
		first := &c.first[1]
		if lat == &c.lat[0] {
			first = &c.first[0]
		}
		for range unanswered {
			*first = append(*first, concClip*clip)
		}
		*lat = latencySum{}
		for _, l := range *first {
			lat.add(min(l, concClip*clip))
		}
	} else {
		for range unanswered {
			lat.add(concClip * clip)
		}
	}
	mean, ok := c.meanLocked(), lat.ok
	varW := 0.0
	if ok > 1 {
		varW = max(lat.sumSq/float64(ok)-mean*mean, 0)
	}
	r := concRound{at: now, level: c.roundLevel, n: ok, mean: mean, varW: varW, answers: c.n + unanswered, overload: c.hard}
	c.sinceCut++
	pressure := 1.0 // the share of the limit back pressure keeps
	switch {
	case c.n > 0 && float64(c.hard) >= concPressure*float64(c.n) && c.overloadLocked():
		pressure = concCut503
	case c.throttled > 0 && c.bound && float64(c.throttled) >= concPressure*float64(c.n):
		pressure = concCut429
	}
	cutForPressure := func() {
		c.pressureCuts++
		c.pressurePast = c.capLocked()
		c.cutLocked(now, c.limit*pressure)
	}
	if mean == 0 {
		if r.answers > 0 {
			c.pushRoundLocked(r)
		}
		if pressure < 1 {
			cutForPressure()
		}
		return
	}
	if !c.firstDone {
		first := c.first[1]
		if c.lat[0].ok > 0 {
			first = c.first[0]
		}
		c.first = [2][]float64{}
		if c.held.on {
			c.firstDone = true
			if c.heldRoundLocked(now, r, first, pressure) {
				return
			}
		} else if c.firstRoundLocked(now, r, first, pressure) {
			return
		}
	}
	base := c.baseBelowLocked(c.roundLevel)
	noise := c.noiseLocked(ok, varW)
	threshold := base*(1+concTolerance) + concSlack.Seconds() + noise
	rose := false
	if c.check.on && c.check.lat[0].ok+c.check.lat[1].ok >= concBaseAnswers {
		// The answers to calls sent after a latency cut, by
		// concBaseAnswers: if they are quicker than those that caused
		// it, the cut found a queue; if twice they are not, the latency
		// was not the calls' doing (a service slower by itself, a stall
		// of the client's machine, a heavy tail the first round took
		// for a queue): the cut is undone, and the rounds before it no
		// longer make the base. A window slower than the one before it
		// (or than the latency that caused the cut) says nothing of the
		// cut: with the calls in flight the same or fewer, the service
		// got slower meanwhile, its capacity fell (the queue behind it
		// still growing) or its own latency rose. It is no miss; the
		// windows after it are judged against it, and it alone may cut
		// again while the cut is checked (rose).
		k := 0
		if c.check.lat[0].ok == 0 {
			k = 1
		}
		l, b := c.check.lat[k], c.check.before[k]
		got, was := 0.0, c.check.mean
		if l.ok > 0 {
			got = l.sum / float64(l.ok)
		}
		fell := got < was*(1-concTolerance)
		if b.ok >= concBaseAnswers {
			// The calls sent last before the cut, as late as those
			// after it: their queue was the limit's whole queue. They
			// tell whether the cut helped; whether the service got
			// slower is told against the round that made the cut, sent
			// before them: when the capacity halved just after the cut,
			// they waited in the new queue as long as the calls after
			// it, and against them alone those were flat, not slower,
			// twice, and the cut was undone (bench/conc.sh's halve64,
			// one run of four).
			fell = got < max(was, b.sum/float64(b.ok))*(1-concTolerance)
		}
		prev := was
		if c.check.last > 0 {
			prev = c.check.last
		}
		if c.check.median > 0 && len(c.check.samples) > 0 {
			// The first rounds' cut: the median must fall half way to
			// the first round's quickest quarter's mean, and by a
			// quarter at least. Half way alone, a heavy tail's median
			// of 8 answers fell there by chance one check in three
			// (Pareto α 1.5, a quickest quarter 2/3 of the median), and
			// the cut stood; the answers behind a queue the held round
			// confirmed (its calls all queued) fall by half or more.
			slices.Sort(c.check.samples)
			got = c.check.samples[(len(c.check.samples)-1)/2]
			fell = got < min((c.check.median+c.check.base)/2, concFirstFall*c.check.median)
		}
		c.check.lat, c.check.samples = [2]latencySum{}, c.check.samples[:0]
		switch {
		case l.ok == 0:
		case fell:
			c.check = cutCheck{}
		case c.check.median == 0 && got > prev*(1+concTolerance/2)+c.noiseLocked(l.ok, l.variance()):
			// Judged against the cut's latency, the answers behind a
			// capacity that halved just after the cut were no quicker,
			// twice, and the cut was undone into the new queue (K 64 ->
			// 32, queue 64: 3 draws of 8, queue wait 516-728 ms). Slower
			// by more than chance (the window's noise): a window of 8
			// answers at ±0.2 s around 1.5 s is 4% over the last by
			// chance about one time in six, and each such one cut again
			// while the check of a service slower by itself ran (K 32,
			// L 1 -> 1.5 s, draw 36 of 48: 32 -> 19 -> 12, undone at 42 s).
			c.check.mean, c.check.misses, c.check.last, rose = got, 0, got, true
			c.check.round, c.check.before = 0, [2]latencySum{}
		case c.check.misses+1 >= concCutMisses:
			// The rounds before the cut quicker than these are of a
			// service that was quicker then (or of a first round's
			// queue that was not one): they no longer make the base.
			c.undone++
			c.slowStart = c.slowStart || c.check.slowStart
			c.setLimitLocked(max(c.limit, c.check.from))
			keep := c.history[:0]
			for _, h := range c.history {
				if !h.firstQuarter && (!h.at.Before(c.check.at) || h.mean >= got*(1-concTolerance)) {
					keep = append(keep, h)
				}
			}
			c.history = keep
			c.check = cutCheck{}
			r.calm = true
			c.pushRoundLocked(r)
			return
		default:
			c.check.misses++
			c.check.last = got
		}
	}
	exceeded := c.exceeded
	c.exceeded = false
	if exceeded && mean <= threshold && len(c.history) > 0 {
		// The last round was past the threshold and this one is not:
		// it was the service's spread (a slow call or two), no queue.
		c.history[len(c.history)-1].calm = true
	}
	r.calm = base == 0 || mean <= threshold
	c.pushRoundLocked(r)
	if pressure < 1 {
		cutForPressure()
		return
	}
	switch {
	case base > 0 && mean > threshold && c.check.on && (c.check.median > 0 || !rose):
		// A cut is checked. The first round's: its base is that round's
		// quickest quarter, far under the typical answer of a heavy
		// tail. Until the answers at the limit it cut to tell a queue
		// (they are quicker) from the service's spread (they are not:
		// the cut is undone), no round cuts against that base: each did,
		// and a lognormal service went from 8 to 1 in a second. Any
		// other: only a window slower than the last cuts again (rose).
		// A service slower by itself is past the threshold in every
		// round until the check undoes the cut; a cut at each (0d751c1)
		// took K 32, L 1 s -> 1.5 s from 34 to 6 and to 3 in two draws
		// of 8, before the undo came 25 s later.
		return
	case base > 0 && mean > threshold && !exceeded && !c.tight && mean <= base*(1+concEarly)+concSlack.Seconds()+noise:
		// Past the threshold, not by much, against a service whose
		// answers spread wide (a slow call in ten, a heavy tail): one
		// round in twenty of those is. A queue is still there in the
		// next round; no growth until it tells.
		c.exceeded = true
		return
	case base > 0 && mean > threshold:
		c.latencyCuts++
		c.rosePast = c.capLocked()
		if !c.check.on {
			c.check = cutCheck{on: true, from: c.limit, slowStart: c.slowStart, mean: mean, base: base, at: now, round: c.round}
		} else {
			// A cut while an earlier one is checked: the answers from
			// now on are judged against the latency that caused this
			// one. Judged against the earlier cut's, quicker, when the
			// capacity halved just after a cut of the sawtooth, the
			// answers behind the new queue were slower, twice, and the
			// undo took the limit back over both cuts, into the queue
			// (K 64 -> 32, queue 64: undone in 5 draws of 8, queue wait
			// 478-926 ms). An undo still goes back to the limit before
			// the first (a service slower by itself draws cuts in a row).
			c.check.mean, c.check.base, c.check.at, c.check.last = mean, base, now, 0
			c.check.round, c.check.before = c.round, [2]latencySum{}
			c.check.lat, c.check.median, c.check.samples = [2]latencySum{}, 0, c.check.samples[:0]
		}
		// Latency cuts in a row (one a round) compound: a stall of the
		// client's machine (its CPUs shared) that outlasts a round of a
		// fast service would take the limit from K to 1 in a few rounds.
		// Within concCutSpan they go at most to half of the limit before
		// the first; a capacity that halves is followed in that time
		// still (at 1 s a call, each round is a span of its own).
		if c.cutSpanFrom.IsZero() || now.Sub(c.cutSpanFrom) >= concCutSpan {
			c.cutSpanFrom, c.cutSpanLimit = now, c.limit
		}
		floor := max(c.limit/2, c.cutSpanLimit/2)
		if c.heavy || varW > concHeavySpread*concHeavySpread*mean*mean || !c.tight && mean <= base*(1+concEarly)+concSlack.Seconds()+noise {
			// A service whose answers spread wide: its mean of one round
			// says little of the capacity, and a queue costs it less
			// than a place left empty.
			floor = max(floor, c.limit*concHeavyCut)
		}
		c.cutLocked(now, max(c.limit*base/mean*concUnder, floor))
	case c.slowStart && base > 0 && mean > base*(1+concTolerance/2)+concSlack.Seconds()+noise:
		// Like HyStart: latency begins to rise, so the limit is near the
		// capacity: no more doubling, which would overshoot it by up
		// to twice.
		c.slowStart, c.ramp = false, 0
		c.setLimitLocked(c.limit)
	case c.bound && !c.check.on:
		// (Not while a cut is checked: its rounds measure the limit it
		// cut to.)
		step := c.limit // slow start: double, concStartStep of it now, the rest as answers come (Release)
		if !c.slowStart {
			step = max(0.25, c.limit*concGrowth*(1+float64(c.sinceCut)/8))
		} else {
			c.ramp = c.limit + step
			step *= concStartStep
		}
		c.setLimitLocked(c.limit + step)
	}
}

// firstRoundLocked decides on the first round, which has no base to
// compare with; it reports whether it held the round or cut. When the
// start is above the capacity, its quickest calls are those that found a
// free place and the others queued behind them, a whole service time per
// place: a median more than concFirstQueue times the quickest quarter's
// mean is a queue, and that quarter is the base. (The median, not the
// mean: a slow call of ten does not move it, where a queue that holds
// half the calls does.) A heavy tail looks like that too, one first
// round of eight in six to ten (Pareto α 1.5, lognormal σ 1), and a cut
// for it cost a short run a third of its time: such a round is held,
// the limit kept, and the second round tells (heldRoundLocked). With
// overload answers past their usual share it cuts at once.
func (c *Concurrency) firstRoundLocked(now time.Time, r concRound, first []float64, pressure float64) bool {
	c.firstDone = true
	quick, median, queue := staircase(first)
	if !queue {
		return false
	}
	if pressure == 1 {
		c.firstDone, c.held = false, heldFirst{on: true, quick: quick, median: median}
		return true
	}
	c.firstCutLocked(now, r, first, quick, median, pressure)
	return true
}

// staircase sorts a first round's latencies and reports its quickest
// quarter's mean, its median, and whether they are a queue's: a median
// more than concFirstQueue times the quickest quarter's, and a slowest
// quarter within concFirstTop medians (a queue's slowest waited for at
// most as many places again as its median did; a heavy tail's are far
// out).
func staircase(first []float64) (quick, median float64, queue bool) {
	if len(first) == 0 {
		return 0, 0, false
	}
	slices.Sort(first)
	q := first[:max(1, len(first)/4)]
	for _, l := range q {
		quick += l
	}
	quick /= float64(len(q))
	median = (first[(len(first)-1)/2] + first[len(first)/2]) / 2
	top := first[len(first)-len(q):]
	slow := 0.0
	for _, l := range top {
		slow += l
	}
	slow /= float64(len(top))
	return quick, median, median > concFirstQueue*quick && slow <= concFirstTop*median
}

// heldRoundLocked decides on the second round after a first one held:
// it reports whether it cut. Against a queue the second round's calls
// wait behind those sent before them, and even the quickest is past the
// first round's median (K=2 at 8 in flight: 4 service times against 2.5;
// K=4: 2 against 1.5); against a service's own spread the second round's
// eight calls are all past the first's median one time in 26 at most,
// whatever the distribution (the four quickest of the 16 calls all in
// the first round: 70 ways in 1,820). When the second round too left
// together into an empty queue (--rate auto holds the calls after the
// first 8 until those are answered, b671208), it is a first round again:
// the same staircase twice is a queue, where a heavy tail's first round
// passes for one once in 6-10 (Pareto α 1.5, lognormal σ 1), twice in a
// row once in 40-150 (lognormal σ 0.5: once in 2, and in 4; the check
// undoes those). Calls sent one by one as places free show no staircase,
// whatever the service. Then it cuts, as the first round would have, at
// the second round's latency.
func (c *Concurrency) heldRoundLocked(now time.Time, r concRound, first []float64, pressure float64) bool {
	held := c.held
	c.held = heldFirst{}
	if len(first) == 0 {
		return false
	}
	lowest := slices.Min(first)
	_, median, again := staircase(first)
	burst := c.lastSent.Sub(c.roundStart).Seconds() < held.quick/4 // its calls left together
	if lowest < held.median && !(burst && again) {
		c.carryHeldLocked(held, burst)
		return false
	}
	c.firstCutLocked(now, r, first, held.quick, median, pressure)
	return true
}

// carryHeldLocked keeps a held first round's test for the next round
// when this one, after it, could not tell: a burst whose calls were of
// two operations (createLeads and the submitLeads of the rows the first
// round created) waited in one queue, but only its createLeads are
// judged, and three or four of eight that found the first places show no
// staircase (0.2, 0.2, 0.4, 0.8 s behind a capacity of 2: a median of 1.5
// quickest). Judged so, slow start went on into the queue and the run sat
// at 8-10 in flight for its whole length (bulkload sim --capacity 2
// --queue-limit 8, 200 ms, 60 rows: 1 run in 7; pace's model, 35 draws of
// 200). The round is judged as before meanwhile (no round is lost: a
// service's own spread passes the next test 25 times in 26); under a
// queue the next round's calls, sent as places free, wait behind the
// burst's, its quickest is past the held round's median, and it cuts. At
// most concHeldMixed rounds carry it.
func (c *Concurrency) carryHeldLocked(held heldFirst, burst bool) {
	if !burst || c.lat[0].ok == 0 || c.lat[1].ok == 0 || held.mixed >= concHeldMixed {
		return
	}
	held.mixed++
	c.firstDone, c.held = false, held
}

// firstCutLocked cuts the limit for a queue the first rounds found: their
// latencies first (sorted), the quickest quarter's of the first round
// quick, the median of those that showed the queue median.
func (c *Concurrency) firstCutLocked(now time.Time, r concRound, first []float64, quick, median, pressure float64) {
	mean := 0.0
	for _, l := range first {
		mean += min(l, concClip*quick)
	}
	mean /= float64(len(first))
	c.pushRoundLocked(concRound{at: now, level: r.level, n: r.n, mean: quick, answers: r.answers, overload: r.overload, firstQuarter: true})
	c.latencyCuts++
	c.rosePast = c.capLocked()
	c.check = cutCheck{on: true, from: c.limit, slowStart: c.slowStart, mean: mean, base: quick, at: now, median: median}
	c.cutLocked(now, max(min(c.limit*quick/mean*concUnder, c.limit*pressure), 1))
}

func (c *Concurrency) cutLocked(now time.Time, to float64) {
	c.slowStart, c.ramp = false, 0
	c.sinceCut = 0
	c.lastCut = now
	c.setLimitLocked(to)
}

// steadyClock keeps the limit over the run's steady part: from the end of
// the climb (the first cut, the end of slow start or the cap reached; the
// first call for a fixed limit or one settled in an earlier run) on. Its
// median and mean are what to pin, and its calls a second what the
// service took once the limit was found.
type steadyClock struct {
	from     time.Time
	full0    time.Duration // the time with every place taken, at from
	at       time.Time     // the limit in force since
	limit    int
	time     map[int]time.Duration
	attempts int64 // attempts answered since from
}

func (s *steadyClock) start(now time.Time, limit int, full time.Duration) {
	if !s.from.IsZero() {
		return
	}
	s.from, s.full0, s.at, s.limit = now, full, now, limit
	s.time = map[int]time.Duration{}
}

// note records that the limit is l from now on.
func (s *steadyClock) note(now time.Time, l int) {
	if s.from.IsZero() || l == s.limit {
		return
	}
	s.time[s.limit] += now.Sub(s.at)
	s.at, s.limit = now, l
}

// figures are the median and mean limit from the start of the steady
// part until now (0: none yet).
func (s *steadyClock) figures(now time.Time) (median int, mean float64) {
	if s.from.IsZero() {
		return 0, 0
	}
	type span struct {
		l int
		d time.Duration
	}
	spans := make([]span, 0, len(s.time)+1)
	var total time.Duration
	var sum float64
	add := func(l int, d time.Duration) {
		if d > 0 {
			spans = append(spans, span{l, d})
			total += d
			sum += float64(l) * d.Seconds()
		}
	}
	for l, d := range s.time {
		add(l, d)
	}
	add(s.limit, now.Sub(s.at))
	if total == 0 {
		return s.limit, float64(s.limit)
	}
	slices.SortFunc(spans, func(a, b span) int { return a.l - b.l })
	var cum time.Duration
	for _, x := range spans {
		cum += x.d
		if 2*cum >= total {
			median = x.l
			break
		}
	}
	return median, sum / total.Seconds()
}

// ConcurrencySnapshot is a Concurrency's state at one moment.
type ConcurrencySnapshot struct {
	// Auto is --concurrency auto; Limit is the limit now, Max its cap
	// (auto) or the fixed limit; both 0 when the Client sets none.
	Auto       bool
	Limit, Max int
	// InFlight is the attempts holding a place now, Waiting those
	// waiting for one, PeakInFlight the most at once.
	InFlight, Waiting, PeakInFlight int
	// LatencyCuts and PressureCuts count auto's cuts for a latency that
	// rose with the calls in flight and for back pressure (503, 504 and
	// timeouts beyond their usual share, 429s); RosePast is the limit
	// before the last latency cut and PressurePast the one before the
	// last back-pressure cut. UndoneCuts counts the latency cuts undone
	// because the latency did not fall with the limit.
	LatencyCuts, PressureCuts int
	RosePast, PressurePast    int
	UndoneCuts                int
	// SlowStart: auto has not cut yet.
	SlowStart bool
	// BaseLatency is the latency auto compares rounds with (0: none yet):
	// createLead's, when the rounds have any. CreateLatency and
	// OtherLatency are the mean latencies of the run's 2xx answers to
	// createLead and to the other calls (submitLead, lead reads): a
	// mean of both would mix a credit pull with a status change.
	BaseLatency                 time.Duration
	CreateLatency, OtherLatency time.Duration
	// Waited is the time during which attempts waited for a place (the
	// limit bound), Since the time since the first attempt.
	Waited, Since time.Duration
	// The steady part of the run, from the end of auto's climb (its
	// first cut, the end of slow start or the cap reached; for a fixed
	// limit or one an earlier run settled at, the first attempt):
	// Steady is how long it has lasted (0: the limit still climbs),
	// SteadyWaited the time in it with every place taken, SteadyAttempts
	// the attempts answered in it, and SteadyLimit and SteadyMeanLimit
	// the median and mean of the limit over it, weighted by time.
	Steady, SteadyWaited time.Duration
	SteadyAttempts       int64
	SteadyLimit          int
	SteadyMeanLimit      float64
}

// Snapshot returns the state now. Safe for concurrent use, cheap enough
// for a progress line or a per-second timeline.
func (c *Concurrency) Snapshot() ConcurrencySnapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	s := ConcurrencySnapshot{Auto: !c.fixed, Limit: c.capLocked(), Max: c.max, InFlight: c.inFlight, Waiting: len(c.queue),
		PeakInFlight: c.peak, LatencyCuts: c.latencyCuts, PressureCuts: c.pressureCuts, RosePast: c.rosePast,
		PressurePast: c.pressurePast, UndoneCuts: c.undone, SlowStart: c.slowStart && !c.fixed,
		Waited: c.waitedLocked(now)}
	s.BaseLatency = time.Duration(c.base * float64(time.Second))
	for k, d := range []*time.Duration{&s.CreateLatency, &s.OtherLatency} {
		if l := c.opLat[k]; l.ok > 0 {
			*d = time.Duration(l.sum / float64(l.ok) * float64(time.Second))
		}
	}
	if !c.steady.from.IsZero() {
		s.Steady = now.Sub(c.steady.from)
		s.SteadyWaited = s.Waited - c.steady.full0
		s.SteadyAttempts = c.steady.attempts
		s.SteadyLimit, s.SteadyMeanLimit = c.steady.figures(now)
	}
	if c.max == NoLimit {
		s.Limit, s.Max = 0, 0 // none set: the caller's pool is the limit
		s.SteadyLimit, s.SteadyMeanLimit = 0, 0
	}
	if !c.firstAcquired.IsZero() {
		s.Since = now.Sub(c.firstAcquired)
	}
	return s
}

// Limits returns the limit and the attempts in flight now: the two figures
// of a timeline, at the cost of one lock.
func (c *Concurrency) Limits() (limit, inFlight int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.max == NoLimit {
		return 0, c.inFlight
	}
	return c.capLocked(), c.inFlight
}
