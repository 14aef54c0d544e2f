package submitter

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/machinebox/graphql"

	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/token"
)

// longRetryAfter is a Retry-After long enough for the log to say, once a
// run, that calls wait it out: longer than the longest backoff of
// production (DefaultBackoffMax).
const longRetryAfter = time.Minute

// throttledAttemptsFactor bounds the 429s in a row a call takes while no
// other call is answered: at most this many times MaxAttempts.
const throttledAttemptsFactor = 4

// callSpec is how one GraphQL call is made.
type callSpec struct {
	op  string
	red *redact.Redactor // the lead's, for the debug logs; nil: SSN-shaped numbers only
	// failFast stops at the first outage (see CallError.Outage) instead
	// of retrying it: Preflight wants to know now.
	failFast bool
	// probe makes one attempt (and one more after a 401), without pacing,
	// and tells the outage gate nothing: it is the gate's probe, whose
	// result the gate reads.
	probe bool
}

// callOutcome is what the attempts of one GraphQL call came to.
type callOutcome struct {
	attempts  int
	ambiguous bool
	errs      []GraphQLError // GraphQL errors of a 2xx reply
	data      *resultData    // a 2xx reply's data, nil when it has none
	err       error          // the call failed: *CallError or *token.AuthError
}

// retry makes one GraphQL call of up to MaxAttempts attempts (attempt):
// it retries what classify calls retryable, after a full-jitter backoff
// or the reply's Retry-After, whichever is longer, and a 401 once at once
// (the authLayer has dropped the token). 429s do not use up MaxAttempts:
// while other calls are answered, the service is working and only busy,
// and the row is throttled, not failed; without that, at most
// throttledAttemptsFactor×MaxAttempts 429s in a row. It tells the outage
// gate how each attempt went (outage); during an outage an attempt that
// fails as one, or finds no token, does not use up MaxAttempts: the call
// waits for the gate to open and tries again (or ends with an
// *OutageError when the run stops waiting). Once the gate is armed, an
// outage-class failure is retried even when its kind is not (a 404, a
// reply that is not GraphQL): the endpoint answered before, so it is
// away, not wrong. While the run waits out an outage, or has stopped in
// one, no attempt is sent: the call is parked, and leaves at once with an
// *OutageError when the run stops waiting. A wait between attempts that
// would take the call's waits past MaxRetryWait is not waited: the call
// ends with a *DeferredError (deferred). The run's stop (StopWaiting) ends
// a wait between attempts at once, and sends no createLead that had not
// gone out, nor a submitLead that would wait for its turn at the rate
// (ErrStopped). Retries are the attempts made after the first.
func (c *Client) retry(ctx context.Context, spec callSpec, req *graphql.Request) callOutcome {
	var out callOutcome
	fail := func(err error) callOutcome {
		out.err = err
		return out
	}
	r := retrier{c: c, spec: spec, seen: c.stats.answered.Load(), g: c.gate}
	if spec.probe {
		r.g = nil
	}
	for {
		if r.g != nil && r.g.parked() {
			if err := r.parked(ctx, &out); err != nil {
				return fail(err)
			}
			continue
		}
		start := c.now()
		v, err := c.attempt(ctx, spec, req)
		if r.g != nil && errors.Is(err, errParked) {
			if err := r.parked(ctx, &out); err != nil {
				return fail(err)
			}
			continue
		}
		if errors.Is(err, errStopping) {
			return fail(&CallError{Op: spec.op, Message: "not sent: the run is stopping", Attempts: out.attempts,
				Ambiguous: out.ambiguous, Interrupted: true, Err: ErrStopped})
		}
		if err == nil {
			out.attempts++ // made, not stopped before by the rate or the token
			if out.attempts > 1 {
				c.stats.retries.Add(1)
				c.stats.ops[opIndex(spec.op)].retries.Add(1)
			}
			if v.ambiguous {
				out.ambiguous = true
			}
			// The gate weighs an attempt from when it went on the wire,
			// not from its wait for the rate or a place.
			if !v.sent.IsZero() {
				start = v.sent
			}
		}
		switch {
		case ctx.Err() != nil:
			return fail(interrupted(spec.op, out, ctx.Err()))
		case err != nil:
			if r.g != nil && isTokenOutage(err) && r.g.inOutage() {
				// No token: the identity provider is away; the call waits.
				if werr := r.g.wait(ctx); werr != nil {
					return fail(outageStop(spec.op, out, werr))
				}
				continue
			}
			return fail(unattempted(spec.op, out, ctx, err))
		case v.kind == outcomeSuccess:
			if r.g != nil {
				r.g.answered(start)
			}
			out.errs, out.data = v.errs, v.data
			return out
		}
		again, err := r.next(ctx, &out, &v, start)
		if err != nil {
			return fail(err)
		}
		if !again {
			continue
		}
		wait := max(token.Backoff(out.attempts-r.throttled-r.waived, c.backoffBase, c.backoffMax, rand.Float64()), v.retryAfter)
		if r.waited+wait > c.maxRetryWait {
			// The service asked the call to come back later than the run
			// waits for it (or the backoff would take its waits past
			// that): not retried, the row is left for a later run.
			return fail(deferred(spec.op, out, &v, r.waited, c.maxRetryWait))
		}
		r.waited += wait
		if v.retryAfter >= longRetryAfter && c.longWaitSaid.CompareAndSwap(false, true) {
			// Not silent: rows sit out minutes. Once a run: a tenth of a
			// large file would be thousands of lines.
			c.log.Warn("the service asks calls to wait before their next attempt (Retry-After): each waits it out while the other rows go on, up to the most a call waits", "op", spec.op, "retry_after", v.retryAfter, "max_retry_wait", c.maxRetryWait)
		}
		if err := c.pause(ctx, spec, out, &v, wait); err != nil {
			return fail(err)
		}
	}
}

