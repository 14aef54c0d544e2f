package submitter

import (
	"context"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Tuning of the concurrency (--concurrency auto). The figures come from the
// anchors named in docs/design.md and from bench/conc.sh's runs against
// leadsim.
const (
	// DefaultStartConcurrency is where auto starts: today's fixed default,
	// polite before anything is known.
	DefaultStartConcurrency = 8
	// DefaultMaxConcurrency caps auto unless --max-concurrency says
	// otherwise: a polite client against a service nobody has measured.
	// 256 calls in flight is what the transport keeps idle connections
	// for (a call above it would open and close a connection each time);
	// at 1.5 s a call it is 170 calls/s, a 200,000-lead night file in
	// about 30 minutes; and a service that takes fewer shows it by its
	// latency long before.
	DefaultMaxConcurrency = 256

	concTolerance   = 0.08                   // latency this much above its base (plus concSlack) is a queue in the service
	concSlack       = 500 * time.Microsecond // absolute slack: half a millisecond's noise is no queue
	concEarly       = 0.5                    // a round whose first samples are this much above the base decides early
	concRoundMax    = 64                     // samples that make a round at most
	concRoundMin    = 4                      // samples that make a round at least
	concRoundTime   = 100 * time.Millisecond // a round sends at least this long (up to concRoundMax calls) against a faster service
	concBaseAnswers = 8                      // answers of a round at least to set the base (or the limit, when lower)
	concFirstQueue  = 1.5                    // the first round's mean past this times its quickest quarter's: the start is above the capacity
	concJitterAlpha = 0.1                    // weight of a round in the jitter's moving average
	concUnder       = 0.95                   // a latency cut lands this much under the capacity it estimates, to see the base again
	concGrowth      = 0.05                   // after slow start, the limit's share added per round that binds
	concCut503      = 0.75                   // share kept after a round with overload answers (503, 504, timeouts)
	concCut429      = 0.9                    // share kept after a round with 429s while the limit binds
	concPressure    = 0.1                    // share of a round's answers that are overload, to cut
	concBaseWindow  = 20 * time.Second       // the base latency is the lowest round mean this far back
	concCutSpan     = time.Second            // latency cuts within this span take the limit at most to half of where the span began
)

// ConcurrencyConfig configures a Concurrency. Zero values take the
// defaults.
type ConcurrencyConfig struct {
	// Fixed > 0 is a fixed limit (--concurrency N): nothing is learned.
	Fixed int
	// Start is auto's first limit (default DefaultStartConcurrency), Max
	// its cap (--max-concurrency, default DefaultMaxConcurrency).
	Start, Max int
	Now        func() time.Time // nil = time.Now
}

// Concurrency is the limit on calls in flight shared by every call of a
// Client: each HTTP attempt takes a place before it is sent and gives it
// back with its outcome. Fixed, it is --concurrency N. Auto (--concurrency
// auto) learns the limit: it grows while the limit binds and latency holds,
// and cuts when latency shows a queue in the service or when the service
// sheds calls (503, 504, timeouts) or throttles them (429). The design and
// its anchors (TCP slow start, Netflix Gradient2, Vector's ARC) are in
// docs/design.md, "Adaptive concurrency (--concurrency auto)"; the conc*
// constants are its tuning.
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
	// limit or for a base latency; it ends when all sent are answered.
	round      int64 // its number, from 1; 0 before the first call
	roundStart time.Time
	sending    bool
	sent       int
	answered   int
	n, hard    int           // answers; of them overload answers
	throttled  int           // 429s
	lat        [2]latencySum // of the 2xx answers: createLead's, the others'
	bound      bool          // the limit bound during the round
	slowStart  bool
	sinceCut   int // rounds since the last cut
	// The base latency's window: the lowest round mean since baseFrom,
	// and in the half window before (seconds; 0 = none).
	baseCur, basePrev float64
	nCur, nPrev       int     // the answers of the rounds that set them
	jitter            float64 // the latencies' standard deviation in rounds without a queue, a moving average
	baseFrom          time.Time
	latencyCuts       int
	pressureCuts      int
	rosePast          int // the limit before the last latency cut
	pressurePast      int // the limit before the last back-pressure cut
	lastCut           time.Time
	cutSpanFrom       time.Time     // the first latency cut of the concCutSpan now running
	cutSpanLimit      float64       // the limit before it
	fullSince         time.Time     // every place taken (or calls waiting) since
	fullTotal         time.Duration // time with every place taken
	first             [2][]float64  // the first round's latencies (seconds) as lat, for its base
	firstAcquired     time.Time
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
	c.slowStart = true
	return c
}

