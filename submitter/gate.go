package submitter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/oauth2"

	"github.com/bulkload/bulkload/token"
)

// gateConfig are the outage settings of a Client.
type gateConfig struct {
	threshold int
	wait      time.Duration
	probeBase time.Duration
	probeMax  time.Duration
	now       func() time.Time
	log       *slog.Logger
}

// gate is the outage state of a Client, shared by every call and the
// token cache. Before the first answer of the service it is not armed: a
// failure then is the caller's to report (a wrong URL fails fast at the
// preflight). Once armed, it starts an outage on a failed token request
// with no valid token left, on threshold outage-class attempts in a row,
// on a hang (attempts that got no reply within their timeout, since the
// last answer, outnumbering half the most attempts on the wire at once in
// that time: see failed), and, when a probe from the call confirms it
// (confirm), on an attempt that got no reply within its timeout while no
// other attempt was answered since it was sent, or on a call that would
// give up on outage-class failures while nothing sent since they began was
// answered. During an outage one goroutine probes (a token, then
// PreflightDocument, outside the limits on calls in flight and on the
// rate) with backoff and jitter; the first answer ends it, and the outage
// wait ending first stops every waiter with an *OutageError. While the run
// waits out an outage, or has stopped in one, no attempt goes on the wire
// (parked): the calls wait for the gate instead. Safe for concurrent use.
type gate struct {
	cfg   gateConfig
	probe func(ctx context.Context) (idp bool, cause string, err error)

	ctx    context.Context // the probes'; cancelled by close
	cancel context.CancelFunc
	probes sync.WaitGroup

	started atomic.Int64 // outages begun
	// lastAnswer is when an attempt was last answered (UnixNano); calm is
	// set while an answer has nothing to change (armed, no failure in a
	// row, no outage), so that the common answer takes no lock.
	lastAnswer atomic.Int64
	calm       atomic.Bool
	// answeredStart is the latest start (UnixNano) of an attempt that was
	// answered: an answer to a request sent after a call's trouble began
	// says the service answers now (one sent before may come back late).
	answeredStart atomic.Int64
	// wire counts the attempts on the wire now; peak is the most at once
	// since the last answer, and timeouts the attempts that got no reply
	// within their timeout since then: more of them than half of peak is
	// a hang (failed). lastTimeout is when an attempt last timed out
	// (UnixNano), for suspects.
	wire, peak, timeouts, lastTimeout atomic.Int64
	// down is set while the run waits out an outage or has stopped in
	// one: attempts are parked, not sent.
	down atomic.Bool

	// failedCalls counts the calls that ended, in a row, failing as
	// outages (callEnded); failedSince is when the first of them ended.
	failedCalls atomic.Int64
	failedSince atomic.Int64
	// deferredCalls counts the calls that ended, in a row, asked to come
	// back later than the run waits (IsDeferred); deferredSince is when
	// the first of them ended.
	deferredCalls atomic.Int64
	deferredSince atomic.Int64

	mu          sync.Mutex
	armed       bool
	consecutive int
	cur         *Outage // nil while the service is there
	// declared is when cur was declared: only an answer to an attempt
	// sent after it says the service is back. cur.Start may be earlier
	// (the first failure of the call that began it), and an attempt sent
	// between the two may have reached the service before it went away
	// and answer late.
	declared time.Time
	up       chan struct{} // closed when cur ends
	history  []Outage
	stopped  *OutageError // once set, every wait returns it

	// quit is closed when the run stops (stop): a call waiting between
	// its attempts leaves at once instead of waiting out its backoff or a
	// Retry-After (retry).
	quit     chan struct{}
	quitOnce sync.Once
	// quitting is set when quit is closed: a createLead attempt that gets
	// its place after the stop is not sent (Client.attempt).
	quitting atomic.Bool
}

func newGate(ctx context.Context, cfg gateConfig, probe func(context.Context) (bool, string, error)) *gate {
	g := &gate{cfg: cfg, probe: probe, quit: make(chan struct{})}
	g.ctx, g.cancel = context.WithCancel(ctx)
	return g
}

// close stops the prober and waits for it to end.
func (g *gate) close() {
	g.cancel()
	g.probes.Wait()
}

// answered records an answer of the service (any reply that is not an
// outage: a result, GraphQL errors, 4xx, 429, 503) to an attempt that
// began at start: the gate is armed, the failures in a row start over, and
// an outage of the service declared before start ends (the service is
// back).
func (g *gate) answered(start time.Time) {
	g.lastAnswer.Store(g.cfg.now().UnixNano())
	for s := start.UnixNano(); ; {
		old := g.answeredStart.Load()
		if old >= s || g.answeredStart.CompareAndSwap(old, s) {
			break
		}
	}
	g.peak.Store(g.wire.Load())
	if g.calm.Load() {
		return
	}
	g.timeouts.Store(0)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = true
	g.consecutive = 0
	if g.cur != nil && !g.cur.IdentityProvider && start.After(g.declared) {
		// An answer to a request sent during the outage: the service is
		// back (one sent before it was declared may only have come back
		// late, even one sent after its first failure).
		g.endLocked(false)
	}
	g.calm.Store(g.cur == nil)
}