// pause waits wait before the call's next attempt, after the failed
// attempt v: nil once it has passed. The run's stop (StopWaiting) ends it
// at once with a *CallError wrapping ErrStopped, as the end of ctx does
// with ctx's error: a call between its attempts is not on the wire, and
// only those on the wire are given the drain. A call that stops so
// before it has waited at all has not begun its wait either.
func (c *Client) pause(ctx context.Context, spec callSpec, out callOutcome, v *verdict, wait time.Duration) error {
	quit := c.gate.quit
	select {
	case <-quit:
		return stoppedWaiting(spec.op, out, v)
	default:
	}
	c.log.Debug("retrying", "op", spec.op, "attempt", out.attempts, "status", v.status, "wait", wait, "reason", spec.red.String(v.Error()))
	timer := time.NewTimer(wait)
	defer timer.Stop()
	waitFrom := c.now()
	c.stats.backoff.enter(waitFrom)
	defer func() { c.stats.backoff.leave(waitFrom, c.now()) }()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return interrupted(spec.op, out, ctx.Err())
	case <-quit:
		return stoppedWaiting(spec.op, out, v)
	}
}

// retrier is the state of one call's retries.
type retrier struct {
	c    *Client
	spec callSpec
	g    *gate // nil for the probe: no outage handling
	// reauthed: a 401 was retried; throttled: 429s so far; stalled: 429s
	// since another call was last answered (seen: the answers then);
	// waived: attempts lost to an outage, not the row's.
	reauthed                   bool
	throttled, stalled, waived int
	seen                       int64
	// streak is when this call's outage-class failures in a row began;
	// waitedOut is set once the call has waited out an outage.
	streak    time.Time
	waitedOut bool
	// waited sums the call's waits between attempts (backoff and
	// Retry-After), which Config.MaxRetryWait bounds.
	waited time.Duration
}

// parked waits for the gate instead of an attempt: nil when the service
// is back, the call's error when the run stopped waiting.
func (r *retrier) parked(ctx context.Context, out *callOutcome) error {
	if werr := r.g.wait(ctx); werr != nil {
		return outageStop(r.spec.op, *out, werr)
	}
	return nil
}

