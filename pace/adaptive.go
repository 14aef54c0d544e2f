package pace

import (
	"context"
	"math"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Outcome is what became of one HTTP attempt, as a limiter sees it: the
// caller reads it off the attempt's classified reply and hands it to
// Adaptive.Observe, AIMD.Observe or Concurrency.Release.
type Outcome struct {
	Start      time.Time     // when the attempt was sent (after Wait)
	Latency    time.Duration // until the reply (or the failure)
	Status     int           // HTTP status; 0 when there was no reply
	RetryAfter time.Duration // the reply's Retry-After, 0 if none
	Timeout    bool          // no reply within the attempt's timeout
	Op         string        // the call's operation (createLead, submitLead, lead, preflight)
}

// Tuning of the adaptive rate (--rate auto). The figures come from the
// anchors named in docs/design.md and from bench/rate.sh's runs against
// leadsim.
const (
	// DefaultStartRate is where a climb starts when the rate has nothing
	// else to go by (a test's, or a limit forgotten).
	DefaultStartRate = 20.0
	autoFloor        = 0.5  // calls/s; never slower
	autoClimb        = 1.4  // factor per second while no limit is known (slow start)
	autoClimbSlow    = 1.1  // the same while latency rises
	autoCutClimb     = 0.7  // share of the rate kept after the first 429 (CUBIC's beta)
	autoCutSettled   = 0.85 // share kept after a 429 once a limit is known
	autoSettleShare  = 0.97 // the rate held: this share of the limit found
	autoProbeSlope   = 0.02 // past the hold, the limit's share added per second
	autoForget       = 1.25 // probing this far past the limit without a 429: climb again
	autoUtilized     = 0.75 // increase only while calls use this share of the rate
	autoLatencyRise  = 2.0  // increase only while latency stays under this times its base (plus autoLatencySlack)

	autoLatencySlack   = 10 * time.Millisecond
	autoRecover        = 2 * time.Second  // from a cut back to the settled rate
	autoHoldFirst      = 5 * time.Second  // first hold at the settled rate before probing
	autoHoldMax        = 60 * time.Second // the hold doubles while probes find the same limit
	autoProbeDouble    = 5 * time.Second  // the probe's slope doubles after this long
	autoBucket         = 125 * time.Millisecond
	autoBuckets        = 8                      // the window of answers: 8 × 125 ms = 1 s
	autoRetryAfterMin  = 10                     // answers in the window at least, most of them with a Retry-After, to pause every call
	autoEpisodeAnswers = 10                     // answers since the last cut needed to measure what the service accepts
	autoEpisodeSpan    = 100 * time.Millisecond // and time since it, beyond a latency
	autoSaturated      = 0.05                   // a share of 429s among them that says the service was saturated
	autoRebook         = 1.1                    // a rate this much above the one the bucket was made at makes a new bucket
	autoAcceptedAlpha  = 1.0 / 40               // per bucket: the accepted rate averages over 40 buckets, 5 s
	autoAcceptedUse    = 0.5                    // a bucket counts towards it if the window's answers used this share of the rate
	autoOpening        = 8                      // while open, the opening round: calls sent at once before the others wait for their answers
	autoOpeningMax     = time.Second            // the opening lasts this long at most
	autoOpeningLast    = 32                     // the rounds double up to this many calls; then every call goes at once
)

// AutoConfig configures an Adaptive rate. Zero values take the defaults.
type AutoConfig struct {
	// Start > 0 starts the rate at Start calls/s, climbing from there;
	// 0, the default, sets no limit until the service shows one.
	Start float64
	// Limit > 0 is a limit found before, by the run a resume continues:
	// the rate starts held just under it, as after a cut.
	Limit float64
	Max   float64          // never above this (--max-rate); 0 = no cap
	Now   func() time.Time // nil = time.Now
}

// autoPhase is where the Adaptive rate is in its cycle.
type autoPhase int

const (
	phaseOpen    autoPhase = iota // no limit shown yet: none set
	phaseClimb                    // no limit known: grow ×autoClimb per second
	phaseRecover                  // after a cut: back to the settled rate in autoRecover
	phaseHold                     // at the settled rate for the hold
	phaseProbe                    // slowly past the settled rate, to find out whether the limit rose
)

func (p autoPhase) String() string {
	return [...]string{"open", "climb", "recover", "hold", "probe"}[p]
}

// Adaptive is --rate auto: one token bucket shared by every call of a
// Client whose rate it finds by itself. Like the AWS SDKs' adaptive retry
// mode it sets no limit until the service shows one (a 429; --concurrency
// auto protects the service meanwhile); from then on it owns the rate: it
// cuts on 429s, holds under the limit it found and probes past it now and
// then, climbing again when a probe finds no limit. A Retry-After delays the
// call it answered (the caller waits it); only when most recent answers
// carry one does it pause every call. The design and the anchors it learns
// from (AWS adaptive retry, TCP AIMD, Google SRE client-side throttling)
// are in docs/design.md, "Adaptive rate (--rate auto)"; the auto* constants
// are its tuning.
//
// Safe for concurrent use.
type Adaptive struct {
	now     func() time.Time
	maxRate float64

	mu          sync.Mutex
	lim         *rate.Limiter // replaced when the rate falls, or rises 10% past booked; nil while open
	r           float64       // the rate now; 0 while open
	booked      float64       // the rate when lim was made
	rebuilt     chan struct{}
	limit       float64 // the limit found (see cutLocked); 0 = none yet
	phase       autoPhase
	phaseAt     time.Time
	from        float64 // the rate a recovery started from
	hold        time.Duration
	lastStep    time.Time // the last update of r
	lastCut     time.Time
	frozenUntil time.Time        // no increase before (Retry-After)
	pausedUntil time.Time        // no call before (a long Retry-After)
	latency     float64          // EWMA of successful attempts' latency, seconds
	latencyBase float64          // the lowest latency EWMA seen, seconds
	tracked     time.Time        // first call: the start of the windows
	bucketAt    time.Time        // start of the newest bucket
	gotRA       [autoBuckets]int // answers with a Retry-After
	got429      [autoBuckets]int
	gotOK       [autoBuckets]int
	answers     [autoBuckets]int
	accepted    float64 // 2xx answers a second, a moving average over about 5 s
	// The episode: answers to calls sent since the last cut.
	epOK, ep429 int
	// The dry point: when the first 429 was answered (the service's
	// bucket was empty a moment before), the 2xx answers to calls sent
	// since, and when the rate was last lowered from them (see dryLocked).
	dryAt, dryLowered time.Time
	dryOK             int
	probeFrom         float64 // the rate held before the probe
	// The opening rounds, while open: the round's size (0: the first,
	// autoOpening), the calls sent in it and their answers, when the
	// first went; opened once the last is over.
	openRound              int
	openSent, openAnswered int
	openFrom               time.Time
	opened                 bool
}

// NewAdaptive returns an Adaptive rate: open (no limit) unless cfg gives a
// start or a limit found before.
func NewAdaptive(cfg AutoConfig) *Adaptive {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &Adaptive{now: cfg.Now, maxRate: cfg.Max, hold: autoHoldFirst, rebuilt: make(chan struct{})}
	switch {
	case cfg.Limit > 0:
		a.limit = cfg.Limit
		a.setLocked(autoSettleShare * cfg.Limit)
		a.phase = phaseHold
	case cfg.Start > 0:
		a.setLocked(cfg.Start)
		a.phase = phaseClimb
	}
	return a
}

// Wait blocks until the shared rate allows one more attempt, or ctx ends,
// or stop is closed (ErrStopped; a nil stop never is): a pause of every
// call (a Retry-After most answers carry) or a turn far off holds no stop.
// A turn there at once is taken whether stop is closed or not.
func (a *Adaptive) Wait(ctx context.Context, stop <-chan struct{}) error {
	for {
		d, paused, rebuilt := a.reserve()
		if d <= 0 {
			return ctx.Err()
		}
		select {
		case <-stop:
			return ErrStopped
		default:
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
			if paused {
				continue // the pause is over: take a place in the bucket now
			}
			return nil
		case <-rebuilt:
			// The rate changed a lot: the place was booked at the old
			// rate, on a bucket that is gone; book again.
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-stop:
			t.Stop()
			return ErrStopped
		}
	}
}

// reserve takes one place in the bucket now and says how long to wait for
// it; rebuilt is closed when the bucket is replaced, and the place with it.
// During a pause it takes none (paused) and says how long the pause lasts.
// While open, every call may go at once.
func (a *Adaptive) reserve() (d time.Duration, paused bool, rebuilt <-chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if now.Before(a.pausedUntil) {
		return a.pausedUntil.Sub(now), true, a.rebuilt
	}
	a.stepLocked(now)
	if a.lim == nil {
		if d := a.openingLocked(now); d > 0 {
			return d, true, a.rebuilt
		}
		return 0, false, a.rebuilt
	}
	return a.lim.ReserveN(now, 1).DelayFrom(now), false, a.rebuilt
}

// openingLocked takes a call's turn in the opening rounds while open: the
// first autoOpening calls go at once, and the others wait (the duration
// returned: the opening's end at the latest; rebuilt closes earlier) until
// those have been answered; then a round twice as large, and so on up to
// a round of autoOpeningLast, or until autoOpeningMax after the first
// call; then every call goes at once until a 429. A 429 among a round's
// answers sets the rate (closeLocked), and the calls waiting take their
// turns at it. A fixed --concurrency 32 against a service that shows its
// limit only by refusing would otherwise send 32 calls before the first
// answer could set a rate (bench/rate.sh's r50s, a bucket of 5: 27
// refused at once), and against a full bucket of 50 (r50b) it would have
// 32 calls in flight when the bucket ran dry, all refused: the rounds of
// 8, 16 and 32 refuse 6. The rounds grow as --concurrency auto's slow
// start does, never fewer than 8 calls in flight at their start; the bound
// keeps a call that never comes back (no token, cancelled) from holding
// the others, and what the opening costs a service with no limit is about
// one latency of half the workers (rounds of 8 and 16 where 32 could go).
func (a *Adaptive) openingLocked(now time.Time) time.Duration {
	if a.phase != phaseOpen || a.opened {
		return 0
	}
	if a.openFrom.IsZero() {
		a.openFrom = now
	}
	end := a.openFrom.Add(autoOpeningMax)
	if !now.Before(end) {
		a.opened = true
		return 0
	}
	if a.openSent < a.openRoundLocked() {
		a.openSent++
		return 0
	}
	return end.Sub(now)
}

// openAnsweredLocked counts an answer in the opening round: once the
// round is answered the next, twice as large, begins (or, after the last,
// the opening is over), and the calls waiting for it go.
func (a *Adaptive) openAnsweredLocked() {
	if a.phase != phaseOpen || a.opened || a.openFrom.IsZero() {
		return
	}
	round := a.openRoundLocked()
	if a.openAnswered++; a.openAnswered < round {
		return
	}
	if 2*round > autoOpeningLast {
		a.opened = true
	}
	a.openRound, a.openSent, a.openAnswered = 2*round, 0, 0
	close(a.rebuilt)
	a.rebuilt = make(chan struct{})
}

// openRoundLocked is the size of the opening's round now.
func (a *Adaptive) openRoundLocked() int {
	if a.openRound == 0 {
		return autoOpening
	}
	return a.openRound
}

// Rate is the rate in calls per second now; 0 while open (no limit).
func (a *Adaptive) Rate() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stepLocked(a.now())
	return a.r
}

