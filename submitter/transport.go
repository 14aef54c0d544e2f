package submitter

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/bulkload/bulkload/lead"
)

// throttledAttemptsFactor bounds the 429s in a row a call takes while no
// other call is answered: at most this many times MaxAttempts.
const throttledAttemptsFactor = 4

// recordKey is the context key of the callRecord of one GraphQL call.
type recordKey struct{}

// callRecord is what the layers learnt about one GraphQL call, carried in
// the request's context to the Client above the GraphQL library. Only the
// call's own goroutine touches it.
type callRecord struct {
	op        string
	red       *Redactor // the lead's, for the debug logs; nil: SSN-shaped numbers only
	attempts  int
	ambiguous bool
	errs      []GraphQLError // GraphQL errors of a 2xx reply
	result    *lead.Result   // the operation's result in a 2xx reply, nil when it has none
	err       error          // the call failed: *CallError or *AuthError
	// attemptLatency is the last attempt's latency as the
	// concurrencyLayer measured it, for the rateLayer above it.
	attemptLatency time.Duration
	// failFast stops at the first outage (see CallError.Outage) instead
	// of retrying it: Preflight wants to know now.
	failFast bool
	// probe makes one attempt (and one more after a 401) and tells the
	// outage gate nothing: it is the gate's probe, whose result the gate
	// reads.
	probe bool
}

// fail records err as the call's outcome and returns it.
func (rec *callRecord) fail(err error) error {
	rec.err = err
	return err
}

// recordOf is the callRecord in ctx, or nil.
func recordOf(ctx context.Context) *callRecord {
	rec, _ := ctx.Value(recordKey{}).(*callRecord)
	return rec
}

// layers are the settings of the transport's layers.
type layers struct {
	base        http.RoundTripper
	tokens      *tokenCache
	rate        limiter
	conc        *Concurrency
	rateWait    *waitClock
	rateAllowed *rateClock
	stats       *stats
	log         *slog.Logger
	now         func() time.Time
	maxAttempts int
	callTimeout time.Duration
	backoffBase time.Duration
	backoffMax  time.Duration
	maxBody     int64
	refusals    map[string]bool
	gate        *gate
}

// newTransport composes the layers, outermost first. The result is safe
// for concurrent use.
func newTransport(l layers) http.RoundTripper {
	if l.now == nil {
		l.now = time.Now
	}
	var rt http.RoundTripper = &bodyLimitLayer{next: l.base, max: l.maxBody}
	rt = &deadlineLayer{next: rt, timeout: l.callTimeout}
	rt = &outcomeLayer{next: rt, now: l.now, refusals: l.refusals}
	rt = &statsLayer{next: rt, stats: l.stats, now: l.now}
	conc := l.conc
	if conc == nil {
		conc = NewConcurrency(ConcurrencyConfig{Fixed: noConcurrencyLimit, Now: l.now})
	}
	rt = &concurrencyLayer{next: rt, conc: conc, now: l.now, hist: &l.stats.attemptLatency}
	rt = &authLayer{next: rt, tokens: l.tokens}
	rt = &rateLayer{next: rt, lim: l.rate, now: l.now, log: l.log, waiting: l.rateWait, allowed: l.rateAllowed}
	return &retryLayer{next: rt, log: l.log, answered: &l.stats.answered, maxAttempts: l.maxAttempts, base: l.backoffBase, max: l.backoffMax, gate: l.gate, now: l.now}
}

// retryLayer makes one GraphQL call of up to MaxAttempts attempts: it
// retries what the outcomeLayer calls retryable, after a full-jitter
// backoff or the reply's Retry-After, whichever is longer, and a 401 once
// at once (the authLayer has dropped the token). 429s do not use up
// MaxAttempts: while other calls are answered, the service is working and
// only busy, and the row is throttled, not failed; without that, at most
// throttledAttemptsFactor×MaxAttempts 429s in a row. It tells the outage
// gate how each attempt went; during an outage an attempt that fails as
// one, or finds no token, does not use up MaxAttempts: the call waits for
// the gate to open and tries again (or ends with an *OutageError when the
// run stops waiting). Once the gate is armed, an outage-class failure is
// retried even when its kind is not (a 404, a reply that is not GraphQL):
// the endpoint answered before, so it is away, not wrong. It rewinds the
// request body for every attempt and records the call's outcome.
type retryLayer struct {
	next        http.RoundTripper
	log         *slog.Logger
	answered    *atomic.Int64 // replies of the Client's calls other than 429
	maxAttempts int
	base, max   time.Duration
	gate        *gate // nil: no outage handling
	now         func() time.Time
}

