package submitter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/machinebox/graphql"

	"github.com/bulkload/bulkload/pace"
	"github.com/bulkload/bulkload/token"
)

// The transport under the GraphQL library is a chain of small
// http.RoundTrippers that each do one job and wrap the next, outermost
// first:
//
//	authLayer      the bearer token; drops the token a 401 answered
//	capture        records the attempt's reply for the client (one per attempt)
//	deadlineLayer  the attempt's timeout, over its reply's body too
//	bodyLimitLayer the cap on the reply's body
//	base           net/http
//
// A layer holds only its next and its own state: none interprets a
// response for another, none returns an error for a response it obtained,
// and nothing passes between them in a context value or a body of their
// own. The client, not a layer, reads the reply (capture), classifies it
// once (classify) and decides: retry (its loop, retry.go), pacing (the
// rate and the limit on calls in flight, around each attempt: attempt),
// the outage gate and the stats. The probe of an outage makes its attempt
// without pacing.

// caller is the GraphQL library bound to one attempt at a time. The
// library's only hook is the http.Client it is given, and Run returns
// neither the reply nor anything but the first GraphQL error's message;
// so each attempt runs through a caller of its own (from the Client's
// pool), whose capture keeps the reply for the client. It is the client's
// argument to the library, not a value in the request's context.
type caller struct {
	gql *graphql.Client
	// auth is this caller's authLayer (its state, the token's header, is
	// the Client's), over its capture x.
	auth authLayer
	x    capture
}

// newCaller builds a caller of c's transport for c's pool.
func (c *Client) newCaller() *caller {
	k := &caller{}
	k.x = capture{next: c.chain, maxBody: c.maxBody, now: c.now}
	k.auth = authLayer{next: &k.x, tokens: c.tokens, bearer: &c.bearer}
	// The library's Log field stays unset: it would log the variables.
	k.gql = graphql.NewClient(c.endpointURL, graphql.WithHTTPClient(&http.Client{Transport: &k.auth, CheckRedirect: token.RefuseRedirect}))
	return k
}