// Settled is the rate to pin with --rate next time: 97% of the limit found,
// capped by Max, and never more than the service accepted of late (2xx
// answers a second, averaged over about 5 s); found is false when no limit
// was found (then it is the rate reached, 0 while open). Limit is the
// limit found (0: none), for a resume to start from.
func (a *Adaptive) Settled() (callsPerSecond float64, found bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.limit == 0 {
		return a.r, false
	}
	a.rollLocked(a.now())
	s := a.capLocked(autoSettleShare * a.limit)
	if a.accepted > 0 {
		s = min(s, max(a.accepted, autoFloor))
	}
	return s, true
}

// Limit is the limit found, 0 when none was (a resume starts from it).
func (a *Adaptive) Limit() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.limit
}

// Observe learns from one attempt's outcome.
func (a *Adaptive) Observe(o Outcome) (float64, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	a.stepLocked(now)
	a.rollLocked(now)
	a.answers[autoBuckets-1]++
	a.openAnsweredLocked()
	if o.RetryAfter > 0 {
		a.gotRA[autoBuckets-1]++
		a.retryAfterLocked(now, o.RetryAfter)
	}
	switch {
	case o.Status >= 200 && o.Status < 300:
		a.gotOK[autoBuckets-1]++
		if o.Start.After(a.lastCut) {
			a.epOK++
		}
		if !a.dryAt.IsZero() && o.Start.After(a.dryAt) {
			a.dryOK++
		}
		if o.Op == "preflight" {
			// The query before the first row is answered at once: as
			// the base it would make every lead's latency look risen.
			return a.r, false
		}
		lat := o.Latency.Seconds()
		if a.latency == 0 {
			a.latency = lat
		} else {
			a.latency += 0.02 * (lat - a.latency)
		}
		if a.latencyBase == 0 || a.latency < a.latencyBase {
			a.latencyBase = a.latency
		}
		return a.r, false
	case o.Status == http.StatusTooManyRequests:
		a.got429[autoBuckets-1]++
		if o.Start.After(a.lastCut) {
			a.ep429++
		}
		if a.phase == phaseOpen {
			a.dryAt, a.dryOK = now, 0
			return a.closeLocked(now)
		}
		return a.cutLocked(now, o.Start)
	}
	// A 503 (one bad backend, a service shedding) is the concurrency's
	// to answer: it cuts when their share grows with the calls in flight.
	return a.r, false
}