// capLocked is the limit as a number of calls.
func (c *Concurrency) capLocked() int { return max(1, int(c.limit+0.5)) }

// Acquire takes a place for one attempt, waiting in line for one, or
// returns ctx's error. The ticket goes back with Release.
func (c *Concurrency) Acquire(ctx context.Context) (ticket int64, err error) {
	c.mu.Lock()
	now := c.now()
	if c.firstAcquired.IsZero() {
		c.firstAcquired = now
	}
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
// it belongs to, 0 for none (sent after the round's calls).
func (c *Concurrency) takeLocked() int64 {
	c.inFlight++
	c.peak = max(c.peak, c.inFlight)
	if c.inFlight >= c.capLocked() {
		c.bound = true
		c.fullLocked()
	}
	if c.fixed {
		return 0
	}
	if c.round == 0 {
		c.startRoundLocked(c.now())
	}
	if !c.sending {
		return 0
	}
	if span, _ := c.roundSpanLocked(); span > 0 && c.now().Sub(c.roundStart).Seconds() >= span {
		// A base latency has passed: the round's calls are those sent
		// so far, and if none was, the round starts again with this one.
		// If all were answered already, the round ends, and this call
		// is the next one's first.
		switch {
		case c.sent == 0:
			c.roundStart = c.now()
		case c.answered >= c.sent:
			c.endRoundLocked(c.meanLocked())
		default:
			c.sending = false
			return 0
		}
	}
	c.sent++
	if _, calls := c.roundSpanLocked(); c.sent >= calls {
		c.sending = false
	}
	return c.round
}

// roundSpanLocked is how long a round sends (seconds; 0 before a base
// latency is known) and how many calls at most: one base latency, up to
// the limit (at least concRoundMin, at most concRoundMax). Against a fast
// service (a base under concRoundTime) a round sends for concRoundTime,
// up to concRoundMax calls: a round of one base latency would be the
// limit's few calls (8 calls of 20 ms), whose mean swings with the
// client's own stalls on a busy machine, and the limit would swing with
// it, a cut or a step every few milliseconds: its mean over the swing,
// not K, is what the service gets (bench/README.md, cap8).
func (c *Concurrency) roundSpanLocked() (span float64, calls int) {
	base, _ := c.baseLocked()
	if rt := concRoundTime.Seconds(); base > 0 && base < rt {
		return rt, concRoundMax
	}
	return base, min(max(c.capLocked(), concRoundMin), concRoundMax)
}

// startRoundLocked starts a round at now: the next calls sent, for
// roundSpanLocked's span and calls, are its calls, and it ends when they
// are all answered.
func (c *Concurrency) startRoundLocked(now time.Time) {
	c.round++
	c.roundStart, c.sending, c.sent, c.answered = now, true, 0, 0
	c.n, c.hard, c.throttled, c.lat = 0, 0, 0, [2]latencySum{}
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
		c.endRoundLocked(c.meanLocked())
	}
}

// latencySum sums the latencies of a round's 2xx answers, in seconds.
type latencySum struct {
	ok         int
	sum, sumSq float64
}

// latLocked is the round's latencies that count: createLead's when it has
// any. Calls of different operations take different times (createLead
// pulls a credit report); their mix changes from round to round, and
// would look like a queue that comes and goes. createLead's show the
// service's queue as well as any.
func (c *Concurrency) latLocked() latencySum {
	if c.lat[0].ok > 0 {
		return c.lat[0]
	}
	return c.lat[1]
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

// Release gives back the place of an attempt that ended with o; learn is
// false for an attempt that says nothing of the service (interrupted, or
// no attempt made).
func (c *Concurrency) Release(ticket int64, o attemptOutcome, learn bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight--
	if learn && !c.fixed && (o.Status == http.StatusServiceUnavailable || o.Status == http.StatusGatewayTimeout || o.Timeout) {
		// The service shed the call (or could not answer it): its place
		// goes, at once, not at the round's end, or it would be taken by
		// the next call, shed as fast, again and again.
		c.limit = max(1, c.limit-1)
	}
	if ticket != 0 && ticket == c.round {
		if learn {
			c.learnLocked(o)
		}
		c.answerLocked(ticket)
	}
	c.grantLocked()
}

// learnLocked counts one answer of the round, and ends the round early
// on strong evidence: latency far past the base, or overload answers.
func (c *Concurrency) learnLocked(o attemptOutcome) {
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
		c.lat[k].ok++
		c.lat[k].sum += l
		c.lat[k].sumSq += l * l
		if c.baseCur == 0 && c.basePrev == 0 {
			c.first[k] = append(c.first[k], l)
		}
	case o.Status == http.StatusServiceUnavailable, o.Status == http.StatusGatewayTimeout, o.Timeout:
		c.hard++
	case o.Status == http.StatusTooManyRequests:
		c.throttled++
	}
	_, need := c.roundSpanLocked()
	mean := c.meanLocked()
	base, _ := c.baseLocked()
	if (base > 0 && c.latLocked().ok >= min(need, concRoundMin) && mean > base*(1+concEarly)+concSlack.Seconds()) ||
		(base > 0 && c.hard > 0 && float64(c.hard) >= concPressure*float64(need)) {
		c.endRoundLocked(mean)
	}
}

