package submitter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// throttledAttemptsFactor bounds the attempts of a call answered 429
// again and again: at most this many times MaxAttempts.
const throttledAttemptsFactor = 4

// recordKey is the context key of the callRecord of one GraphQL call.
type recordKey struct{}

// callRecord is what the transport learnt about one GraphQL call, carried
// in the request's context to the layer above the GraphQL library (which
// keeps only the first error message and never sees the status).
type callRecord struct {
	op        string
	attempts  int
	ambiguous bool
	errs      []GraphQLError // GraphQL errors of a 2xx reply
	err       error          // the call failed: *CallError or *AuthError
	// failFast stops at the first outage (see CallError.Outage) instead
	// of retrying it: Preflight wants to know now.
	failFast bool
}

// stats are the Client's counters. Safe for concurrent use.
type stats struct {
	calls, attempts, retries, status429, status401 atomic.Int64
}

// transport is the http.RoundTripper of the GraphQL library's http.Client.
// It owns every HTTP status: it sets the bearer token, waits on the shared
// rate before each attempt, retries what may be retried with full-jitter
// backoff, handles 401 by renewing the token once, caps the reply body, and
// hands the library a reply only when it is a 2xx with data or GraphQL
// errors. Everything else becomes an error recorded in the callRecord.
// Safe for concurrent use.
type transport struct {
	base        http.RoundTripper
	tokens      *tokenCache
	rate        limiter
	stats       *stats
	log         *slog.Logger
	now         func() time.Time
	maxAttempts int
	callTimeout time.Duration
	backoffBase time.Duration
	backoffMax  time.Duration
	maxBody     int64
}

// replyEnvelope is the part of a GraphQL reply the transport reads.
type replyEnvelope struct {
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

// attemptResult is one HTTP attempt's classified outcome.
type attemptResult struct {
	kind       outcome
	status     int
	statusText string
	body       []byte
	errs       []GraphQLError
	retryAfter time.Duration
	ambiguous  bool
	outage     bool  // see CallError.Outage
	err        error // network error, or a permanent problem with the reply
	resp       *http.Response
}

// RoundTrip performs one GraphQL call with all its attempts.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	rec, _ := ctx.Value(recordKey{}).(*callRecord)
	if rec == nil {
		rec = &callRecord{op: "graphql"}
	}
	getBody := req.GetBody
	if req.Body != nil {
		if getBody == nil {
			b, err := io.ReadAll(req.Body)
			req.Body.Close()
			if err != nil {
				return nil, t.fail(rec, &CallError{Op: rec.op, Message: "read request body", Err: err})
			}
			getBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		} else {
			req.Body.Close()
		}
	}

	reauthed := false
	throttled := 0 // attempts answered 429
	for {
		if err := t.rate.Wait(ctx); err != nil {
			return nil, t.fail(rec, t.interrupted(rec, err))
		}
		tok, err := t.tokens.get(ctx)
		if err != nil {
			var ae *AuthError
			if errors.As(err, &ae) {
				return nil, t.fail(rec, ae)
			}
			if ctx.Err() != nil {
				return nil, t.fail(rec, t.interrupted(rec, ctx.Err()))
			}
			// The token endpoint gave no token after its own retries: no
			// call can be made, which is an outage of the service.
			return nil, t.fail(rec, &CallError{Op: rec.op, Message: err.Error(), Retryable: true, Outage: true,
				Attempts: rec.attempts, Ambiguous: rec.ambiguous, Err: err})
		}
		rec.attempts++
		t.stats.attempts.Add(1)
		if rec.attempts > 1 {
			t.stats.retries.Add(1)
		}
		sent := t.now()
		ar := t.attempt(ctx, req, getBody, tok)
		if r, lowered := t.rate.Observe(attemptOutcome{Start: sent, Latency: t.now().Sub(sent), Status: ar.status, RetryAfter: ar.retryAfter}); lowered {
			t.log.Info("lowering the shared rate", "status", ar.status, "rate", r)
		}
		if ar.ambiguous {
			rec.ambiguous = true
		}
		if ctx.Err() != nil {
			if ar.resp != nil {
				ar.resp.Body.Close()
			}
			return nil, t.fail(rec, t.interrupted(rec, ctx.Err()))
		}
		switch ar.kind {
		case outcomeSuccess:
			rec.errs = ar.errs
			return ar.resp, nil
		case outcomeReauth:
			t.stats.status401.Add(1)
			t.tokens.invalidate(tok)
			if !reauthed {
				reauthed = true
				t.log.Debug("401 from the lead endpoint; renewing the token", "op", rec.op, "attempt", rec.attempts)
				continue
			}
			return nil, t.fail(rec, t.callError(rec, ar, false))
		case outcomePermanent:
			return nil, t.fail(rec, t.callError(rec, ar, false))
		}
		// outcomeRetry
		if ar.status == http.StatusTooManyRequests {
			throttled++
			t.stats.status429.Add(1)
		}
		// A 429 asks to slow down; it does not say the call is failing, so
		// it does not use up MaxAttempts, within a bound.
		if (rec.failFast && ar.outage) || rec.attempts-throttled >= t.maxAttempts || rec.attempts >= throttledAttemptsFactor*t.maxAttempts {
			return nil, t.fail(rec, t.callError(rec, ar, true))
		}
		wait := backoffDelay(rec.attempts-throttled, t.backoffBase, t.backoffMax, rand.Float64())
		wait = max(wait, ar.retryAfter)
		t.log.Debug("retrying", "op", rec.op, "attempt", rec.attempts, "status", ar.status, "wait", wait, "reason", redactorFrom(ctx).String(ar.reason()))
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, t.fail(rec, t.interrupted(rec, ctx.Err()))
		}
	}
}