// retryAfterLocked honours a Retry-After of d answered at now: no increase
// of the rate until it has passed. The call it answered waits it (the
// caller does); every call waits it only when most answers in the
// window carry one: one bad backend that says Retry-After: 2 on a tenth of
// the calls is not the service asking everyone to wait. The window must
// hold autoRetryAfterMin answers: after a pause it holds few, the retries
// of the calls that drew a Retry-After among them, and those would make a
// majority and pause every call again, and again.
func (a *Adaptive) retryAfterLocked(now time.Time, d time.Duration) {
	until := now.Add(d)
	if until.After(a.frozenUntil) {
		a.frozenUntil = until
	}
	ra, answers := 0, 0
	for i := range autoBuckets {
		ra += a.gotRA[i]
		answers += a.answers[i]
	}
	if answers >= autoRetryAfterMin && 2*ra > answers && until.After(a.pausedUntil) {
		a.pausedUntil = until
	}
}

// closeLocked sets the first rate, on the first 429 while open: 0.7 of
// the rate the calls were sent at (answered in the window), or of what the
// service accepted when many were refused, and from there a climb (×1.4 a
// second) to the next 429, which finds the limit. A burst at once, with a
// full bucket on the service's side, says little of its limit: the
// first 429 of a climb from under it says it to within a step, and until
// the first cut the 429s of calls sent after this one bring the rate down
// to what the bucket accepts once dry (dryLocked).
func (a *Adaptive) closeLocked(now time.Time) (float64, bool) {
	peak := a.sentRateLocked(now)
	ok, throttled, span := a.answersLocked(now)
	if peak == 0 {
		// Too few answers yet to measure a rate: those so far, over the
		// time since the first (at least a bucket).
		n := ok + throttled
		peak = float64(max(n, 1)) / max(now.Sub(a.tracked), autoBucket).Seconds()
	}
	if n := ok + throttled; span > 0 && n >= autoEpisodeAnswers && float64(throttled) >= autoSaturated*float64(n) {
		peak = min(peak, max(float64(ok)/span.Seconds(), autoFloor))
	}
	a.setLocked(autoCutClimb * peak)
	a.phase, a.phaseAt, a.lastCut = phaseClimb, now, now
	a.epOK, a.ep429 = 0, 0
	return a.r, true
}