// failed records an attempt sent at start that failed as an outage, with
// cause, and reports whether the run is in an outage now (this failure's,
// by the count or as a hang, or an earlier one's). timeout reports an
// attempt that got no reply within its deadline and may begin an outage by
// that alone. A hang is such timeouts since the last answer on more than
// half of the most attempts on the wire at once in that time (and at least
// two): whatever the limit on calls in flight, the run knows within one
// timeout of the hang that nothing comes back. silent reports a timeout
// while nothing was answered since the attempt was sent, short of that:
// the caller then confirms with a probe.
func (g *gate) failed(cause string, timeout bool, start time.Time) (down, silent bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.armed {
		return false, false
	}
	if g.cur != nil || g.stopped != nil {
		return true, false
	}
	g.consecutive++
	g.calm.Store(false)
	if g.cfg.threshold > 0 && g.consecutive >= g.cfg.threshold {
		g.beginLocked(false, cause, g.cfg.now())
		return true, false
	}
	if !timeout {
		return false, false
	}
	if n := g.timeouts.Add(1); n >= 2 && 2*n > g.peak.Load() {
		g.beginLocked(false, cause, g.cfg.now())
		return true, false
	}
	return false, g.lastAnswer.Load() <= start.UnixNano()
}

// callEnded counts a call of a row (createLead, submitLead, lead) that
// ended with err, for the rule of calls in a row: a call that failed as an
// outage (IsOutage: its attempts ran out on failures that say the service
// is gone, while the probes, if any, found it answering) counts; so does,
// on a count of its own, a call asked to come back later than the run
// waits (IsDeferred); any other end of a call starts both counts over,
// and a call cut off by its context or by the run's stop (ErrStopped)
// does neither. Threshold failed calls in a row stop the run (stopAt):
// the endpoint is wrong or the service half gone, and every further row
// would only burn its attempts; threshold deferred calls in a row too
// (stopDeferred): the service sends every caller away.
func (g *gate) callEnded(err error) {
	switch {
	case g.cfg.threshold <= 0:
	case IsDeferred(err):
		n := g.deferredCalls.Add(1)
		if n == 1 {
			g.deferredSince.Store(g.cfg.now().UnixNano())
		}
		if n == int64(g.cfg.threshold) {
			g.stopDeferred(int(n), err)
		}
	case IsOutage(err):
		n := g.failedCalls.Add(1)
		if n == 1 {
			g.failedSince.Store(g.cfg.now().UnixNano())
		}
		if n == int64(g.cfg.threshold) {
			g.stopAt(int(n), err)
		}
	case err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrStopped)):
	default:
		g.failedCalls.Store(0)
		g.deferredCalls.Store(0)
	}
}

// stopDeferred stops the run after n calls in a row were asked to come
// back later than the run waits, the last with err: the service sends
// every caller away for longer than the run would wait out an outage.
// Every wait, now and later, returns an *OutageError saying so.
func (g *gate) stopDeferred(n int, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped != nil {
		return
	}
	o := Outage{Start: time.Unix(0, g.deferredSince.Load()), End: g.cfg.now(), Cause: "Retry-After longer than the run waits", GaveUp: true}
	// The service sends every caller away: an outage the run stops in.
	// Nothing more is sent (parked): the calls that had a row leave at
	// once, not sent, rather than each being sent away in turn.
	g.history = append(g.history, o)
	g.down.Store(true)
	g.stopped = &OutageError{Calls: n, Last: err, Deferred: true, Outage: o}
	g.cfg.log.Error("the service asks every call to come back later than the run waits for it: no new rows are taken, nothing more is sent", "consecutive_calls", n, "err", err)
}

// stopAt stops the run after n calls in a row failed as outages, the last
// with err: every wait, now and later, returns an *OutageError saying so.
// The calls in flight go on.
func (g *gate) stopAt(n int, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped != nil {
		return
	}
	cause := err.Error()
	var ce *CallError
	if errors.As(err, &ce) {
		cause = ce.Message
	}
	g.stopped = &OutageError{Calls: n, Last: err,
		Outage: Outage{Start: time.Unix(0, g.failedSince.Load()), End: g.cfg.now(), Cause: cause, GaveUp: true}}
	g.cfg.log.Error("the service looks down: no new rows are taken", "consecutive_failures", n, "err", err)
}