// RoundTrip performs one GraphQL call with all its attempts.
func (l *retryLayer) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	rec := recordOf(ctx)
	if rec == nil {
		rec = &callRecord{op: "graphql"}
		ctx = context.WithValue(ctx, recordKey{}, rec)
	}
	body, err := newRewinder(req)
	if err != nil {
		return nil, rec.fail(&CallError{Op: rec.op, Message: "read request body", Err: err})
	}
	reauthed, throttled, stalled, waived := false, 0, 0, 0
	seen := l.answered.Load()
	g := l.gate
	if rec.probe {
		g = nil
	}
	// streak is when this call's outage-class failures in a row began;
	// waitedOut is set once the call has waited out an outage.
	var streak time.Time
	waitedOut := false
	for {
		start := l.now()
		resp, err := l.next.RoundTrip(body.request(ctx, req))
		var ae *attemptError
		if errors.As(err, &ae) || err == nil {
			rec.attempts++ // made, not stopped before by the rate or the token
		}
		if ae != nil && ae.ambiguous {
			rec.ambiguous = true
		}
		switch {
		case ctx.Err() != nil:
			if resp != nil {
				resp.Body.Close()
			}
			return nil, rec.fail(interrupted(rec, ctx.Err()))
		case err == nil:
			if g != nil {
				g.answered(start)
			}
			return resp, nil
		case ae == nil:
			if g != nil && isTokenOutage(err) && g.inOutage() {
				// No token: the identity provider is away; the call waits.
				if werr := g.wait(ctx); werr != nil {
					return nil, rec.fail(outageStop(rec, werr))
				}
				continue
			}
			return nil, rec.fail(unattempted(rec, ctx, err))
		case ae.kind == outcomeReauth && !reauthed:
			if g != nil {
				g.answered(start)
			}
			reauthed = true
			l.log.Debug("401 from the lead endpoint; renewing the token", "op", rec.op, "attempt", rec.attempts)
			continue
		case rec.probe:
			return nil, rec.fail(callError(rec, ae, false))
		case rec.failFast && ae.outage:
			return nil, rec.fail(callError(rec, ae, ae.kind == outcomeRetry))
		}
		retryable := ae.kind == outcomeRetry
		switch {
		case g == nil:
		case !ae.outage:
			g.answered(start)
			streak = time.Time{}
		default:
			cause := attemptCause(ae)
			if streak.IsZero() {
				streak = start
			}
			// A call that has waited out an outage once does not begin
			// another on its own evidence: if the probes found the service
			// answering and this call still fails, its attempts count.
			down, silent := g.failed(cause, ae.timedOut > 0 && !waitedOut, start)
			if !down && (silent || (!waitedOut && rec.attempts-throttled-waived >= l.maxAttempts && !g.answeredSince(streak))) {
				// No reply while nothing else was answered, or giving up
				// now would fail the row while nothing sent since its
				// trouble began was answered: a probe tells whether the
				// service is away.
				down = g.confirm(ctx, cause, streak)
			}
			if down {
				waived++ // not the row's attempt to lose: the service is away
				if werr := g.wait(ctx); werr != nil {
					return nil, rec.fail(outageStop(rec, werr))
				}
				streak, waitedOut = time.Time{}, true
				continue
			}
			// Once the service has answered, an outage-class failure of any
			// kind is retried: the endpoint is away, not wrong.
			retryable = retryable || g.isArmed()
		}
		if !retryable {
			return nil, rec.fail(callError(rec, ae, false))
		}
		if ae.status == http.StatusTooManyRequests {
			throttled++
			if n := l.answered.Load(); n != seen {
				seen, stalled = n, 0 // others were answered since: progress
			}
			stalled++
		}
		if rec.attempts-throttled-waived >= l.maxAttempts || stalled >= throttledAttemptsFactor*l.maxAttempts {
			return nil, rec.fail(callError(rec, ae, ae.kind == outcomeRetry))
		}
		wait := max(backoffDelay(rec.attempts-throttled-waived, l.base, l.max, rand.Float64()), ae.retryAfter)
		l.log.Debug("retrying", "op", rec.op, "attempt", rec.attempts, "status", ae.status, "wait", wait, "reason", rec.red.String(ae.Error()))
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, rec.fail(interrupted(rec, ctx.Err()))
		}
	}
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
func outageStop(rec *callRecord, werr error) *CallError {
	var oe *OutageError
	if !errors.As(werr, &oe) {
		return interrupted(rec, werr)
	}
	return &CallError{Op: rec.op, Message: oe.Error(), Retryable: true, Attempts: rec.attempts, Ambiguous: rec.ambiguous, Err: oe}
}