// cutLocked lowers the rate after a 429 of an attempt sent
// at start, once per episode: attempts sent before the last cut were sent
// at the old rate and say nothing new.
func (a *Adaptive) cutLocked(now, start time.Time) (float64, bool) {
	if !a.lastCut.IsZero() && !start.After(a.lastCut) {
		return a.r, false
	}
	peak := a.r
	if s := a.sentRateLocked(now); s > 0 && s < peak {
		peak = s // the calls did not use the whole rate: the limit is what they used
	}
	answered := a.epOK + a.ep429
	if since := now.Sub(a.lastCut); !a.lastCut.IsZero() && since < time.Second &&
		(answered < autoEpisodeAnswers || since < autoEpisodeSpan+time.Duration(a.latency*float64(time.Second))) {
		// Too few answers at the rate of the last cut, or too short a
		// time, to say how much of it the service accepts: wait for more.
		// (A service's bucket emptied by a burst refuses for a moment
		// after the cut too; at a millisecond's latency, ten answers in
		// five milliseconds measured an "accepted rate" of half the
		// limit, and the rate fell to it.)
		return a.dryLocked(now, start)
	}
	limit := peak
	switch {
	case answered >= autoEpisodeAnswers && float64(a.ep429) >= autoSaturated*float64(answered):
		// Many of the calls sent since the last cut were refused: the
		// service was saturated, and what it accepted is its limit
		// (Google SRE's accepts, not requests). Answers came for calls
		// sent until about a latency ago.
		// (The episode began at the last cut, or at the first call.)
		from := a.lastCut
		if from.IsZero() {
			from = a.tracked
		}
		el := max(now.Sub(from).Seconds()-a.latency, 0.01)
		limit = min(peak, float64(a.epOK)/el)
	case a.phase == phaseProbe && a.probeFrom > 0:
		// The limit is past the rate held without a 429 and short of
		// the one that drew it.
		limit = (a.probeFrom + peak) / 2
	}
	share := autoCutSettled
	if a.limit == 0 || a.phase == phaseClimb {
		share = autoCutClimb
	}
	if a.limit > 0 && math.Abs(limit-a.limit) <= 0.1*a.limit && a.phase == phaseProbe {
		a.hold = min(2*a.hold, autoHoldMax) // the probe found the same limit again
	} else {
		a.hold = autoHoldFirst
	}
	a.limit = limit
	a.setLocked(min(share*peak, autoSettleShare*limit))
	a.lim.ReserveN(now, 1) // the service's bucket is dry: the next call waits its turn
	a.from = a.r
	a.phase = phaseRecover
	a.phaseAt = now
	a.lastCut = now
	a.epOK, a.ep429 = 0, 0
	return a.r, true
}