// baseLocked is the base latency: the lowest round mean of the last
// concBaseWindow (two halves, the older dropped as a new one starts), 0
// when none yet; n is the answers of the round that set it.
func (c *Concurrency) baseLocked() (base float64, n int) {
	switch {
	case c.baseCur == 0:
		return c.basePrev, c.nPrev
	case c.basePrev == 0 || c.baseCur < c.basePrev:
		return c.baseCur, c.nCur
	}
	return c.basePrev, c.nPrev
}

// rotateBaseLocked starts a new half of the base's window when the
// current one is over, at now. It reports whether the base rose past the
// tolerance with it: the latency rose and stayed up though the limit was
// cut, so the service slowed by itself.
func (c *Concurrency) rotateBaseLocked(now time.Time) (rose bool) {
	if c.baseFrom.IsZero() {
		c.baseFrom = now
	}
	if now.Sub(c.baseFrom) < concBaseWindow/2 {
		return false
	}
	old, _ := c.baseLocked()
	c.basePrev, c.nPrev, c.baseCur, c.baseFrom = c.baseCur, c.nCur, 0, now
	nb, _ := c.baseLocked()
	return old > 0 && nb > old*(1+2*concTolerance)+2*concSlack.Seconds()
}

// addBaseLocked takes the mean of a round of n answers into the base's
// window. A round of few answers has a noisy mean, and the lowest of many
// noisy means is too low a base: only rounds of concBaseAnswers answers
// (or the whole limit, when it is lower) count.
func (c *Concurrency) addBaseLocked(mean float64, n int) {
	if n < min(concBaseAnswers, c.capLocked()) {
		return
	}
	if c.baseCur == 0 || mean < c.baseCur {
		c.baseCur, c.nCur = mean, n
	}
}

