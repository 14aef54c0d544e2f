package submitter

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/token"
)

// throttledAttemptsFactor bounds the 429s in a row a call takes while no
// other call is answered: at most this many times MaxAttempts.
const throttledAttemptsFactor = 4

// callSpec is what the Client asks of the transport for one GraphQL call.
type callSpec struct {
	op  string
	red *redact.Redactor // the lead's, for the debug logs; nil: SSN-shaped numbers only
	// failFast stops at the first outage (see CallError.Outage) instead
	// of retrying it: Preflight wants to know now.
	failFast bool
	// probe makes one attempt (and one more after a 401) and tells the
	// outage gate nothing: it is the gate's probe, whose result the gate
	// reads.
	probe bool
	// decoded: the caller reads the call's result from its outcome, which
	// the outcomeLayer decoded from the reply, and nothing from the
	// library (Client.call). The library is then handed an empty object
	// in place of the reply's bytes, so that the reply is decoded once,
	// not twice (the library's decode and its logging of the reply cost
	// as much CPU again: bench/README.md, cpu.sh).
	decoded bool
}

// callOutcome is what the transport learnt about one GraphQL call: the
// retryLayer's result, gathered from what each attempt's layers returned
// (an *attemptError, or a 2xx reply's replyBody).
type callOutcome struct {
	attempts  int
	ambiguous bool
	errs      []GraphQLError // GraphQL errors of a 2xx reply
	result    *lead.Result   // the operation's result in a 2xx reply, nil when it has none
	err       error          // the call failed: *CallError or *token.AuthError
}

// handOff carries one GraphQL call across machinebox/graphql, whose only
// hook is the http.Client it is given (see the package doc): the spec
// down, the outcome up. Client.run creates it, puts it in the request's
// context (withHandOff) and reads the outcome when the library returns;
// the retryLayer is the one layer that takes it out (handOffOf), and it
// writes the outcome once, as it returns. Only the call's own goroutine
// touches it.
type handOff struct {
	spec callSpec
	out  callOutcome
}

// handOffKey is the context key of a call's handOff.
type handOffKey struct{}

// withHandOff returns ctx carrying h to the transport.
func withHandOff(ctx context.Context, h *handOff) context.Context {
	return context.WithValue(ctx, handOffKey{}, h)
}

// handOffOf is the handOff in ctx, or nil (a request sent without a
// Client, as in tests that compose layers).
func handOffOf(ctx context.Context) *handOff {
	h, _ := ctx.Value(handOffKey{}).(*handOff)
	return h
}

// opOf is the operation of the call a request belongs to, for the layers
// under the retryLayer that count, pace or name by operation; "" without
// a handOff.
func opOf(ctx context.Context) string {
	if h := handOffOf(ctx); h != nil {
		return h.spec.op
	}
	return ""
}

// isProbe reports whether a request is the outage gate's probe, which the
// rate and the limit on calls in flight let through without a wait: it is
// the one call that tells whether the service is there, and the calls it
// would queue behind may be the ones the service holds.
func isProbe(ctx context.Context) bool {
	h := handOffOf(ctx)
	return h != nil && h.spec.probe
}

// errParked is the concurrencyLayer's answer to an attempt that got its
// place while the run waits out an outage: it was not sent, and waits for
// the gate instead (the retryLayer's parked).
var errParked = errors.New("parked: the service is away")

// layers are the settings of the transport's layers.
type layers struct {
	base        http.RoundTripper
	tokens      *token.Cache
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
	amb503      Ambiguous503
	gate        *gate
}