// dryLocked answers a 429 of a call sent at start that came too soon
// after the first 429 for a cut (cutLocked waits for an episode's
// answers): the first rate (closeLocked) was set from a burst that the
// service's bucket, full at the start, let through, and can be far above
// what the service accepts once the bucket is dry (bench/rate.sh's r50b:
// a bucket of 50 let 56 calls through in 3 ms, and the first rate was
// 157-291/s against a limit of 50). The first 429's answer marks the dry
// point: its call found the bucket holding less than one call, so
// whatever the bucket holds now it earned since, at its sustained rate R,
// and a 429 of a call sent d after the dry point, with k calls sent since
// accepted, says R < (k+1)/d (it held less than one again). While that
// bound is under the rate, the rate falls to it, or to autoCutClimb of
// the rate where that is lower (the bound is loose while k is small);
// each fall counts once, for calls sent after it, and the next call waits
// its turn, as the bucket is dry. The burst itself is never taken for the
// rate. The dry point is the answer, not the refused call's sending: the
// calls of a round go at once and reach the service in any order, and
// those sent after the refused one but accepted before it made k, and a
// lower bound (k-1)/d tried beside the upper one, far too high (a fall
// from 241 to 222/s, eight falls, 16 refusals in ratebench's r50b at load
// 7). Only in the climb after the first 429: after a cut the episode's
// count (cutLocked) does this. (The bound holds while the calls kept the
// bucket dry; calls that waited longer than the bucket takes to fill
// make it low, and the climb undoes that.)
func (a *Adaptive) dryLocked(now, start time.Time) (float64, bool) {
	d := start.Sub(a.dryAt).Seconds()
	if a.phase != phaseClimb || a.dryAt.IsZero() || d <= 0 || !start.After(a.dryLowered) {
		return a.r, false
	}
	r := min(float64(a.dryOK+1)/d, autoCutClimb*a.r)
	if r >= a.r {
		return a.r, false
	}
	a.setLocked(r)
	a.lim.ReserveN(now, 1) // the bucket is dry: the next call waits its turn
	a.dryLowered = now
	return a.r, true
}