// next decides what follows a failed attempt v, sent at start: the call's
// error (it ends), another attempt at once (a 401 renewed, an outage
// waited out: again false), or one after a backoff (again true).
func (r *retrier) next(ctx context.Context, out *callOutcome, v *verdict, start time.Time) (again bool, err error) {
	c, g, op := r.c, r.g, r.spec.op
	switch {
	case v.kind == outcomeReauth && !r.reauthed:
		if g != nil {
			g.answered(start)
		}
		r.reauthed = true
		c.log.Debug("401 from the lead endpoint; renewing the token", "op", op, "attempt", out.attempts)
		return false, nil
	case r.spec.probe:
		return false, callError(op, *out, v, false)
	case r.spec.failFast && v.outage:
		return false, callError(op, *out, v, v.kind == outcomeRetry)
	}
	retryable := v.kind == outcomeRetry
	switch {
	case g == nil:
	case !v.outage:
		g.answered(start)
		r.streak = time.Time{}
	default:
		cause := verdictCause(v)
		if r.streak.IsZero() {
			r.streak = start
		}
		// A call that has waited out an outage once does not begin
		// another on its own evidence: if the probes found the service
		// answering and this call still fails, its attempts count.
		down, silent := g.failed(cause, v.timedOut > 0 && !r.waitedOut, start)
		if !down && (silent || (!r.waitedOut && out.attempts-r.throttled-r.waived >= c.maxAttempts && !g.answeredSince(start))) {
			// No reply while nothing else was answered, or giving up now
			// would fail the row while nothing sent since its last
			// attempt was answered: a probe tells whether the service is
			// away. (Since its last attempt, not since its trouble began:
			// a call sent just after the first failing attempt may have
			// reached the service before it went away, and its answer
			// says nothing about the service now.)
			down = g.confirm(ctx, cause, r.streak)
		}
		if down {
			r.waived++ // not the row's attempt to lose: the service is away
			if err := r.parked(ctx, out); err != nil {
				return false, err
			}
			r.streak, r.waitedOut = time.Time{}, true
			return false, nil
		}
		// Once the service has answered, an outage-class failure of any
		// kind is retried: the endpoint is away, not wrong.
		retryable = retryable || g.isArmed()
	}
	if !retryable {
		return false, callError(op, *out, v, false)
	}
	if v.status == http.StatusTooManyRequests {
		r.throttled++
		if n := c.stats.answered.Load(); n != r.seen {
			r.seen, r.stalled = n, 0 // others were answered since: progress
		}
		r.stalled++
	}
	if out.attempts-r.throttled-r.waived >= c.maxAttempts || r.stalled >= throttledAttemptsFactor*c.maxAttempts {
		return false, callError(op, *out, v, v.kind == outcomeRetry)
	}
	return true, nil
}

// isTokenOutage reports whether an attempt that could not be made failed
// for want of a token the identity provider did not give (not refused
// credentials).
func isTokenOutage(err error) bool {
	var te *tokenError
	return errors.As(err, &te) && !IsFatal(te.err) && !errors.Is(te.err, context.Canceled) && !errors.Is(te.err, context.DeadlineExceeded)
}

// outageStop is the call's error when it stopped waiting out an outage:
// werr, the gate's *OutageError, or the call's context ending.
func outageStop(op string, out callOutcome, werr error) *CallError {
	var oe *OutageError
	if !errors.As(werr, &oe) {
		return interrupted(op, out, werr)
	}
	return &CallError{Op: op, Message: oe.Error(), Retryable: true, Attempts: out.attempts, Ambiguous: out.ambiguous, Err: oe}
}

