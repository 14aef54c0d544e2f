package leadsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Exact bodies of the errors answered before the GraphQL executor runs.
const (
	bodyUnauthorized   = `{"errors":[{"message":"Unauthorized","extensions":{"code":"UNAUTHENTICATED"}}]}`
	bodyRateLimited    = `{"errors":[{"message":"Too many requests: rate limit exceeded; retry after the Retry-After delay","extensions":{"code":"RATE_LIMITED"}}]}`
	bodyUnavailable    = `{"errors":[{"message":"Service temporarily unavailable","extensions":{"code":"SERVICE_UNAVAILABLE"}}]}`
	bodyInternal       = `{"errors":[{"message":"Internal server error","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]}`
	bodyTooLarge       = `{"errors":[{"message":"Request body too large","extensions":{"code":"PAYLOAD_TOO_LARGE"}}]}`
	bodyBadRequest     = `{"errors":[{"message":"Request body is not a JSON GraphQL request","extensions":{"code":"BAD_REQUEST"}}]}`
	bodyMethodNotAllow = `{"errors":[{"message":"Only POST is supported","extensions":{"code":"METHOD_NOT_ALLOWED"}}]}`
	bodyOverloaded     = `{"errors":[{"message":"Service overloaded: request queue full; retry after the Retry-After delay","extensions":{"code":"SERVICE_OVERLOADED"}}]}`
	// bodyBadGateway is a gateway's own page, not GraphQL: what a client
	// gets while the service behind the gateway is down.
	bodyBadGateway = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)

// statusRecorded marks a request whose answer is already counted.
const statusRecorded = -1

// queryCacheSize bounds the parsed documents kept per endpoint.
const queryCacheSize = 1000

// endpoint serves one GraphQL API: it reads the request, answers the
// platform's HTTP-level errors (413, 429, 401, faults), then runs the
// gqlgen executor with the caller's principal in the context.
type endpoint struct {
	s      *Server
	name   string
	schema *ast.Schema
	exec   *executor.Executor
	cache  *queryCache // parsed and validated documents
	bufs   sync.Pool
}

func newEndpoint(s *Server, name string, es graphql.ExecutableSchema) *endpoint {
	e := &endpoint{s: s, name: name, schema: es.Schema(), exec: executor.New(es), cache: newQueryCache(queryCacheSize)}
	e.exec.SetRecoverFunc(e.recoverFunc)
	e.bufs.New = func() any { return new(bytes.Buffer) }
	return e
}