// stepLocked moves the rate along its phase up to now.
func (a *Adaptive) stepLocked(now time.Time) {
	if a.lastStep.IsZero() {
		a.lastStep = now
		return
	}
	dt := now.Sub(a.lastStep).Seconds()
	if dt <= 0 {
		return
	}
	if a.lastStep.Before(a.frozenUntil) {
		// Time spent waiting out a Retry-After does not count towards
		// the climb, the recovery or the hold.
		frozen := a.frozenUntil.Sub(a.lastStep)
		if now.Before(a.frozenUntil) {
			frozen = now.Sub(a.lastStep)
		}
		a.phaseAt = a.phaseAt.Add(frozen)
		dt -= frozen.Seconds()
		if dt <= 0 {
			a.lastStep = now
			return
		}
	}
	a.lastStep = now
	utilized, rising := a.utilizedLocked(now), a.latencyRisingLocked()
	mayGrow := utilized && !rising
	switch a.phase {
	case phaseOpen:
	case phaseClimb:
		// Rising latency slows the climb rather than stopping it: on a
		// busy client machine latency rises without the service being
		// at its limit, and --concurrency bounds the calls in flight.
		switch {
		case mayGrow:
			a.setLocked(a.r * math.Pow(autoClimb, dt))
		case utilized:
			a.setLocked(a.r * math.Pow(autoClimbSlow, dt))
		}
	case phaseRecover:
		settle := autoSettleShare * a.limit
		x := now.Sub(a.phaseAt).Seconds() / autoRecover.Seconds()
		if x >= 1 || a.from >= settle {
			a.setLocked(settle)
			a.phase, a.phaseAt = phaseHold, now
			return
		}
		// Concave: most of the way back in the first half.
		a.setLocked(a.from + (settle-a.from)*(1-math.Pow(1-x, 3)))
	case phaseHold:
		if now.Sub(a.phaseAt) >= a.hold {
			a.phase, a.phaseAt, a.probeFrom = phaseProbe, now, a.r
		}
	case phaseProbe:
		if !mayGrow {
			return
		}
		// Convex, as CUBIC past its plateau: gentle near the limit
		// found, faster the longer no 429 comes (the limit rose, or was
		// found low).
		el := now.Sub(a.phaseAt).Seconds()
		a.setLocked(a.r + autoProbeSlope*a.limit*dt*(1+el/autoProbeDouble.Seconds()))
		if a.r > autoForget*a.limit {
			a.phase, a.phaseAt = phaseClimb, now
		}
	}
}

func (a *Adaptive) capLocked(r float64) float64 {
	if a.maxRate > 0 {
		r = min(r, a.maxRate)
	}
	return max(r, autoFloor)
}