// unattempted is the call's error when no attempt could be made: no token
// (the tokenError of the authLayer), no turn at the rate or no place (its
// context ended), or a request the library could not send.
func unattempted(op string, out callOutcome, ctx context.Context, err error) error {
	var te *tokenError
	var ue *unsentError
	switch {
	case errors.As(err, &ue):
		return &CallError{Op: op, Message: ue.Error(), Attempts: out.attempts, Ambiguous: out.ambiguous, Err: ue.err}
	case !errors.As(err, &te):
		return interrupted(op, out, err)
	}
	var ae *token.AuthError
	if errors.As(te.err, &ae) {
		return ae
	}
	if ctx.Err() != nil {
		return interrupted(op, out, ctx.Err())
	}
	// The token endpoint gave no token after its own retries: no call can
	// be made, which is an outage of the service.
	return &CallError{Op: op, Message: redact.URLsIn(te.err.Error()), Retryable: true, Outage: true,
		Attempts: out.attempts, Ambiguous: out.ambiguous, Err: te.err}
}

// ErrStopped is the cause (CallError.Err) of a call that the run's stop
// (StopWaiting) found waiting between its attempts, out of a backoff or a
// Retry-After, a createLead still waiting for its turn at the rate or its
// place in flight, or a submitLead waiting for its turn at the rate: an
// interrupted call (IsInterrupted) whose next attempt was never sent.
// When Ambiguous, an earlier attempt may have reached the service.
var ErrStopped = errors.New("the run stopped while the call waited to retry")

// stoppedWaiting is the error of a call the run's stop found waiting to
// retry after the failed attempt v.
func stoppedWaiting(op string, out callOutcome, v *verdict) *CallError {
	return &CallError{Op: op, Status: v.status, Message: "stopped while waiting to retry (the run is stopping; the last attempt: " + redact.URLsIn(verdictCause(v)) + ")",
		Attempts: out.attempts, Ambiguous: out.ambiguous, Interrupted: true, Err: ErrStopped}
}

// deferred is the error of a call whose next wait, after the failed
// attempt v, would take its waits past bound (waited so far): the service
// asked it to come back later than the run waits, or its backoff would.
func deferred(op string, out callOutcome, v *verdict, waited, bound time.Duration) *CallError {
	de := &DeferredError{Waited: waited, Bound: bound}
	if v.retryAfter > 0 && waited+v.retryAfter > bound {
		de.RetryAfter = v.retryAfter
	}
	what := redact.URLsIn(verdictCause(v))
	if v.status != 0 {
		what = "HTTP " + v.statusText
	}
	if len(v.errs) > 0 {
		what += ": " + joinGraphQLErrors(v.errs)
	}
	// The reply's GraphQL errors are kept (a caller tells the service's
	// own answer from a gateway's by them), but the message says why the
	// call ended.
	ce := &CallError{Op: op, Status: v.status, Message: what + "; not retried: " + de.Error(), Retryable: true,
		Attempts: out.attempts, Ambiguous: out.ambiguous, Errors: v.errs, Err: de}
	if len(v.errs) > 0 {
		ce.Code = v.errs[0].Code
	}
	return ce
}

func interrupted(op string, out callOutcome, err error) *CallError {
	return &CallError{Op: op, Message: "interrupted: " + err.Error(), Attempts: out.attempts,
		Ambiguous: out.ambiguous, Interrupted: true, Err: err}
}

// callError is the call's error after its last attempt, v.
func callError(op string, out callOutcome, v *verdict, retryable bool) *CallError {
	ce := &CallError{Op: op, Status: v.status, Retryable: retryable, Outage: v.outage, Attempts: out.attempts,
		Ambiguous: out.ambiguous, Errors: v.errs, Err: v.err}
	switch {
	case len(v.errs) > 0:
		// A non-2xx reply with GraphQL errors: the status is part of it.
		ce.Code = v.errs[0].Code
		ce.Message = "HTTP " + v.statusText + ": " + joinGraphQLErrors(v.errs)
		ce.httpStatus = v.statusText
	case v.err != nil:
		// Go's HTTP client quotes the URL, query and all.
		ce.Message = redact.URLsIn(v.err.Error())
	default:
		ce.Message = "HTTP " + v.statusText
	}
	return ce
}