// attempt makes one attempt of the call spec describes: its turn at the
// rate and its place in flight (the probe takes neither: it is the one
// call that tells whether the service is there, and the calls it would
// queue behind may be the ones the service holds), the exchange, and
// classify's verdict, from which the limiters, the histogram of attempt
// latencies and the outage gate's count of attempts on the wire learn. It
// returns an error when no attempt was made: the run waits out an outage
// (errParked: the attempt got its place while the gate was down), the
// run stopped a createLead before it went out (errStopping: at the
// stop, while it waited for its turn at the rate, or it got its place
// after the stop) or a submitLead that would wait for its turn,
// ctx ended while the attempt waited for its turn or place, or there was
// no token (a *tokenError).
func (c *Client) attempt(ctx context.Context, spec callSpec, req *graphql.Request) (verdict, error) {
	if spec.probe {
		return c.exchange(ctx, spec.op, req)
	}
	var (
		ticket    int64
		rateStart time.Time
	)
	// At the run's stop (the gate's quit) a row's call does not wait for
	// its turn at the rate: it is not on the wire, and a pause of every
	// call (a Retry-After most answers carry) or a low rate would hold the
	// stop for its length. A createLead is not sent at all once the run
	// stops (its row is not sent). A submitLead whose turn is there at
	// once still goes: it completes a row whose createLead was on the
	// wire at the stop; one that would wait leaves, its row created with
	// its lead's id (--resume submits it). A lead read (the own-lead
	// check) waits its turn: a nil channel never ends a wait.
	var stop <-chan struct{}
	switch spec.op {
	case "createLead":
		if c.gate.quitting.Load() {
			return verdict{}, errStopping
		}
		stop = c.gate.quit
	case "submitLead":
		stop = c.gate.quit
	}
	for {
		c.rateWait.enter()
		err := c.rate.Wait(ctx, stop)
		c.rateWait.leave()
		r := c.rate.Rate()
		c.allowed.note(r)
		if errors.Is(err, pace.ErrStopped) {
			return verdict{}, errStopping
		}
		if err != nil {
			return verdict{}, err
		}
		rateStart = c.now()
		ticket, err = c.conc.Acquire(ctx)
		if err != nil {
			return verdict{}, err
		}
		if now := c.rate.Rate(); now == 0 || (r > 0 && now >= r) {
			break
		}
		// The rate set no limit when this attempt passed it and has one
		// now (--rate auto's first 429), or was lowered (a 429) while it
		// waited for a place. Every attempt that passed the rate
		// meanwhile waits for a place, and would go at once when it got
		// one; against a service that answers its 429s at once, each
		// frees its place for the next, refused as fast (bench/conc.sh
		// rate150: 189 429s in 250 ms after the first 429 set the rate,
		// 190 after a later cut). It gives the place back (holding it
		// while it waits would keep the calls that have their turn from
		// the wire) and takes its turn at the rate in force.
		c.conc.Release(ticket, pace.Outcome{}, false)
	}
	if c.gate.parked() {
		c.conc.Release(ticket, pace.Outcome{}, false)
		return verdict{}, errParked
	}
	if spec.op == "createLead" && c.gate.quitting.Load() {
		// The run is stopping: a row that was waiting for its turn or
		// its place is not on the wire, and starts nothing new now (a
		// submitLead that has its place goes: it completes a row whose
		// lead exists).
		c.conc.Release(ticket, pace.Outcome{}, false)
		return verdict{}, errStopping
	}
	c.gate.sending()
	start := c.now()
	v, err := c.exchange(ctx, spec.op, req)
	c.gate.ended()
	// The service's latency, as the attempt's trace measured it: without
	// the wait for a place in flight (a limit that binds is no slower
	// service) and the client's own work; else the wall time.
	o := pace.Outcome{Start: start, Latency: c.now().Sub(start), Op: spec.op}
	if v.latency > 0 {
		o.Latency = v.latency
	}
	learn := ctx.Err() == nil && err == nil
	if err == nil {
		o.Status, o.RetryAfter, o.Timeout = v.status, v.retryAfter, v.timeout
		if o.RetryAfter > c.maxRetryWait {
			// Longer than any call waits: the call leaves (deferred), and
			// no other call is held back for it, not even when every
			// answer says so (the gate stops the run then: callEnded).
			o.RetryAfter = 0
		}
		v.sent = start // for the outage gate
		// A timeout while the gate suspects an outage teaches the limit
		// nothing (gate.suspects).
		if v.timeout && c.gate.suspects(start) {
			learn = false
		}
	}
	if learn && (o.Status != 0 || o.Timeout) {
		c.stats.attemptLatency.observe(o.Latency)
	}
	c.conc.Release(ticket, o, learn)
	if err != nil {
		return v, err // no attempt was made: the rate learns nothing
	}
	ro := pace.Outcome{Start: rateStart, Latency: c.now().Sub(rateStart), Op: spec.op, Status: v.status, RetryAfter: o.RetryAfter}
	if v.latency > 0 {
		ro.Latency = v.latency
	}
	if rate, lowered := c.rate.Observe(ro); lowered {
		// --rate auto's lowerings before its first cut follow what the
		// service accepts and find no limit yet; from the first cut on
		// the line says the limit found.
		args := []any{"status", ro.Status, "rate", rate}
		if f, ok := c.rate.(interface{ Limit() float64 }); ok && f.Limit() > 0 {
			args = append(args, "limit", f.Limit())
		}
		c.log.Info("lowering the shared rate", args...)
	}
	return v, nil
}

// RateLimiter paces the HTTP attempts of every call of a Client and
// learns from what became of them: *pace.Adaptive (--rate auto) or
// *pace.AIMD, which New builds unless Config.RateLimiter gives one. The
// Client calls Wait before each attempt and Observe after it.
// Implementations are safe for concurrent use.
type RateLimiter interface {
	// Wait blocks until one more attempt may start, or ctx ends, or stop
	// is closed: then it returns pace.ErrStopped, and the attempt is not
	// made. A nil stop never ends the wait.
	Wait(ctx context.Context, stop <-chan struct{}) error
	// Observe reports one attempt's outcome; lowered is true when it made
	// the shared rate lower (the Client logs it), now is the new rate.
	Observe(o pace.Outcome) (now float64, lowered bool)
	// Rate is the rate in calls per second now; 0 means unlimited.
	Rate() float64
}

// ConcurrencyLimiter is the limit on attempts in flight across every call
// of a Client: *pace.Concurrency, which New builds unless
// Config.ConcurrencyLimiter gives one. The Client takes a place before
// each attempt (the outage gate's probe excepted) and gives it back with
// the attempt's outcome; learn is false for an attempt that says nothing
// of the service. Implementations are safe for concurrent use.
type ConcurrencyLimiter interface {
	Acquire(ctx context.Context) (ticket int64, err error)
	Release(ticket int64, o pace.Outcome, learn bool)
	// Limits is the limit and the attempts in flight now.
	Limits() (limit, inFlight int)
	// Snapshot is the state now, for Stats.
	Snapshot() pace.ConcurrencySnapshot
}