// endRoundLocked decides on the round's answers, with mean the mean
// latency of its 2xx answers (0: none).
func (c *Concurrency) endRoundLocked(mean float64) {
	now := c.now()
	ok, sumSq := c.latLocked().ok, c.latLocked().sumSq
	defer c.startRoundLocked(now)
	c.sinceCut++
	pressure := 1.0 // the share of the limit back pressure keeps
	switch {
	case c.hard > 0 && float64(c.hard) >= concPressure*float64(c.n):
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
		if pressure < 1 {
			cutForPressure()
		}
		return
	}
	sigma := 0.0
	if ok > 1 {
		sigma = math.Sqrt(max(sumSq/float64(ok)-mean*mean, 0))
	}
	rose := c.rotateBaseLocked(now)
	base, baseN := c.baseLocked()
	firstRound := base == 0
	first := c.first[1]
	if c.lat[0].ok > 0 {
		first = c.first[0]
	}
	c.first = [2][]float64{}
	if firstRound && len(first) == 0 {
		base, baseN = mean, ok
	} else if firstRound {
		// The first round has no base to compare with. When the start
		// is above the capacity, its quickest calls are those that found
		// a free place and every round after is queued alike: a mean
		// more than concFirstQueue times that of the quickest quarter
		// (more than jitter spreads latencies) is a queue, and that
		// quarter is the base. Else the round's mean is.
		slices.Sort(first)
		q := first[:max(1, len(first)/4)]
		quick := 0.0
		for _, l := range q {
			quick += l
		}
		quick /= float64(len(q))
		if mean > concFirstQueue*quick {
			c.baseCur, c.nCur = quick, len(q)
			c.latencyCuts++
			c.rosePast = c.capLocked()
			c.cutLocked(now, max(min(c.limit*quick/mean*concUnder, c.limit*pressure), 1))
			return
		}
		base, baseN = mean, ok
	}
	if pressure < 1 {
		c.addBaseLocked(mean, ok)
		cutForPressure()
		return
	}
	if rose {
		// The limit cut for a latency that was the service's own is
		// too low for it: find the limit again.
		c.slowStart = true
		return
	}
	// A round of few answers gives a poor spread.
	spread := ok >= min(concBaseAnswers, c.capLocked()) && ok > 1
	if spread && c.jitter == 0 {
		c.jitter = sigma
	}
	// The round's mean is noisy, and so is the base's (the service's
	// jitter, a busy client machine): three standard errors of their
	// difference, at the spread of the rounds without a queue, are no
	// queue either. (Not this round's spread alone: a queue spreads the
	// latencies too.)
	noise := 3 * c.jitter * math.Sqrt(1/float64(ok)+1/float64(max(baseN, 1)))
	threshold := base*(1+concTolerance) + concSlack.Seconds() + noise
	c.addBaseLocked(mean, ok)
	if spread && mean <= threshold {
		c.jitter += concJitterAlpha * (sigma - c.jitter)
	}
	switch {
	case mean > threshold:
		c.latencyCuts++
		c.rosePast = c.capLocked()
		// Latency cuts in a row (one a round) compound: a stall of the
		// client's machine (its CPUs shared) that outlasts a round of a
		// fast service would take the limit from K to 1 in a few rounds.
		// Within concCutSpan they go at most to half of the limit before
		// the first; a capacity that halves is followed in that time
		// still (at 1 s a call, each round is a span of its own).
		if c.cutSpanFrom.IsZero() || now.Sub(c.cutSpanFrom) >= concCutSpan {
			c.cutSpanFrom, c.cutSpanLimit = now, c.limit
		}
		c.cutLocked(now, max(c.limit*base/mean*concUnder, c.limit/2, c.cutSpanLimit/2))
	case c.slowStart && !firstRound && mean > base*(1+concTolerance/2)+concSlack.Seconds()+noise:
		// Like HyStart: latency begins to rise, so the limit is near the
		// capacity: no more doubling, which would overshoot it by up
		// to twice.
		c.slowStart = false
	case c.bound:
		step := c.limit // slow start: double
		if !c.slowStart {
			step = max(0.25, c.limit*concGrowth*(1+float64(c.sinceCut)/8))
		}
		c.limit = min(c.limit+step, float64(c.max))
	}
}

func (c *Concurrency) cutLocked(now time.Time, to float64) {
	c.limit = max(1, to)
	c.slowStart = false
	c.sinceCut = 0
	c.lastCut = now
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
	// rose and for back pressure (503, 504, timeouts, 429s);
	// RosePast is the limit before the last latency cut and PressurePast
	// the one before the last back-pressure cut.
	LatencyCuts, PressureCuts int
	RosePast, PressurePast    int
	// SlowStart: auto has not cut yet.
	SlowStart bool
	// BaseLatency is the latency auto compares rounds with (0: none yet).
	BaseLatency time.Duration
	// Waited is the time during which attempts waited for a place (the
	// limit bound), Since the time since the first attempt.
	Waited, Since time.Duration
}

// Snapshot returns the state now. Safe for concurrent use, cheap enough
// for a progress line or a per-second timeline.
func (c *Concurrency) Snapshot() ConcurrencySnapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	s := ConcurrencySnapshot{Auto: !c.fixed, Limit: c.capLocked(), Max: c.max, InFlight: c.inFlight, Waiting: len(c.queue),
		PeakInFlight: c.peak, LatencyCuts: c.latencyCuts, PressureCuts: c.pressureCuts, RosePast: c.rosePast,
		PressurePast: c.pressurePast, SlowStart: c.slowStart && !c.fixed,
		Waited: c.fullTotal}
	base, _ := c.baseLocked()
	s.BaseLatency = time.Duration(base * float64(time.Second))
	if c.max == noConcurrencyLimit {
		s.Limit, s.Max = 0, 0 // none set: the caller's pool is the limit
	}
	if !c.fullSince.IsZero() {
		s.Waited += now.Sub(c.fullSince)
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
	if c.max == noConcurrencyLimit {
		return 0, c.inFlight
	}
	return c.capLocked(), c.inFlight
}