// sending notes an attempt going on the wire, ended notes it back.
func (g *gate) sending() {
	w := g.wire.Add(1)
	for p := g.peak.Load(); w > p && !g.peak.CompareAndSwap(p, w); p = g.peak.Load() {
	}
}

func (g *gate) ended() { g.wire.Add(-1) }

// suspects reports, for an attempt sent at sent that got no reply within
// its timeout, whether an outage is suspected: the run waits one out, or
// nothing was answered since the attempt was sent or since the previous
// timeout. Such a timeout says nothing about how many calls the service
// takes: the limit on calls in flight is not cut for it (a hang would take
// it to 1, and the hang's noticing, the calls parked behind it and the run
// after it would crawl).
func (g *gate) suspects(sent time.Time) bool {
	prev := g.lastTimeout.Swap(g.cfg.now().UnixNano())
	last := g.lastAnswer.Load()
	return g.down.Load() || last <= sent.UnixNano() || last <= prev
}

// parked reports whether attempts wait instead of going on the wire: the
// run waits out an outage, or has stopped in one.
func (g *gate) parked() bool { return g.down.Load() }

// confirm probes once, from the caller's call, whether the service is away
// after a failure that suggests it (cause; the trouble began at start), and
// begins the outage when the probe is not answered. It reports whether the
// run is in an outage now. A probe that is answered says the service is
// there: no outage, the call's failure is its own.
func (g *gate) confirm(ctx context.Context, cause string, start time.Time) bool {
	if g.inOutage() {
		return true
	}
	if !g.isArmed() {
		return false
	}
	idp, pcause, err := g.probe(ctx)
	if err == nil {
		return g.inOutage()
	}
	if ctx.Err() != nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cur == nil && g.stopped == nil {
		if idp {
			g.beginLocked(true, pcause, start)
		} else {
			g.beginLocked(false, cause, start)
		}
	}
	return true
}

// answeredSince reports whether an attempt sent after t was answered.
func (g *gate) answeredSince(t time.Time) bool {
	return g.answeredStart.Load() > t.UnixNano()
}

// tokenFailed records a token request that failed as an outage (5xx, no
// reply, refused), and reports whether the run is in an outage now: it
// starts one of the identity provider when no valid token is left.
func (g *gate) tokenFailed(cause string, noToken bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.armed {
		return false
	}
	if g.cur == nil && g.stopped == nil && noToken {
		g.beginLocked(true, cause, g.cfg.now())
	}
	return g.cur != nil || g.stopped != nil
}

// tokenFetched ends an outage of the identity provider.
func (g *gate) tokenFetched() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cur != nil && g.cur.IdentityProvider {
		g.endLocked(false)
	}
}

// isArmed reports whether the service has answered once.
func (g *gate) isArmed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.armed
}

// inOutage reports whether the run waits out an outage now (or has
// stopped waiting).
func (g *gate) inOutage() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.armed && (g.cur != nil || g.stopped != nil)
}