// recoverFunc turns a resolver panic into a GraphQL error and a log line.
func (e *endpoint) recoverFunc(_ context.Context, err any) error {
	e.s.log.Error("resolver panic", "endpoint", e.name, "panic", err)
	return gqlerror.Errorf("internal server error")
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := e.s
	op, status := OpInvalid, http.StatusOK
	raw := w // MaxBytesReader marks the connection for closing through it
	cw := &countingWriter{ResponseWriter: w, stats: s.stats, op: &op}
	w = cw
	defer func() {
		if !cw.counted && status != statusRecorded {
			s.stats.request(op, status)
		}
	}()

	if r.Method != http.MethodPost {
		status = http.StatusMethodNotAllowed
		s.stats.reject(RejectBadRequest)
		w.Header().Set("Allow", http.MethodPost)
		writeRaw(w, status, bodyMethodNotAllow)
		return
	}
	if e.name == "lead" && s.opts.HangMode == HangUnread && s.hangs() {
		// Held unread until Heal or Close (the server cannot tell that
		// the client went away from a request it never reads), then
		// closed unanswered: nothing was processed.
		s.stats.reject(RejectHung)
		s.hold(r.Context())
		status = 0
		dropConnection(w)
		return
	}
	buf := e.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer e.bufs.Put(buf)
	body := r.Body
	if s.opts.MaxBodyBytes > 0 {
		body = http.MaxBytesReader(raw, body, s.opts.MaxBodyBytes)
	}
	if _, err := buf.ReadFrom(body); err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			status = http.StatusRequestEntityTooLarge
			s.stats.reject(RejectBodyTooLarge)
			writeRaw(w, status, bodyTooLarge)
			return
		}
		status = 499 // client went away mid-body; nothing useful to answer
		return
	}
	var params graphql.RawParams
	dec := json.NewDecoder(buf)
	dec.UseNumber() // as gqlgen's own transport: Int variables must stay exact
	if err := dec.Decode(&params); err != nil {
		status = http.StatusBadRequest
		s.stats.reject(RejectBadRequest)
		writeRaw(w, status, bodyBadRequest)
		return
	}
	params.Headers = r.Header
	ctx := r.Context()
	rc, verrs := e.operation(&params)
	op = operationName(rc)

	if e.name == "lead" {
		if n := s.graphql.Add(1); n <= int64(len(s.opts.FirstAnswers)) {
			status = s.opts.FirstAnswers[n-1]
			s.stats.reject(RejectFirstAnswer)
			page := bodyBadGateway
			if status != http.StatusBadGateway {
				page = fmt.Sprintf("<html><head><title>%d %s</title></head><body><center><h1>%d %s</h1></center><hr><center>nginx</center></body></html>\r\n", status, http.StatusText(status), status, http.StatusText(status))
			}
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Length", strconv.Itoa(len(page)))
			w.WriteHeader(status)
			_, _ = io.WriteString(w, page)
			return
		}
		if s.opts.Outage.contains(s.elapsed()) && (s.opts.OutageShare == 0 || s.rnd.Float64() < s.opts.OutageShare) {
			status = http.StatusBadGateway
			s.stats.reject(RejectOutage)
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Length", strconv.Itoa(len(bodyBadGateway)))
			w.WriteHeader(status)
			_, _ = io.WriteString(w, bodyBadGateway)
			return
		}
		if s.opts.HangMode == HangHeld && s.hangs() {
			e.serveHung(w, r, rc, verrs, &status)
			return
		}
	}

	if s.limiter != nil && len(s.opts.RateChanges) > 0 {
		s.rateLimit()
	}
	if s.limiter != nil && !s.limiter.Allow() {
		status = http.StatusTooManyRequests
		s.stats.reject(RejectRateLimited)
		if s.opts.RateLimitRetryAfter != "" {
			w.Header().Set("Retry-After", retryAfterValue(s.opts.RateLimitRetryAfter, s.opts.Now()))
		} else {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter(s.rateLimit())))
		}
		writeRaw(w, status, bodyRateLimited)
		return
	}
	p := s.authenticate(r)
	if e.name == "lead" && s.opts.RejectTokensAfter > 0 && s.authed.Add(1) > int64(s.opts.RejectTokensAfter) {
		p = nil // the API no longer accepts the identity provider's tokens
	}
	if p == nil {
		status = http.StatusUnauthorized
		s.stats.reject(RejectUnauthenticated)
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		writeRaw(w, status, bodyUnauthorized)
		return
	}
	if verrs != nil {
		// gqlgen's answer to parse and validation failures: 422 with
		// extensions.code GRAPHQL_PARSE_FAILED or GRAPHQL_VALIDATION_FAILED.
		status = http.StatusOK
		if errcode.GetErrorKind(verrs) == errcode.KindProtocol {
			status = http.StatusUnprocessableEntity
		}
		s.stats.reject(RejectGraphQLValidation)
		e.writeResponse(w, status, e.exec.DispatchError(graphql.WithOperationContext(ctx, rc), verrs))
		return
	}

	drop, reset := false, false
	if s.faults && (op == OpCreateLead || op == OpSubmitLead) && (s.opts.FaultOp == "" || s.opts.FaultOp == op) {
		switch u := s.rnd.Float64(); {
		case u < s.opts.Fail503:
			status = http.StatusServiceUnavailable
			s.stats.reject(RejectFault503)
			if s.opts.Fail503RetryAfter != "" {
				w.Header().Set("Retry-After", retryAfterValue(s.opts.Fail503RetryAfter, s.opts.Now()))
			}
			writeRaw(w, status, faultBody(bodyUnavailable, s.faultEcho(rc, op)))
			return
		case u < s.opts.Fail503+s.opts.Fail500:
			status = http.StatusInternalServerError
			s.stats.reject(RejectFault500)
			writeRaw(w, status, faultBody(bodyInternal, s.faultEcho(rc, op)))
			return
		case u < s.opts.Fail503+s.opts.Fail500+s.opts.DropAfter:
			drop = true
		case u < s.opts.Fail503+s.opts.Fail500+s.opts.DropAfter+s.opts.ProxyReset:
			reset = true
		}
	}
	release, err := s.gate.acquire(ctx)
	switch {
	case errors.Is(err, errShed):
		status = http.StatusServiceUnavailable
		s.stats.reject(RejectShed)
		w.Header().Set("Retry-After", "1")
		writeRaw(w, status, bodyOverloaded)
		return
	case err != nil:
		status = 499 // the client went away while queued
		return
	}
	defer release()
	if err := sleep(ctx, e.latency(op), s.rnd); err != nil {
		status = 499
		return
	}

	ctx = context.WithValue(ctx, principalKey{}, p)
	responses, ctx := e.exec.DispatchOperation(ctx, rc)
	resp := responses(ctx)
	if drop {
		// Count before dropping: the client sees the drop at once and may
		// read the counters before this handler returns.
		s.stats.request(op, 0)
		s.stats.reject(RejectDropped)
		status = statusRecorded
		dropConnection(w)
		return
	}
	if reset {
		status = s.opts.ProxyResetStatus
		s.stats.reject(RejectProxyReset)
		writeProxyReset(w, &s.opts)
		return
	}
	e.writeResponse(w, status, resp)
}

