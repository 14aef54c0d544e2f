package submitter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/bulkload/bulkload/lead"
)

// attemptError is one failed HTTP attempt as the outcomeLayer classified
// it. The layers above read it; the retryLayer turns the call's last one
// into a *CallError.
type attemptError struct {
	kind       outcome
	status     int // 0 when there was no reply
	statusText string
	errs       []GraphQLError // of a non-2xx reply
	retryAfter time.Duration
	ambiguous  bool  // the service may have processed the request
	outage     bool  // see CallError.Outage
	timeout    bool  // no reply within the attempt's timeout
	err        error // network error, or what is wrong with the reply
	// latency is the service's latency, from the request written to the
	// reply's first byte, as the deadlineLayer traced it; 0 when not
	// measured (no reply).
	latency time.Duration
	// sent is when the attempt went on the wire (its place taken), as
	// the concurrencyLayer saw it, for the retryLayer's outage gate; zero
	// when not known.
	sent time.Time
	// timedOut is the attempt's deadline when it passed with no reply (the
	// outage's cause names it); 0 otherwise.
	timedOut time.Duration
}

// Error is the reason, for logs.
func (e *attemptError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return e.statusText
}

func (e *attemptError) Unwrap() error { return e.err }

// outcomeLayer classifies every attempt: it is the one place that decides
// what a reply or a network failure means (with classifyStatus,
// isOutageStatus, isTLSError and mayBeProcessed, the one rule of
// ambiguity). It decodes a 2xx reply whole, once, and hands it up with
// its result and its GraphQL errors in its replyBody (the library keeps
// only the first message, without its code, and decodes nothing more);
// everything else becomes an *attemptError.
type outcomeLayer struct {
	next http.RoundTripper
	now  func() time.Time
	// refusals are the extensions.code values of a GraphQL error that
	// refuses a request before the service did anything (see
	// Config.RefusalCodes).
	refusals map[string]bool
	// ambiguous503 says which 503s may follow a commit (see
	// Config.Ambiguous503).
	ambiguous503 Ambiguous503
}

// RoundTrip makes one attempt and classifies it.
func (l *outcomeLayer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	if err != nil {
		return nil, classifyFailure(err, l.ambiguous503)
	}
	body, err := bodyBytes(resp)
	if err != nil {
		return nil, classifyFailure(&replyReadError{err: err}, l.ambiguous503)
	}
	op := opOf(r.Context())
	bb := resp.Body.(*bufferedBody) // bodyBytes leaves one
	// A value until it fails: a success allocates no error.
	ae := attemptError{status: resp.StatusCode, statusText: statusText(resp), latency: bb.latency}
	ae.kind = classifyStatus(resp.StatusCode)
	// A 2xx or 503 reply is decoded whole here; another only when it may
	// hold GraphQL errors.
	var env replyEnvelope
	var jsonErr error
	if ae.kind == outcomeSuccess || resp.StatusCode == http.StatusServiceUnavailable || bytes.Contains(body, []byte(`"errors"`)) {
		jsonErr = json.Unmarshal(body, &env)
		ae.errs = env.graphQLErrors()
	}
	ae.outage = len(ae.errs) == 0 && isOutageStatus(resp.StatusCode)
	// The service's own refusal of the request: GraphQL errors, no data.
	refusal := jsonErr == nil && looksLikeJSONObject(body) && len(ae.errs) > 0 && env.Data == nil
	switch ae.kind {
	case outcomeRetry:
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), l.now()); ok {
			ae.retryAfter = d
		}
		ae.ambiguous = mayBeProcessed(ae.status, true, refusal, l.ambiguous503)
		return nil, heapError(ae)
	case outcomeSuccess:
	default:
		if rd := redirectOf(resp); rd != nil {
			ae.err = rd // never followed: the request carries the token
		}
		ae.ambiguous = mayBeProcessed(ae.status, true, refusal, l.ambiguous503)
		return nil, heapError(ae)
	}
	switch {
	case jsonErr == nil && !looksLikeJSONObject(body):
		jsonErr = errors.New("it does not start with '{'")
	case isTypeError(jsonErr):
		// JSON, but its result does not decode (a resultCode "1013" or
		// 1.013e22): the service answered, and what it did is unknown.
		ae.kind, ae.errs = outcomePermanent, nil
		ae.ambiguous = mayBeProcessed(ae.status, true, false, l.ambiguous503)
		ae.err = fmt.Errorf("reply does not decode as the %s result (HTTP %s): %w", opName(op), ae.statusText, jsonErr)
		return nil, heapError(ae)
	}
	if jsonErr != nil {
		// Whatever answered is not a GraphQL service (a proxy's page, a
		// web server at the wrong path, a truncated reply): an outage, not
		// a row's problem; a createLead may have got through all the same.
		ae.kind, ae.outage, ae.errs = outcomePermanent, true, nil
		ae.ambiguous = mayBeProcessed(ae.status, true, false, l.ambiguous503)
		ae.err = fmt.Errorf("reply is not GraphQL JSON (HTTP %s): %w", ae.statusText, jsonErr)
		return nil, heapError(ae)
	}
	rb := &replyBody{bufferedBody: *bb, errs: ae.errs, result: env.Data.of(op)}
	rb.ambiguous = mayBeProcessed(ae.status, true, l.usable(rb.result, rb.errs), l.ambiguous503)
	resp.Body = rb
	return resp, nil
}