// wait blocks while the run is in an outage. It returns nil once the
// service is back, the *OutageError once the run stopped waiting, or
// ctx's error.
func (g *gate) wait(ctx context.Context) error {
	for {
		g.mu.Lock()
		if g.stopped != nil {
			err := g.stopped
			g.mu.Unlock()
			return err
		}
		if g.cur == nil {
			g.mu.Unlock()
			return nil
		}
		up := g.up
		g.mu.Unlock()
		select {
		case <-up:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// stop makes every wait, now and later, return an *OutageError: the run
// stops and takes no new rows, so no call should wait for the service.
// It closes quit: no call waits out a backoff or a Retry-After either, and
// no createLead attempt is sent that had not gone out yet.
func (g *gate) stop() {
	g.quitOnce.Do(func() {
		g.quitting.Store(true)
		close(g.quit)
	})
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped != nil {
		return
	}
	if g.cur == nil {
		g.stopped = &OutageError{Stopped: true, Outage: Outage{Start: g.cfg.now(), Cause: "no outage"}}
		return
	}
	o := *g.cur
	g.endLocked(true)
	g.down.Store(true) // stopped in an outage: nothing more is sent
	g.stopped = &OutageError{Stopped: true, Outage: o}
}

// beginLocked starts an outage and its prober. g.mu is held.
func (g *gate) beginLocked(idp bool, cause string, start time.Time) {
	g.calm.Store(false)
	g.cur = &Outage{Start: start, IdentityProvider: idp, Cause: cause}
	g.declared = g.cfg.now()
	g.down.Store(true)
	up := make(chan struct{})
	g.up = up
	g.started.Add(1)
	g.cfg.log.Warn(g.cur.Waiting(g.cfg.now())+": no new rows are taken, rows in flight wait; probing until it answers", "outage_wait", g.cfg.wait)
	g.probes.Add(1)
	go g.probeLoop(*g.cur, up)
}

// endLocked ends the current outage: the service is back, or (gaveUp) the
// run stops waiting. g.mu is held.
func (g *gate) endLocked(gaveUp bool) {
	o := g.cur
	o.End, o.GaveUp = g.cfg.now(), gaveUp
	g.history = append(g.history, *o)
	g.cur = nil
	g.down.Store(gaveUp)
	close(g.up)
	if !gaveUp {
		g.cfg.log.Info(fmt.Sprintf("%s back after %d s", o.Who(), int(o.Length(o.End).Seconds())), "cause", o.Cause, "since", o.Start.Format(time.TimeOnly))
	}
}

// probeLoop probes outage o until an answer ends it, or the outage wait
// runs out: then the run stops waiting.
func (g *gate) probeLoop(o Outage, up chan struct{}) {
	defer g.probes.Done()
	deadline := o.Start.Add(g.cfg.wait)
	for n := 1; ; n++ {
		left := deadline.Sub(g.cfg.now())
		if left <= 0 {
			g.giveUp(up)
			return
		}
		t := time.NewTimer(min(probeDelay(n, g.cfg.probeBase, g.cfg.probeMax, rand.Float64()), left))
		select {
		case <-t.C:
		case <-up:
			t.Stop()
			return
		case <-g.ctx.Done():
			t.Stop()
			return
		}
		if g.cfg.now().Before(deadline) {
			ctx, cancel := context.WithDeadline(g.ctx, deadline)
			idp, cause, err := g.probe(ctx)
			cancel()
			if err == nil {
				g.probed(up)
				return
			}
			g.cfg.log.Debug("outage probe failed", "identity_provider", idp, "cause", cause)
		}
	}
}

// probed ends outage up after a probe was answered.
func (g *gate) probed(up chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.up == up && g.cur != nil {
		now := g.cfg.now().UnixNano()
		g.consecutive = 0
		g.lastAnswer.Store(now)
		g.answeredStart.Store(max(g.answeredStart.Load(), now))
		g.peak.Store(g.wire.Load())
		g.timeouts.Store(0)
		g.endLocked(false)
	}
}

// giveUp stops the waiting for outage up: it lasted longer than the wait.
func (g *gate) giveUp(up chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.up != up || g.cur == nil {
		return
	}
	o := *g.cur
	g.endLocked(true)
	g.stopped = &OutageError{Outage: o, Wait: g.cfg.wait}
	g.cfg.log.Error(fmt.Sprintf("%s has been away for %d s, longer than the outage wait (%s): stopping; rows not sent are left for a resumed run", o.Who(), int(g.cfg.now().Sub(o.Start).Seconds()), g.cfg.wait), "cause", o.Cause)
}

// outages returns the outages so far, the current one last (End zero).
func (g *gate) outages() []Outage {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := append([]Outage(nil), g.history...)
	if g.cur != nil {
		out = append(out, *g.cur)
	}
	return out
}

// current returns the outage going on, if any.
func (g *gate) current() (Outage, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cur == nil {
		return Outage{}, false
	}
	return *g.cur, true
}

// probeDelay is the wait before probe n (1-based): "equal jitter", half of
// min(max, base*2^(n-1)) plus a uniform draw (rnd in [0,1)) below the
// other half, so that probes never come back to back yet many clients do
// not probe in step.
func probeDelay(n int, base, max time.Duration, rnd float64) time.Duration {
	c := token.Backoff(n, base, max, 1)
	return c/2 + time.Duration(rnd*float64(c/2))
}

// verdictCause is the short cause of an outage-class attempt, for the
// outage's record: "502 Bad Gateway", "no reply within 2s", "connection
// refused".
func verdictCause(v *verdict) string {
	switch {
	case v.status != 0:
		return v.statusText
	case v.timedOut > 0:
		return "no reply within " + v.timedOut.String()
	}
	return networkCause(v.err)
}

// tokenOutage reports whether a failed token request says the identity
// provider is away (a 5xx, no reply within timeout, a refused
// connection), and names the failure in a few words. A 408 or 429 is the
// endpoint asking to slow down.
func tokenOutage(err error, timeout time.Duration) (string, bool) {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		st := re.Response.StatusCode
		cause := strconv.Itoa(st)
		if re.ErrorCode != "" {
			cause += " " + re.ErrorCode
		} else if t := http.StatusText(st); t != "" {
			cause += " " + t
		}
		return cause, st >= 500
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no reply within " + timeout.String(), true
	}
	return networkCause(err), true
}

// networkCause names a network failure in a few words.
func networkCause(err error) string {
	var dns *net.DNSError
	switch {
	case err == nil:
		return "no reply"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(err, &dns):
		return "DNS lookup failed"
	case errors.Is(err, context.DeadlineExceeded):
		return "no reply in time"
	}
	return err.Error()
}