// unattempted is the call's error when no attempt could be made: no token
// (the tokenError of the authLayer) or no turn at the rate.
func unattempted(rec *callRecord, ctx context.Context, err error) error {
	var te *tokenError
	if !errors.As(err, &te) {
		return interrupted(rec, err)
	}
	var ae *AuthError
	if errors.As(te.err, &ae) {
		return ae
	}
	if ctx.Err() != nil {
		return interrupted(rec, ctx.Err())
	}
	// The token endpoint gave no token after its own retries: no call can
	// be made, which is an outage of the service.
	return &CallError{Op: rec.op, Message: RedactURLsIn(te.err.Error()), Retryable: true, Outage: true,
		Attempts: rec.attempts, Ambiguous: rec.ambiguous, Err: te.err}
}

func interrupted(rec *callRecord, err error) *CallError {
	return &CallError{Op: rec.op, Message: "interrupted: " + err.Error(), Attempts: rec.attempts,
		Ambiguous: rec.ambiguous, Err: err}
}

func callError(rec *callRecord, ae *attemptError, retryable bool) *CallError {
	ce := &CallError{Op: rec.op, Status: ae.status, Retryable: retryable, Outage: ae.outage, Attempts: rec.attempts,
		Ambiguous: rec.ambiguous, Errors: ae.errs, Err: ae.err}
	switch {
	case len(ae.errs) > 0:
		// A non-2xx reply with GraphQL errors: the status is part of it.
		ce.Code = ae.errs[0].Code
		ce.Message = "HTTP " + ae.statusText + ": " + joinGraphQLErrors(ae.errs)
		ce.httpStatus = ae.statusText
	case ae.err != nil:
		// Go's HTTP client quotes the URL, query and all.
		ce.Message = RedactURLsIn(ae.err.Error())
	default:
		ce.Message = "HTTP " + ae.statusText
	}
	return ce
}

// rateLayer paces every attempt of every call through one limiter, and
// tells it how each attempt went, so that it can slow down on 429s (or
// find the service's limit, for --rate auto).
type rateLayer struct {
	next    http.RoundTripper
	lim     limiter
	now     func() time.Time
	log     *slog.Logger
	waiting *waitClock // time with attempts waiting for the rate
	allowed *rateClock // the rate in force over time
}

// RoundTrip waits for the rate, then makes one attempt.
func (l *rateLayer) RoundTrip(r *http.Request) (*http.Response, error) {
	l.waiting.enter()
	err := l.lim.Wait(r.Context())
	l.waiting.leave()
	l.allowed.note(l.lim.Rate())
	if err != nil {
		return nil, err
	}
	start := l.now()
	resp, err := l.next.RoundTrip(r)
	o := attemptOutcome{Start: start, Latency: l.now().Sub(start)}
	if rec := recordOf(r.Context()); rec != nil {
		// The service's latency, as the concurrencyLayer measured it:
		// without the wait for a place in flight (a limit that binds is
		// no slower service) and the client's own work.
		o.Op = rec.op
		if rec.attemptLatency > 0 {
			o.Latency, rec.attemptLatency = rec.attemptLatency, 0
		}
	}
	var ae *attemptError
	switch {
	case errors.As(err, &ae):
		o.Status, o.RetryAfter = ae.status, ae.retryAfter
	case err != nil:
		return nil, err // no attempt was made: no token
	default:
		o.Status = resp.StatusCode
	}
	if rate, lowered := l.lim.Observe(o); lowered {
		l.log.Info("lowering the shared rate", "status", o.Status, "rate", rate)
	}
	return resp, err
}