// heapError is ae as the error an attempt returns.
func heapError(ae attemptError) *attemptError { return &ae }

// isTypeError reports whether a decode failed on a value of the wrong
// type (JSON all the same).
func isTypeError(err error) bool {
	if err == nil {
		return false
	}
	var typeErr *json.UnmarshalTypeError
	return errors.As(err, &typeErr)
}

// replyBody is a 2xx reply's body as the outcomeLayer hands it up: the
// bytes, for the GraphQL library, and what the layer decoded from them, for
// the layers above it (replyOf).
type replyBody struct {
	bufferedBody
	errs      []GraphQLError // the reply's GraphQL errors, with their codes
	result    *lead.Result   // the operation's result, nil when it has none
	ambiguous bool           // what the service did is unknown (see mayBeProcessed)
	// sent is as attemptError's. (The service's latency is the
	// bufferedBody's.)
	sent time.Time
}

// replyOf is what the outcomeLayer decoded from resp, or nil (no reply, or
// one that did not pass through an outcomeLayer).
func replyOf(resp *http.Response) *replyBody {
	if resp == nil {
		return nil
	}
	rb, _ := resp.Body.(*replyBody)
	return rb
}

// asAttempt is err's *attemptError, nil when it has none. The layers
// return it as it is, so an assertion finds it without errors.As, whose
// target would be allocated on every attempt, the ones that succeed too.
func asAttempt(err error) *attemptError {
	if err == nil {
		return nil
	}
	if ae, ok := err.(*attemptError); ok {
		return ae
	}
	var ae *attemptError
	if errors.As(err, &ae) {
		return ae
	}
	return nil
}

// serviceLatency is the service's latency of an attempt as the
// deadlineLayer traced it, carried up on its result; 0 when not measured.
func serviceLatency(resp *http.Response, err error) time.Duration {
	if ae := asAttempt(err); ae != nil {
		return ae.latency
	}
	if rb := replyOf(resp); err == nil && rb != nil {
		return rb.latency
	}
	return 0
}

// sentAt is when an attempt went on the wire, as the concurrencyLayer
// saw it, carried up on its result; zero when not known.
func sentAt(resp *http.Response, err error) time.Time {
	if ae := asAttempt(err); ae != nil {
		return ae.sent
	}
	if rb := replyOf(resp); err == nil && rb != nil {
		return rb.sent
	}
	return time.Time{}
}

// usable reports whether a 2xx reply is an answer: the result without
// errors, or only errors that refuse the request (every one with a
// refusal code) and no result.
func (l *outcomeLayer) usable(result *lead.Result, errs []GraphQLError) bool {
	if len(errs) == 0 {
		return result != nil
	}
	if result != nil {
		return false // data and errors: what happened is unknown
	}
	for _, ge := range errs {
		if !l.refusals[ge.Code] {
			return false
		}
	}
	return true
}