// serveHung processes a request the hang holds, the way a backend behind
// a stuck proxy does (a createLead creates its lead), and holds its answer
// until Heal; a client that gives up first gets none.
func (e *endpoint) serveHung(w http.ResponseWriter, r *http.Request, rc *graphql.OperationContext, verrs gqlerror.List, status *int) {
	s := e.s
	s.stats.reject(RejectHung)
	ctx := r.Context()
	p := s.authenticate(r)
	var resp *graphql.Response
	switch {
	case p == nil:
	case verrs != nil:
		resp = e.exec.DispatchError(graphql.WithOperationContext(ctx, rc), verrs)
	default:
		responses, rctx := e.exec.DispatchOperation(context.WithValue(ctx, principalKey{}, p), rc)
		resp = responses(rctx)
	}
	if !s.hold(ctx) {
		*status = 499 // never answered
		return
	}
	if resp == nil {
		*status = http.StatusUnauthorized
		writeRaw(w, *status, bodyUnauthorized)
		return
	}
	e.writeResponse(w, *status, resp)
}

func (e *endpoint) latency(op string) Latency {
	switch op {
	case OpCreateLead:
		return e.s.opts.CreateLatency
	case OpSubmitLead:
		return e.s.opts.SubmitLatency
	case OpLead, OpCreditReport:
		return e.s.opts.ReadLatency
	}
	return Latency{}
}

func (e *endpoint) writeResponse(w http.ResponseWriter, status int, resp *graphql.Response) {
	buf := e.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	defer e.bufs.Put(buf)
	if len(resp.Errors) == 0 && len(resp.Extensions) == 0 && resp.Label == "" && resp.Path == nil && resp.HasNext == nil && json.Valid(resp.Data) {
		// The common answer, without the reflection of encoding/json: gqlgen
		// has already marshalled the data.
		buf.WriteString(`{"data":`)
		buf.Write(resp.Data)
		buf.WriteString("}\n")
	} else if err := json.NewEncoder(buf).Encode(resp); err != nil {
		e.s.log.Error("encode GraphQL response", "endpoint", e.name, "err", err)
		writeRaw(w, http.StatusInternalServerError, bodyInternal)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func writeRaw(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// dropConnection closes the client's connection without an answer, the
// way a crashed proxy does after the service has processed the request.
func dropConnection(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	conn, _, err := rc.Hijack()
	if err != nil {
		// HTTP/2 or a wrapped writer: abort the handler instead, which
		// resets the stream without a response.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// countingWriter counts the answer when its status is written, before the
// client can see it, so a test reading the counters right after an answer
// finds it counted.
type countingWriter struct {
	http.ResponseWriter
	stats   *counters
	op      *string
	counted bool
}

func (c *countingWriter) WriteHeader(status int) {
	if !c.counted {
		c.counted = true
		c.stats.request(*c.op, status)
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *countingWriter) Write(b []byte) (int, error) {
	if !c.counted {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection to drop it.
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// retryAfter is the Retry-After of a 429: the whole seconds until the
// bucket holds a token again, at least 1.
func retryAfter(perSecond float64) int {
	if perSecond <= 0 {
		return 1
	}
	return max(1, int(math.Ceil(1/perSecond)))
}

// operationName names a request in Stats: the first root field of the
// selected operation, or OpInvalid.
func operationName(rc *graphql.OperationContext) string {
	if rc == nil || rc.Doc == nil {
		return OpInvalid
	}
	opDef := rc.Operation
	if opDef == nil {
		opDef = rc.Doc.Operations.ForName(rc.OperationName)
	}
	if opDef == nil {
		return OpInvalid
	}
	for _, sel := range opDef.SelectionSet {
		if f, ok := sel.(*ast.Field); ok {
			switch f.Name {
			case OpCreateLead, OpSubmitLead, OpLead, OpCreditReport:
				return f.Name
			}
		}
	}
	return OpInvalid
}