// concurrencyLayer holds a place of the Concurrency for each attempt, and
// measures the attempt's latency from the place taken to the reply (the
// service's latency, without the waits above it) for the Concurrency and
// the latency histogram.
type concurrencyLayer struct {
	next http.RoundTripper
	conc *Concurrency
	now  func() time.Time
	hist *latencyHistogram
}

// RoundTrip takes a place, makes one attempt and gives the place back.
func (l *concurrencyLayer) RoundTrip(r *http.Request) (*http.Response, error) {
	ticket, err := l.conc.Acquire(r.Context())
	if err != nil {
		return nil, err
	}
	start := l.now()
	// The service's time: from the request written to the reply's first
	// byte, when both are known. The client's own work (encoding, waiting
	// for a connection, reading and decoding the body) is left out: on a
	// busy client machine it grows with the calls in flight, and would
	// look like a queue in the service.
	var wrote, first atomic.Int64
	r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				wrote.Store(l.now().UnixNano())
			}
		},
		GotFirstResponseByte: func() { first.Store(l.now().UnixNano()) },
	}))
	resp, err := l.next.RoundTrip(r)
	o := attemptOutcome{Start: start, Latency: l.now().Sub(start)}
	if w, f := wrote.Load(), first.Load(); w != 0 && f > w {
		o.Latency = time.Duration(f - w)
	}
	if rec := recordOf(r.Context()); rec != nil {
		o.Op = rec.op
		rec.attemptLatency = o.Latency
	}
	learn := r.Context().Err() == nil
	var ae *attemptError
	switch {
	case errors.As(err, &ae):
		o.Status, o.RetryAfter, o.Timeout = ae.status, ae.retryAfter, ae.timeout
	case err != nil:
		learn = false
	default:
		o.Status = resp.StatusCode
	}
	if learn && (o.Status != 0 || o.Timeout) {
		l.hist.observe(o.Latency)
	}
	l.conc.Release(ticket, o, learn)
	return resp, err
}

// authLayer sets the shared bearer token on each attempt, and drops the
// token a 401 answered, so that the next attempt (of this call or any
// other) fetches a new one: many workers seeing the same 401 cause one
// fetch.
type authLayer struct {
	next   http.RoundTripper
	tokens *tokenCache
}

// tokenError is the authLayer's failure to get a token: no attempt made.
type tokenError struct{ err error }

func (e *tokenError) Error() string { return e.err.Error() }
func (e *tokenError) Unwrap() error { return e.err }

// RoundTrip makes one attempt with the current token.
func (l *authLayer) RoundTrip(r *http.Request) (*http.Response, error) {
	tok, err := l.tokens.get(r.Context())
	if err != nil {
		return nil, &tokenError{err: err}
	}
	r = r.WithContext(r.Context()) // a shallow copy, so that the header can be replaced
	r.Header = r.Header.Clone()
	r.Header.Set("Authorization", "Bearer "+tok)
	resp, err := l.next.RoundTrip(r)
	var ae *attemptError
	if errors.As(err, &ae) && ae.kind == outcomeReauth {
		l.tokens.invalidate(tok)
	}
	return resp, err
}

// statsLayer counts every attempt, the retries among them, and each
// attempt's outcome. It sits under the authLayer: an attempt is one that
// had a token to send.
type statsLayer struct {
	next  http.RoundTripper
	stats *stats
	now   func() time.Time
}

// RoundTrip counts one attempt.
func (l *statsLayer) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := recordOf(r.Context())
	op := &l.stats.ops[opIndex(rec.op)]
	l.stats.attempts.Add(1)
	if rec.attempts > 0 { // the retryLayer counts them once made
		l.stats.retries.Add(1)
		op.retries.Add(1)
	}
	start := l.now()
	resp, err := l.next.RoundTrip(r)
	var ae *attemptError
	errors.As(err, &ae)
	class := classOf(resp, rec.errs, ae)
	op.outcomes[class].Add(1)
	if class == classOK || class == classGraphQLError {
		l.stats.answered.Add(1)
		l.stats.latency.observe(l.now().Sub(start))
	}
	if ae != nil {
		switch ae.status {
		case http.StatusTooManyRequests:
			l.stats.status429.Add(1)
		case http.StatusUnauthorized:
			l.stats.status401.Add(1)
		case http.StatusServiceUnavailable:
			l.stats.status503.Add(1)
		}
	}
	return resp, err
}