// opName is op, for messages: "operation" when unknown.
func opName(op string) string {
	if op == "" {
		return "operation"
	}
	return op
}

// classifyFailure classifies an attempt that got no reply to read (or one
// too large to read). A failure after the request was written is
// ambiguous: the service may have processed it. rule is as for
// mayBeProcessed.
func classifyFailure(err error, rule Ambiguous503) *attemptError {
	var big *bodyTooLargeError
	if errors.As(err, &big) {
		return &attemptError{kind: outcomePermanent, status: big.status, statusText: big.statusText, err: big,
			ambiguous: mayBeProcessed(big.status, true, false, rule)}
	}
	var se *sendError
	if !errors.As(err, &se) {
		se = &sendError{err: err}
	}
	what := "send request"
	var re *replyReadError
	if errors.As(err, &re) {
		what = "read reply"
	}
	if se.timeout > 0 {
		err = fmt.Errorf("%s: no reply within %s: %w", what, se.timeout, se.err)
	} else {
		err = fmt.Errorf("%s: %w", what, se.err)
	}
	if isTLSError(err) {
		// Nothing was sent, and retrying cannot fix a certificate.
		return &attemptError{kind: outcomePermanent, outage: true,
			err: fmt.Errorf("TLS failed, check the URL's scheme and the server's certificate: %w", err)}
	}
	if se.wrote {
		err = fmt.Errorf("connection lost after the request was sent: %w", err)
	}
	return &attemptError{kind: outcomeRetry, ambiguous: mayBeProcessed(0, se.wrote, false, rule), outage: true, timeout: se.timeout > 0, err: err, timedOut: se.timeout, latency: se.latency}
}

// replyEnvelope is a GraphQL reply as the outcomeLayer reads it.
type replyEnvelope struct {
	Data   *resultData `json:"data"`
	Errors []struct {
		Message    string `json:"message"`
		Extensions struct {
			Code string `json:"code"`
		} `json:"extensions"`
	} `json:"errors"`
}

func (e *replyEnvelope) graphQLErrors() []GraphQLError {
	if len(e.Errors) == 0 {
		return nil
	}
	out := make([]GraphQLError, len(e.Errors))
	for i, ge := range e.Errors {
		out[i] = GraphQLError{Message: ge.Message, Code: ge.Extensions.Code}
	}
	return out
}

// looksLikeJSONObject reports whether body starts, after white space, with
// '{', as every GraphQL reply does. The library decodes the rest.
func looksLikeJSONObject(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

func statusText(resp *http.Response) string {
	if resp.Status != "" {
		return resp.Status
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
}

// deadlineLayer bounds one attempt by the call timeout, and traces it:
// whether the request was written before a failure (then the service may
// have processed it), and the service's latency, from the request written
// to the reply's first byte (the client's own work, encoding, waiting for
// a connection, reading and decoding the body, left out: on a busy client
// machine it grows with the calls in flight, and would look like a queue
// in the service). It hands the latency up on the attempt's result: the
// bufferedBody of a reply, the sendError of a failure.
type deadlineLayer struct {
	next    http.RoundTripper
	timeout time.Duration
	now     func() time.Time
}

// sendError is an attempt that got no reply within its deadline, or lost
// the connection.
type sendError struct {
	err     error
	wrote   bool          // the request was written
	timeout time.Duration // > 0: the attempt's deadline passed
	latency time.Duration // the service's, when its first byte came; else 0
}

func (e *sendError) Error() string { return e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// attemptTrace is one attempt's trace: when its request was written and
// when the reply's first byte came (UnixNano; 0: not yet). One trace for
// both, as one ClientTrace: two layers tracing one request would have
// net/http compose their hooks by reflection on every attempt.
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

// RoundTrip makes one attempt within the deadline. The layer below has
// read the reply's body by the time it returns.
func (l *deadlineLayer) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(r.Context(), l.timeout)
	defer cancel()
	t := &attemptTrace{}
	t.WroteRequest = func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			t.wrote.Store(l.now().UnixNano())
		}
	}
	t.GotFirstResponseByte = func() { t.first.Store(l.now().UnixNano()) }
	resp, err := l.next.RoundTrip(r.WithContext(httptrace.WithClientTrace(ctx, &t.ClientTrace)))
	if err != nil {
		se := &sendError{err: err, wrote: t.wrote.Load() != 0, latency: t.latency()}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			se.timeout = l.timeout
		}
		return nil, se
	}
	if bb, ok := resp.Body.(*bufferedBody); ok {
		bb.latency = t.latency()
	}
	return resp, nil
}