// newTransport composes the layers, outermost first. The result is safe
// for concurrent use.
func newTransport(l layers) http.RoundTripper {
	if l.now == nil {
		l.now = time.Now
	}
	var rt http.RoundTripper = &bodyLimitLayer{next: l.base, max: l.maxBody}
	rt = &deadlineLayer{next: rt, timeout: l.callTimeout, now: l.now}
	rt = &outcomeLayer{next: rt, now: l.now, refusals: l.refusals, ambiguous503: l.amb503}
	rt = &statsLayer{next: rt, stats: l.stats, now: l.now}
	conc := l.conc
	if conc == nil {
		conc = NewConcurrency(ConcurrencyConfig{Fixed: noConcurrencyLimit, Now: l.now})
	}
	rt = &concurrencyLayer{next: rt, conc: conc, now: l.now, hist: &l.stats.attemptLatency, gate: l.gate}
	rt = &authLayer{next: rt, tokens: l.tokens}
	rt = &rateLayer{next: rt, lim: l.rate, now: l.now, log: l.log, waiting: l.rateWait, allowed: l.rateAllowed}
	return &retryLayer{next: rt, log: l.log, stats: l.stats, maxAttempts: l.maxAttempts, base: l.backoffBase, max: l.backoffMax, gate: l.gate, now: l.now}
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
// the endpoint answered before, so it is away, not wrong. While the run
// waits out an outage, or has stopped in one, no attempt is sent: the
// call is parked (parked), and leaves at once with an *OutageError when
// the run stops waiting. It rewinds the request body for every attempt,
// counts the retries among them (the attempts made after the first), and
// gathers the call's outcome from what the layers under it return.
type retryLayer struct {
	next        http.RoundTripper
	log         *slog.Logger
	stats       *stats // its answered (replies other than 429); it counts the retries
	maxAttempts int
	base, max   time.Duration
	gate        *gate // nil: no outage handling
	now         func() time.Time
}

// RoundTrip performs one GraphQL call with all its attempts, and hands
// what it learnt to the Client through the call's handOff.
func (l *retryLayer) RoundTrip(req *http.Request) (*http.Response, error) {
	h := handOffOf(req.Context())
	if h == nil {
		h = &handOff{spec: callSpec{op: "graphql"}}
	}
	resp, out := l.call(req, h.spec)
	h.out = out
	if out.err != nil {
		return nil, out.err
	}
	return resp, nil
}

// call makes the attempts of the call spec describes: the last reply (nil
// when the call failed) and what the attempts' layers returned.
func (l *retryLayer) call(req *http.Request, spec callSpec) (*http.Response, callOutcome) {
	ctx := req.Context()
	var out callOutcome
	fail := func(err error) (*http.Response, callOutcome) {
		out.err = err
		return nil, out
	}
	body, err := newRewinder(req)
	if err != nil {
		return fail(&CallError{Op: spec.op, Message: "read request body", Err: err})
	}
	defer body.done(req)
	reauthed, throttled, stalled, waived := false, 0, 0, 0
	seen := l.stats.answered.Load()
	g := l.gate
	if spec.probe {
		g = nil
	}
	// streak is when this call's outage-class failures in a row began;
	// waitedOut is set once the call has waited out an outage.
	var streak time.Time
	waitedOut := false
	// parked waits for the gate instead of an attempt: nil when the
	// service is back, the call's error when the run stopped waiting.
	parked := func() error {
		if werr := g.wait(ctx); werr != nil {
			return outageStop(spec.op, out, werr)
		}
		return nil
	}
	for {
		if g != nil && g.parked() {
			if err := parked(); err != nil {
				return fail(err)
			}
			continue
		}
		start := l.now()
		resp, err := l.next.RoundTrip(body.request(ctx, req))
		if g != nil && errors.Is(err, errParked) {
			if err := parked(); err != nil {
				return fail(err)
			}
			continue
		}
		// The gate weighs an attempt from when it went on the wire, not
		// from its wait for the rate or a place.
		if sent := sentAt(resp, err); !sent.IsZero() {
			start = sent
		}
		ae := asAttempt(err)
		if ae != nil || err == nil {
			out.attempts++ // made, not stopped before by the rate or the token
			if out.attempts > 1 {
				l.stats.retries.Add(1)
				l.stats.ops[opIndex(spec.op)].retries.Add(1)
			}
		}
		if ae != nil && ae.ambiguous {
			out.ambiguous = true
		}
		if rb := replyOf(resp); err == nil && rb != nil {
			out.errs, out.result = rb.errs, rb.result
			if rb.ambiguous {
				out.ambiguous = true
			}
		}
		switch {
		case ctx.Err() != nil:
			if resp != nil {
				resp.Body.Close()
			}
			return fail(interrupted(spec.op, out, ctx.Err()))
		case err == nil:
			if g != nil {
				g.answered(start)
			}
			if rb := replyOf(resp); spec.decoded && rb != nil {
				rb.Reset([]byte(`{}`))
			}
			return resp, out
		case ae == nil:
			if g != nil && isTokenOutage(err) && g.inOutage() {
				// No token: the identity provider is away; the call waits.
				if werr := g.wait(ctx); werr != nil {
					return fail(outageStop(spec.op, out, werr))
				}
				continue
			}
			return fail(unattempted(spec.op, out, ctx, err))
		case ae.kind == outcomeReauth && !reauthed:
			if g != nil {
				g.answered(start)
			}
			reauthed = true
			l.log.Debug("401 from the lead endpoint; renewing the token", "op", spec.op, "attempt", out.attempts)
			continue
		case spec.probe:
			return fail(callError(spec.op, out, ae, false))
		case spec.failFast && ae.outage:
			return fail(callError(spec.op, out, ae, ae.kind == outcomeRetry))
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
			if !down && (silent || (!waitedOut && out.attempts-throttled-waived >= l.maxAttempts && !g.answeredSince(streak))) {
				// No reply while nothing else was answered, or giving up
				// now would fail the row while nothing sent since its
				// trouble began was answered: a probe tells whether the
				// service is away.
				down = g.confirm(ctx, cause, streak)
			}
			if down {
				waived++ // not the row's attempt to lose: the service is away
				if err := parked(); err != nil {
					return fail(err)
				}
				streak, waitedOut = time.Time{}, true
				continue
			}
			// Once the service has answered, an outage-class failure of any
			// kind is retried: the endpoint is away, not wrong.
			retryable = retryable || g.isArmed()
		}
		if !retryable {
			return fail(callError(spec.op, out, ae, false))
		}
		if ae.status == http.StatusTooManyRequests {
			throttled++
			if n := l.stats.answered.Load(); n != seen {
				seen, stalled = n, 0 // others were answered since: progress
			}
			stalled++
		}
		if out.attempts-throttled-waived >= l.maxAttempts || stalled >= throttledAttemptsFactor*l.maxAttempts {
			return fail(callError(spec.op, out, ae, ae.kind == outcomeRetry))
		}
		wait := max(backoffDelay(out.attempts-throttled-waived, l.base, l.max, rand.Float64()), ae.retryAfter)
		l.log.Debug("retrying", "op", spec.op, "attempt", out.attempts, "status", ae.status, "wait", wait, "reason", spec.red.String(ae.Error()))
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return fail(interrupted(spec.op, out, ctx.Err()))
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
func outageStop(op string, out callOutcome, werr error) *CallError {
	var oe *OutageError
	if !errors.As(werr, &oe) {
		return interrupted(op, out, werr)
	}
	return &CallError{Op: op, Message: oe.Error(), Retryable: true, Attempts: out.attempts, Ambiguous: out.ambiguous, Err: oe}
}

// unattempted is the call's error when no attempt could be made: no token
// (the tokenError of the authLayer) or no turn at the rate.
func unattempted(op string, out callOutcome, ctx context.Context, err error) error {
	var te *tokenError
	if !errors.As(err, &te) {
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

func interrupted(op string, out callOutcome, err error) *CallError {
	return &CallError{Op: op, Message: "interrupted: " + err.Error(), Attempts: out.attempts,
		Ambiguous: out.ambiguous, Interrupted: true, Err: err}
}

func callError(op string, out callOutcome, ae *attemptError, retryable bool) *CallError {
	ce := &CallError{Op: op, Status: ae.status, Retryable: retryable, Outage: ae.outage, Attempts: out.attempts,
		Ambiguous: out.ambiguous, Errors: ae.errs, Err: ae.err}
	switch {
	case len(ae.errs) > 0:
		// A non-2xx reply with GraphQL errors: the status is part of it.
		ce.Code = ae.errs[0].Code
		ce.Message = "HTTP " + ae.statusText + ": " + joinGraphQLErrors(ae.errs)
		ce.httpStatus = ae.statusText
	case ae.err != nil:
		// Go's HTTP client quotes the URL, query and all.
		ce.Message = redact.URLsIn(ae.err.Error())
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

// RoundTrip waits for the rate, then makes one attempt. The gate's probe
// passes without a turn, and tells the rate nothing.
func (l *rateLayer) RoundTrip(r *http.Request) (*http.Response, error) {
	if isProbe(r.Context()) {
		return l.next.RoundTrip(r)
	}
	l.waiting.enter()
	err := l.lim.Wait(r.Context())
	l.waiting.leave()
	l.allowed.note(l.lim.Rate())
	if err != nil {
		return nil, err
	}
	start := l.now()
	resp, err := l.next.RoundTrip(r)
	o := attemptOutcome{Start: start, Latency: l.now().Sub(start), Op: opOf(r.Context())}
	// The service's latency, as the deadlineLayer traced it: without the
	// wait for a place in flight (a limit that binds is no slower service)
	// and the client's own work.
	if d := serviceLatency(resp, err); d > 0 {
		o.Latency = d
	}
	switch ae := asAttempt(err); {
	case ae != nil:
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
// gives it back with the attempt's outcome and the service's latency (the
// deadlineLayer's trace: from the request written to the reply's first
// byte, without the waits above it or the client's own work; else from the
// place taken to the end), which also goes to the latency histogram. It
// tells the outage gate what goes on the wire
// and when (the attempt's sent, carried up on its result); an attempt
// whose place comes while the run waits out an outage is not sent
// (errParked), and a timeout while the gate suspects an outage teaches
// the Concurrency nothing (gate.suspects). The gate's probe passes without
// a place.
type concurrencyLayer struct {
	next http.RoundTripper
	conc *Concurrency
	now  func() time.Time
	hist *latencyHistogram
	gate *gate // nil: no outage handling
}

// RoundTrip takes a place, makes one attempt and gives the place back.
func (l *concurrencyLayer) RoundTrip(r *http.Request) (*http.Response, error) {
	if isProbe(r.Context()) {
		return l.next.RoundTrip(r)
	}
	ticket, err := l.conc.Acquire(r.Context())
	if err != nil {
		return nil, err
	}
	if l.gate != nil && l.gate.parked() {
		l.conc.Release(ticket, attemptOutcome{}, false)
		return nil, errParked
	}
	if l.gate != nil {
		l.gate.sending()
	}
	start := l.now()
	resp, err := l.next.RoundTrip(r)
	if l.gate != nil {
		l.gate.ended()
	}
	// The service's time, as the deadlineLayer traced it, when known.
	o := attemptOutcome{Start: start, Latency: l.now().Sub(start)}
	if d := serviceLatency(resp, err); d > 0 {
		o.Latency = d
	}
	o.Op = opOf(r.Context())
	learn := r.Context().Err() == nil
	switch ae := asAttempt(err); {
	case ae != nil:
		o.Status, o.RetryAfter, o.Timeout = ae.status, ae.retryAfter, ae.timeout
		ae.sent = start // for the retryLayer's gate
		if ae.timeout && l.gate != nil && l.gate.suspects(start) {
			learn = false
		}
	case err != nil:
		learn = false
	default:
		o.Status = resp.StatusCode
		if rb := replyOf(resp); rb != nil {
			rb.sent = start // for the retryLayer's gate
		}
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
	tokens *token.Cache
	// bearer is the Authorization header of the token last used, made
	// once per token rather than per attempt (a token is a kilobyte).
	bearer atomic.Pointer[bearerHeader]
}

// bearerHeader is a token and its Authorization header value.
type bearerHeader struct {
	tok   string
	value []string // shared by every request that sends tok: never changed
}

// tokenError is the authLayer's failure to get a token: no attempt made.
type tokenError struct{ err error }

func (e *tokenError) Error() string { return e.err.Error() }
func (e *tokenError) Unwrap() error { return e.err }

// RoundTrip makes one attempt with the current token.
func (l *authLayer) RoundTrip(r *http.Request) (*http.Response, error) {
	tok, err := l.tokens.Token(r.Context())
	if err != nil {
		return nil, &tokenError{err: err}
	}
	b := l.bearer.Load()
	if b == nil || b.tok != tok {
		b = &bearerHeader{tok: tok, value: []string{"Bearer " + tok}}
		l.bearer.Store(b)
	}
	// A shallow copy with a header of its own, so that the caller's is
	// left as it was; the values are shared, never changed.
	h := make(http.Header, len(r.Header)+1)
	for k, v := range r.Header {
		h[k] = v
	}
	h["Authorization"] = b.value
	r = r.WithContext(r.Context())
	r.Header = h
	resp, err := l.next.RoundTrip(r)
	if ae := asAttempt(err); ae != nil && ae.kind == outcomeReauth {
		l.tokens.Invalidate(tok)
	}
	return resp, err
}

// statsLayer counts every attempt and each attempt's outcome (the
// retryLayer, which knows which attempt is a retry, counts the retries). It sits under the authLayer: an attempt is one that
// had a token to send.
type statsLayer struct {
	next  http.RoundTripper
	stats *stats
	now   func() time.Time
}

// RoundTrip counts one attempt.
func (l *statsLayer) RoundTrip(r *http.Request) (*http.Response, error) {
	op := &l.stats.ops[opIndex(opOf(r.Context()))]
	l.stats.attempts.Add(1)
	start := l.now()
	resp, err := l.next.RoundTrip(r)
	ae := asAttempt(err)
	var errs []GraphQLError
	if rb := replyOf(resp); err == nil && rb != nil {
		errs = rb.errs
	}
	class := classOf(resp, errs, ae)
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