func (ar *attemptResult) reason() string {
	if ar.err != nil {
		return ar.err.Error()
	}
	return ar.statusText
}

func (t *transport) fail(rec *callRecord, err error) error {
	rec.err = err
	return err
}

func (t *transport) interrupted(rec *callRecord, err error) *CallError {
	return &CallError{Op: rec.op, Message: "interrupted: " + err.Error(), Attempts: rec.attempts,
		Ambiguous: rec.ambiguous, Err: err}
}

func (t *transport) callError(rec *callRecord, ar attemptResult, retryable bool) *CallError {
	ce := &CallError{Op: rec.op, Status: ar.status, Retryable: retryable, Outage: ar.outage, Attempts: rec.attempts,
		Ambiguous: rec.ambiguous, Errors: ar.errs, Err: ar.err}
	switch {
	case len(ar.errs) > 0:
		// A non-2xx reply with GraphQL errors: the status is part of it.
		ce.Code = ar.errs[0].Code
		ce.Message = "HTTP " + ar.statusText + ": " + joinGraphQLErrors(ar.errs)
	case ar.err != nil:
		ce.Message = ar.err.Error()
	default:
		ce.Message = "HTTP " + ar.statusText
	}
	return ce
}

// attempt sends one HTTP request and classifies the reply.
func (t *transport) attempt(ctx context.Context, req *http.Request, getBody func() (io.ReadCloser, error), tok string) attemptResult {
	actx, cancel := context.WithTimeout(ctx, t.callTimeout)
	defer cancel()
	var wrote atomic.Bool
	actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				wrote.Store(true)
			}
		},
	})
	r := req.Clone(actx)
	if getBody != nil {
		body, err := getBody()
		if err != nil {
			return attemptResult{kind: outcomePermanent, err: fmt.Errorf("rewind request body: %w", err)}
		}
		r.Body = body
	}
	r.Header.Set("Authorization", "Bearer "+tok)

	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return t.networkError(actx, err, wrote.Load(), "send request")
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, t.maxBody+1))
	resp.Body.Close()
	if err != nil {
		// The request was answered, so it reached the service.
		return t.networkError(actx, err, true, "read reply")
	}
	ar := attemptResult{status: resp.StatusCode, statusText: resp.Status}
	if ar.statusText == "" {
		ar.statusText = fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	if int64(len(body)) > t.maxBody {
		ar.kind = outcomePermanent
		ar.err = fmt.Errorf("reply body larger than %d bytes (HTTP %s)", t.maxBody, ar.statusText)
		return ar
	}
	// Parse the reply here only when it may hold GraphQL errors (the
	// library keeps only the first message, without its code). A reply
	// without them is decoded once, by the library; the layer above fails
	// it if it is not JSON or lacks the operation's result.
	var env replyEnvelope
	var jsonErr error
	if bytes.Contains(body, []byte(`"errors"`)) {
		jsonErr = json.Unmarshal(body, &env)
		ar.errs = env.graphQLErrors()
	}
	var amb bool
	ar.kind, amb = classifyStatus(resp.StatusCode)
	ar.ambiguous = amb
	ar.outage = len(ar.errs) == 0 && isOutageStatus(resp.StatusCode)
	switch ar.kind {
	case outcomeRetry:
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), t.now()); ok {
			ar.retryAfter = d
		}
		return ar
	case outcomeSuccess:
	default:
		return ar
	}
	if jsonErr == nil && !looksLikeJSONObject(body) {
		jsonErr = errors.New("it does not start with '{'")
	}
	if jsonErr != nil {
		// Whatever answered is not a GraphQL service (a proxy's page, a
		// web server at the wrong path): an outage, not a row's problem.
		ar.kind = outcomePermanent
		ar.outage = true
		ar.err = fmt.Errorf("reply is not GraphQL JSON (HTTP %s): %w", ar.statusText, jsonErr)
		return ar
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	ar.resp = resp
	return ar
}

// networkError classifies a failure to get a reply. A failure after the
// request was written is ambiguous: the service may have processed it.
func (t *transport) networkError(actx context.Context, err error, wrote bool, what string) attemptResult {
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("%s: no reply within %s: %w", what, t.callTimeout, err)
	} else {
		err = fmt.Errorf("%s: %w", what, err)
	}
	if isTLSError(err) {
		// Nothing was sent, and retrying cannot fix a certificate.
		return attemptResult{kind: outcomePermanent, outage: true,
			err: fmt.Errorf("TLS failed, check the URL's scheme and the server's certificate: %w", err)}
	}
	if wrote {
		err = fmt.Errorf("connection lost after the request was sent: %w", err)
	}
	return attemptResult{kind: outcomeRetry, ambiguous: wrote, outage: true, err: err}
}

// looksLikeJSONObject reports whether body starts, after white space, with
// '{', as every GraphQL reply does. The library decodes the rest.
func looksLikeJSONObject(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}