// TokenSource is where a Client gets the access token it sends:
// *token.Cache, which New builds unless Config.Tokens gives one.
// Implementations are safe for concurrent use.
type TokenSource interface {
	// Token returns a token to send, fetching one if needed; a
	// *token.AuthError when the credentials are refused.
	Token(ctx context.Context) (string, error)
	// Invalidate drops tok, which the service answered 401.
	Invalidate(tok string)
	// Fetch fetches a token now and describes it (CheckAuth).
	Fetch(ctx context.Context) (token.Info, error)
	// Fetches counts the tokens fetched (Stats.TokensFetched).
	Fetches() int64
}

// errParked is attempt's answer when the attempt got its place while the
// run waits out an outage: it was not sent, and the call waits for the
// gate instead.
var errParked = errors.New("parked: the service is away")

// errStopping is attempt's answer when the run's stop (StopWaiting) found
// a createLead or a submitLead attempt waiting for its turn at the rate,
// or a createLead's came after the stop or got its place after it: it was
// not sent.
var errStopping = errors.New("not sent: the run is stopping")

// exchange sends one attempt of operation op through the library and the
// transport, reads the reply (once, in the capture) and classifies it;
// the stats count it. It returns an error when no attempt was made (no
// token: a *tokenError).
func (c *Client) exchange(ctx context.Context, op string, req *graphql.Request) (verdict, error) {
	k := c.callers.Get().(*caller)
	defer c.callers.Put(k)
	k.x.start()
	// One trace per attempt, the client's: whether the request was
	// written, and the service's latency. A trace of its own each time:
	// a late hook of an attempt cut off must not touch the next one's.
	t := &attemptTrace{}
	t.WroteRequest = func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			t.wrote.Store(c.now().UnixNano())
		}
	}
	t.GotFirstResponseByte = func() { t.first.Store(c.now().UnixNano()) }
	runErr := k.gql.Run(httptrace.WithClientTrace(ctx, &t.ClientTrace), req, &skipData{})
	if !k.x.reached {
		// The authLayer had no token for it, or the library failed
		// before sending (its request could not be encoded).
		var te *tokenError
		if errors.As(runErr, &te) {
			return verdict{}, te
		}
		if runErr == nil {
			runErr = errors.New("no request was sent")
		}
		return verdict{}, &unsentError{err: runErr}
	}
	r := &k.x.r
	r.wrote, r.latency = t.wrote.Load() != 0, t.latency()
	v := c.classifier.classify(r, op, c.now())
	c.stats.attempt(op, &v, k.x.elapsed)
	return v, nil
}

// unsentError is a request the GraphQL library failed to send: its
// variables could not be encoded.
type unsentError struct{ err error }

func (e *unsentError) Error() string { return "send request: " + e.err.Error() }
func (e *unsentError) Unwrap() error { return e.err }

// attemptTrace is one attempt's trace: when its request was written and
// when the reply's first byte came (UnixNano; 0: not yet).
type attemptTrace struct {
	httptrace.ClientTrace
	wrote, first atomic.Int64
}

// latency is the service's latency, 0 when not both times are known.
func (t *attemptTrace) latency() time.Duration {
	if w, f := t.wrote.Load(), t.first.Load(); w != 0 && f > w {
		return time.Duration(f - w)
	}
	return 0
}

// skipData is where the GraphQL library decodes a reply's data: nowhere.
// The client decodes the reply itself (classify); the library is handed
// an empty object (capture).
type skipData struct{}

// UnmarshalJSON does nothing.
func (skipData) UnmarshalJSON([]byte) error { return nil }

// capture is the layer under the authLayer of one caller: it makes the
// attempt and reads its reply for the client, once, whole (up to the cap:
// the bodyLimitLayer's), so that the connection is free for the next
// call; the client decodes and classifies it. The library, whose only job
// here is to encode the request, is handed an empty object in the reply's
// place: it would decode the reply a second time, and format it for its
// log line, for nothing (bench/README.md, cpu.sh).
type capture struct {
	next    http.RoundTripper
	maxBody int64
	now     func() time.Time
	// What one attempt brought back; reached: the attempt was made (it had
	// a token), elapsed: from then until its reply was read.
	reached bool
	elapsed time.Duration
	r       reply
	empty   emptyObject
}

// start readies the capture for an attempt.
func (x *capture) start() {
	x.reached, x.elapsed, x.r = false, 0, reply{}
}