func (a *Adaptive) setLocked(r float64) {
	r = a.capLocked(r)
	if r == a.r && a.lim != nil {
		return
	}
	a.r = r
	if a.lim == nil || r < a.booked || r > autoRebook*a.booked {
		// Calls waiting hold places booked at the old rate, up to
		// --concurrency of them: a cut must not wait for them to be
		// used, nor a climb crawl behind them. A fresh bucket, and
		// every waiter books again.
		a.lim = rate.NewLimiter(rate.Limit(r), 1)
		a.booked = r
		close(a.rebuilt)
		a.rebuilt = make(chan struct{})
		return
	}
	a.lim.SetLimitAt(a.lastStep, rate.Limit(r))
}

// rollLocked moves the window of buckets so that its newest holds now.
func (a *Adaptive) rollLocked(now time.Time) {
	if a.tracked.IsZero() {
		a.tracked, a.bucketAt = now, now
		return
	}
	n := int(now.Sub(a.bucketAt) / autoBucket)
	if n <= 0 {
		return
	}
	// The bucket that ended feeds the accepted rate if the calls used the
	// rate in the window: the tail of the input, an interruption's drain or a pause
	// says nothing of what the service accepts.
	used := 0
	for _, c := range a.answers {
		used += c
	}
	if float64(used) >= autoAcceptedUse*a.r*(autoBuckets*autoBucket).Seconds() {
		a.accepted += autoAcceptedAlpha * (float64(a.gotOK[autoBuckets-1])/autoBucket.Seconds() - a.accepted)
	}
	if n >= autoBuckets {
		a.gotRA, a.got429, a.gotOK, a.answers = [autoBuckets]int{}, [autoBuckets]int{}, [autoBuckets]int{}, [autoBuckets]int{}
	} else {
		for _, b := range []*[autoBuckets]int{&a.gotRA, &a.got429, &a.gotOK, &a.answers} {
			copy(b[:], b[n:])
			clear(b[autoBuckets-n:])
		}
	}
	a.bucketAt = a.bucketAt.Add(time.Duration(n) * autoBucket)
}

// sentRateLocked is the rate of calls answered in the window up to now, in
// calls per second (the rate they were sent at, a latency ago); 0 when
// there are too few to say.
func (a *Adaptive) sentRateLocked(now time.Time) float64 {
	if a.tracked.IsZero() {
		return 0
	}
	a.rollLocked(now)
	n := 0
	for _, c := range a.answers {
		n += c
	}
	span := a.spanLocked(now)
	if span < autoBucket || n < autoEpisodeAnswers {
		return 0 // too early, or too few calls, to say
	}
	return float64(n) / span.Seconds()
}

// spanLocked is how much time the window covers at now.
func (a *Adaptive) spanLocked(now time.Time) time.Duration {
	return min(now.Sub(a.tracked), autoBuckets*autoBucket-autoBucket+now.Sub(a.bucketAt))
}

// answersLocked counts the 2xx and 429 answers in the window up to now,
// and the time it spans (0: too early to say).
func (a *Adaptive) answersLocked(now time.Time) (ok, throttled int, span time.Duration) {
	a.rollLocked(now)
	for i := range autoBuckets {
		ok += a.gotOK[i]
		throttled += a.got429[i]
	}
	if span = a.spanLocked(now); span < autoBucket {
		span = 0
	}
	return ok, throttled, span
}

// utilizedLocked reports whether the calls use the rate: only then is a
// higher rate worth trying.
func (a *Adaptive) utilizedLocked(now time.Time) bool {
	s := a.sentRateLocked(now)
	return s == 0 || s >= autoUtilized*a.r
}

// latencyRisingLocked reports whether calls now take markedly longer than
// they did at their best.
func (a *Adaptive) latencyRisingLocked() bool {
	return a.latencyBase > 0 && a.latency > autoLatencyRise*a.latencyBase+autoLatencySlack.Seconds()
}