// bodyLimitLayer reads the reply's body whole, up to max bytes, and hands
// it up as a bufferedBody, so that the connection is free for the next
// call and a service cannot make the client read without end.
type bodyLimitLayer struct {
	next http.RoundTripper
	max  int64
}

// bufferedBody is a reply body read by the bodyLimitLayer, with the
// service's latency the deadlineLayer measured (0: not measured).
type bufferedBody struct {
	bytes.Reader // over b; one allocation with it
	b            []byte
	latency      time.Duration
}

// newBufferedBody is b as a reply body.
func newBufferedBody(b []byte) *bufferedBody {
	bb := &bufferedBody{b: b}
	bb.Reset(b)
	return bb
}

func (*bufferedBody) Close() error { return nil }

// bodyBytes is the reply's body: the bodyLimitLayer's buffer, or else read
// whole (and put back) for a chain composed without that layer.
func bodyBytes(resp *http.Response) ([]byte, error) {
	if bb, ok := resp.Body.(*bufferedBody); ok {
		return bb.b, nil
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = newBufferedBody(b)
	return b, err
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

// replyReadError is a reply whose body could not be read: the request
// reached the service.
type replyReadError struct{ err error }

func (e *replyReadError) Error() string { return e.err.Error() }
func (e *replyReadError) Unwrap() error { return e.err }

// RoundTrip makes one attempt and reads its reply.
func (l *bodyLimitLayer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	b, err := readUpTo(resp.Body, l.max+1, resp.ContentLength)
	resp.Body.Close()
	if err != nil {
		return nil, &replyReadError{err: err}
	}
	if int64(len(b)) > l.max {
		return nil, &bodyTooLargeError{max: l.max, status: resp.StatusCode, statusText: statusText(resp)}
	}
	resp.Body = newBufferedBody(b)
	resp.ContentLength = int64(len(b))
	resp.Header.Del("Content-Length")
	return resp, nil
}

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

// rewinder gives each attempt a fresh copy of the request's body.
type rewinder struct {
	getBody func() (io.ReadCloser, error)
	// fresh: the request's own body is unread, and the first attempt
	// sends the request as it came.
	fresh bool
}

// newRewinder reads req's body if it cannot be had again.
func newRewinder(req *http.Request) (rewinder, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return rewinder{fresh: true}, nil
	}
	if req.GetBody != nil {
		return rewinder{getBody: req.GetBody, fresh: true}, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return rewinder{}, err
	}
	return rewinder{getBody: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}, nil
}

// done closes req's own body when no attempt sent it (RoundTrip's
// contract: the body is closed, sent or not).
func (w *rewinder) done(req *http.Request) {
	if w.fresh && req.Body != nil {
		req.Body.Close()
	}
}

// request is req for one attempt, under ctx (req's own), with a fresh
// body: the first attempt of a request whose body can be had again sends
// req itself, no copy made.
func (w *rewinder) request(ctx context.Context, req *http.Request) *http.Request {
	if w.fresh {
		w.fresh = false
		return req
	}
	r := req.WithContext(ctx)
	if w.getBody != nil {
		body, err := w.getBody()
		if err != nil {
			body = io.NopCloser(errReader{fmt.Errorf("rewind request body: %w", err)})
		}
		r.Body = body
	}
	return r
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