// RoundTrip makes the attempt, records its reply and reads the reply's
// body.
func (x *capture) RoundTrip(req *http.Request) (*http.Response, error) {
	x.reached = true
	start := x.now()
	resp, err := x.next.RoundTrip(req)
	if err != nil {
		x.elapsed, x.r.err = x.now().Sub(start), err
		return nil, err
	}
	x.r.status, x.r.statusText, x.r.header, x.r.request = resp.StatusCode, statusText(resp), resp.Header, resp.Request
	x.r.body, err = readUpTo(resp.Body, x.maxBody+1, resp.ContentLength)
	resp.Body.Close()
	if err != nil {
		x.r.err, x.r.read = err, true
	}
	x.elapsed = x.now().Sub(start)
	x.empty.Reset(emptyJSON)
	resp.Body, resp.ContentLength = &x.empty, int64(len(emptyJSON))
	return resp, nil
}

// emptyJSON is what the library reads of every reply.
var emptyJSON = []byte(`{}`)

// emptyObject is a body of emptyJSON.
type emptyObject struct{ bytes.Reader }

func (*emptyObject) Close() error { return nil }

// readUpTo reads r to its end, or up to n bytes. size, the length the
// reply announced (-1: unknown), sizes the buffer, so that a reply is read
// into one allocation rather than io.ReadAll's growing ones; a length that
// lies costs only a grow.
func readUpTo(r io.Reader, n, size int64) ([]byte, error) {
	c := int64(512)
	if size >= 0 {
		c = min(size+1, n) // one more: the read that meets the end
	}
	b := make([]byte, 0, max(c, 1))
	for int64(len(b)) < n {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		m, err := r.Read(b[len(b):min(int64(cap(b)), n)])
		b = b[:len(b)+m]
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// authLayer sets the shared bearer token on each attempt, and drops the
// token a 401 answered, so that the next attempt (of this call or any
// other) fetches a new one: many workers seeing the same 401 cause one
// fetch.
type authLayer struct {
	next   http.RoundTripper
	tokens TokenSource
	// bearer is the Authorization header of the token last used, made
	// once per token rather than per attempt (a token is a kilobyte);
	// shared by the Client's callers.
	bearer *atomic.Pointer[bearerHeader]
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
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		l.tokens.Invalidate(tok)
	}
	return resp, err
}

// deadlineLayer bounds one attempt by the call timeout, the reading of its
// reply's body included: the deadline ends when the body is closed. An
// attempt whose deadline passed fails with a *deadlineError.
type deadlineLayer struct {
	next    http.RoundTripper
	timeout time.Duration
}

// deadlineError is an attempt, or the reading of its reply, cut off by
// its deadline.
type deadlineError struct {
	timeout time.Duration
	err     error
}

func (e *deadlineError) Error() string { return e.err.Error() }
func (e *deadlineError) Unwrap() error { return e.err }

// RoundTrip makes one attempt within the deadline.
func (l *deadlineLayer) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(r.Context(), l.timeout)
	resp, err := l.next.RoundTrip(r.WithContext(ctx))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = &deadlineError{timeout: l.timeout, err: err}
		}
		cancel()
		return nil, err
	}
	resp.Body = &deadlineBody{ReadCloser: resp.Body, ctx: ctx, cancel: cancel, timeout: l.timeout}
	return resp, nil
}

// deadlineBody is a reply's body read under its attempt's deadline.
type deadlineBody struct {
	io.ReadCloser
	ctx     context.Context
	cancel  context.CancelFunc
	timeout time.Duration
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && errors.Is(b.ctx.Err(), context.DeadlineExceeded) {
		err = &deadlineError{timeout: b.timeout, err: err}
	}
	return n, err
}

// Close closes the body and ends the deadline.
func (b *deadlineBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// bodyLimitLayer caps the reply's body at max bytes: reading past them
// fails with a *bodyTooLargeError, so that a service cannot make the
// client read without end.
type bodyLimitLayer struct {
	next http.RoundTripper
	max  int64
}

// RoundTrip makes one attempt and caps its reply's body.
func (l *bodyLimitLayer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: l.max,
		tooLarge: bodyTooLargeError{max: l.max, status: resp.StatusCode, statusText: statusText(resp)}}
	return resp, nil
}

// limitedBody is a body of at most left more bytes.
type limitedBody struct {
	io.ReadCloser
	left     int64
	tooLarge bodyTooLargeError
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// At the cap: one byte more says whether the body goes on.
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			e := b.tooLarge
			return 0, &e
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// bodyTooLargeError is a reply over the cap.
type bodyTooLargeError struct {
	max        int64
	status     int
	statusText string
}

func (e *bodyTooLargeError) Error() string {
	return fmt.Sprintf("reply body larger than %d bytes (HTTP %s)", e.max, e.statusText)
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
