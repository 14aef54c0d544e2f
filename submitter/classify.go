package submitter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/token"
)

// maxRetryAfter bounds what a Retry-After header is read as, so that no
// sum of waits overflows. What a call waits is bounded far below it, by
// Config.MaxRetryWait: a Retry-After past that is not waited at all.
const maxRetryAfter = 7 * 24 * time.Hour

// parseRetryAfter reads a Retry-After header, in seconds or as an HTTP date,
// as a wait from now, at most maxRetryAfter. Seconds beyond any clock
// ("99999999999999999999") are that bound, and fractional seconds ("1.5",
// not in RFC 9110, but some services send them) are read to the
// millisecond, rounded up. ok is false when the header is absent or
// unreadable.
func parseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if digits(v) {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter, true // out of int64's range, or past the bound
		}
		return time.Duration(secs) * time.Second, true
	}
	if whole, frac, found := strings.Cut(v, "."); found && digits(whole) && digits(frac) {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || secs >= maxRetryAfter.Seconds() {
			return maxRetryAfter, true
		}
		return time.Duration(math.Ceil(secs*1000)) * time.Millisecond, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d = t.Sub(now)
	if d < 0 {
		d = 0
	}
	if d > maxRetryAfter {
		d = maxRetryAfter
	}
	return d, true
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// outcome is the kind of one HTTP attempt's verdict (classify), which
// says what the call does next.
type outcome int

const (
	outcomeSuccess   outcome = iota // 2xx with data, or with GraphQL errors (a refusal, not retried)
	outcomeRetry                    // network error, 429, 502, 503, 504
	outcomeReauth                   // 401: drop the token, fetch one, retry once
	outcomePermanent                // any other status: not retried
)

// classifyStatus classifies an HTTP status of the lead endpoint. Whether
// the service may have processed the request even so is mayBeProcessed's
// to say.
func classifyStatus(status int) outcome {
	switch {
	case status >= 200 && status < 300:
		return outcomeSuccess
	case status == http.StatusUnauthorized:
		return outcomeReauth
	case status == http.StatusTooManyRequests, status == http.StatusServiceUnavailable,
		status == http.StatusBadGateway, status == http.StatusGatewayTimeout:
		return outcomeRetry
	default:
		return outcomePermanent
	}
}

// mayBeProcessed is the one rule of ambiguity: whether an attempt that got
// no usable answer may all the same have been processed by the service, so
// that a later "duplicate" answer may be this call's own lead. status is
// the reply's (0: none came); wrote reports that the request was written
// whole; answer reports that the reply is the service's own answer: for a
// 2xx, one that decoded into the operation's result without errors, or
// into a refusal (only errors, with codes that say the service refused the
// request before doing anything, see Config.RefusalCodes); for a 503, a
// GraphQL body of errors without data (see Ambiguous503). rule says which
// 503s may follow a commit.
//
// Ambiguous: no reply after the request was written (a timeout, a lost
// connection); every 5xx but 503 whatever its body (a 500 after a commit;
// a gateway's 502, 504 or 524, which say that the backend behind it did
// not answer properly, so that no body can prove it did nothing); a 503
// that is not the service's GraphQL answer (a proxy's page, text or empty
// body: Envoy and Istio answer so when the backend resets the stream
// after it committed), under the default rule; a 2xx that is not usable
// (over the size limit, not JSON, truncated, a result that does not decode
// such as a resultCode "1013" or 1.013e22, data and errors together,
// errors without a refusal code, or no result at all). Not ambiguous:
// nothing written; the service's own 503 (a GraphQL refusal: it asks to
// slow down before taking the request) and 429; 401 and every other 3xx or
// 4xx (refused before processing); a usable answer.
func mayBeProcessed(status int, wrote, answer bool, rule Ambiguous503) bool {
	switch {
	case status == 0:
		return wrote
	case status >= 200 && status < 300:
		return !answer
	case status == http.StatusServiceUnavailable:
		switch rule {
		case Ambiguous503All:
			return true
		case Ambiguous503None:
			return false
		}
		return !answer
	}
	return status >= 500
}

// Ambiguous503 says which 503 replies of the lead endpoint may follow a
// commit (mayBeProcessed). The interface shows no HTTP status but 401, so
// this is an assumption, and a setting (Config.Ambiguous503).
type Ambiguous503 int

const (
	// Ambiguous503NotGraphQL, the default: a 503 whose body is the
	// service's GraphQL answer (a JSON object with a non-empty errors
	// array and no data) was refused before processing; any other 503 (a
	// proxy's HTML or text page, an empty body, JSON that is no GraphQL
	// answer) may follow a commit.
	Ambiguous503NotGraphQL Ambiguous503 = iota
	// Ambiguous503All: every 503 may follow a commit (a gateway that
	// writes its own errors as GraphQL).
	Ambiguous503All
	// Ambiguous503None: no 503 follows a commit (no proxy stands between
	// the client and the service, which answers 503 only before it
	// processes a request).
	Ambiguous503None
)

// ambiguous503Names are the settings' names of the rules, in their order.
var ambiguous503Names = [...]string{"not-graphql", "all", "none"}

// String is the rule's name as ParseAmbiguous503 reads it.
func (a Ambiguous503) String() string {
	if a < 0 || int(a) >= len(ambiguous503Names) {
		return fmt.Sprintf("Ambiguous503(%d)", int(a))
	}
	return ambiguous503Names[a]
}

// ParseAmbiguous503 reads a rule by its name: not-graphql, all or none.
func ParseAmbiguous503(name string) (Ambiguous503, error) {
	for i, n := range ambiguous503Names {
		if n == name {
			return Ambiguous503(i), nil
		}
	}
	return 0, fmt.Errorf("which 503 answers may follow a commit: %q is no rule: want not-graphql, all or none", name)
}

// isOutageStatus reports whether a reply with this status and no GraphQL
// errors in its body says the endpoint is down or is not the service at
// all: a redirect, 404 and 405 (a wrong URL), and every 5xx but 503, which is the
// service asking to slow down (throttling, like 429).
func isOutageStatus(status int) bool {
	switch {
	case status == http.StatusNotFound, status == http.StatusMethodNotAllowed:
		return true
	case status >= 300 && status < 400:
		return true // a redirect, never followed: the URL is not the service's
	case status == http.StatusServiceUnavailable:
		return false
	default:
		return status >= 500 && status < 600
	}
}

// redirectOf is the redirect a 3xx reply asks for, or nil.
func redirectOf(r *reply) *token.RedirectError {
	if r.status < 300 || r.status > 399 {
		return nil
	}
	re := &token.RedirectError{Status: r.status}
	if loc, err := (&http.Response{Header: r.header, Request: r.request}).Location(); err == nil {
		re.Host = loc.Host
	}
	return re
}

// reply is what one attempt brought back, as the client read it, once:
// the reply's status, header and whole body, or why there is none. The
// transport's layers only wrap; the client reads this and classify alone
// says what it means.
type reply struct {
	status     int // 0 when no reply came
	statusText string
	header     http.Header
	body       []byte
	request    *http.Request // the reply's, which a relative Location refers to
	// err is why there is no reply to read: the transport's error (a
	// *deadlineError when the attempt's deadline passed), or the body's
	// read failing (read: a *bodyTooLargeError past the cap, a
	// *deadlineError, a lost connection).
	err  error
	read bool
	// wrote reports that the request was written whole; latency is the
	// service's, from the request written to the reply's first byte (0:
	// not both seen), both from the attempt's trace.
	wrote   bool
	latency time.Duration
}

// verdict is classify's decision on one attempt: what the call does next
// (kind), and what the stats, the limiters, the outage gate and the call's
// error learn from it.
type verdict struct {
	kind       outcome
	status     int // 0 when there was no reply
	statusText string
	errs       []GraphQLError // the reply's, with their codes
	// data is a 2xx reply's decoded data (success only).
	data       *resultData
	retryAfter time.Duration
	ambiguous  bool  // the service may have processed the request
	outage     bool  // see CallError.Outage
	timeout    bool  // no reply within the attempt's timeout
	err        error // a failure's cause: network error, or what is wrong with the reply
	// latency is the service's, from the request written to the reply's
	// first byte; 0 when not measured (no reply).
	latency time.Duration
	// timedOut is the attempt's deadline when it passed with no reply (the
	// outage's cause names it); 0 otherwise.
	timedOut time.Duration
	// sent is when the attempt went on the wire (its place taken), for the
	// outage gate; zero for the probe's.
	sent time.Time
}

// Error is the reason, for logs.
func (v *verdict) Error() string {
	if v.err != nil {
		return v.err.Error()
	}
	return v.statusText
}

// classifier holds the settings classify decides by. Its zero value is
// not usable: refusals must be set (refusalSet).
type classifier struct {
	// refusals are the extensions.code values of a GraphQL error that
	// refuses a request before the service did anything (see
	// Config.RefusalCodes).
	refusals map[string]bool
	// ambiguous503 says which 503s may follow a commit (see
	// Config.Ambiguous503).
	ambiguous503 Ambiguous503
}

// classify is the one place that decides what an attempt of operation op
// came to (with classifyStatus, isOutageStatus, token.IsTLSError and
// mayBeProcessed, the one rule of ambiguity): a success (2xx with data, or
// with GraphQL errors: the call's error), retryable (network errors, 429,
// 502, 503, 504), a 401 to renew the token for, or permanent; whether it is
// an outage, and whether the service may have processed it. It decodes a
// reply's body once, whole for a 2xx or 503, and otherwise only when it
// may hold GraphQL errors. now is the time Retry-After dates count from.
func (cl *classifier) classify(r *reply, op string, now time.Time) verdict {
	if r.err != nil {
		return classifyFailure(r, cl.ambiguous503)
	}
	body := r.body
	v := verdict{status: r.status, statusText: r.statusText, latency: r.latency}
	v.kind = classifyStatus(r.status)
	var env replyEnvelope
	var jsonErr error
	if v.kind == outcomeSuccess || r.status == http.StatusServiceUnavailable || bytes.Contains(body, []byte(`"errors"`)) {
		jsonErr = json.Unmarshal(body, &env)
		v.errs = env.graphQLErrors()
	}
	v.outage = len(v.errs) == 0 && isOutageStatus(r.status)
	// The service's own refusal of the request: GraphQL errors, no data.
	refusal := jsonErr == nil && looksLikeJSONObject(body) && len(v.errs) > 0 && env.Data == nil
	switch v.kind {
	case outcomeRetry:
		if d, ok := parseRetryAfter(r.header.Get("Retry-After"), now); ok {
			v.retryAfter = d
		}
		v.ambiguous = mayBeProcessed(v.status, true, refusal, cl.ambiguous503)
		return v
	case outcomeSuccess:
	default:
		if rd := redirectOf(r); rd != nil {
			v.err = rd // never followed: the request carries the token
		}
		v.ambiguous = mayBeProcessed(v.status, true, refusal, cl.ambiguous503)
		return v
	}
	switch {
	case jsonErr == nil && !looksLikeJSONObject(body):
		jsonErr = errors.New("it does not start with '{'")
	case isTypeError(jsonErr):
		// JSON, but its result does not decode (a resultCode "1013" or
		// 1.013e22): the service answered, and what it did is unknown.
		v.kind, v.errs = outcomePermanent, nil
		v.ambiguous = mayBeProcessed(v.status, true, false, cl.ambiguous503)
		v.err = fmt.Errorf("reply does not decode as the %s result (HTTP %s): %w", opName(op), v.statusText, jsonErr)
		return v
	}
	if jsonErr != nil {
		// Whatever answered is not a GraphQL service (a proxy's page, a
		// web server at the wrong path, a truncated reply): an outage, not
		// a row's problem; a createLead may have got through all the same.
		v.kind, v.outage, v.errs = outcomePermanent, true, nil
		v.ambiguous = mayBeProcessed(v.status, true, false, cl.ambiguous503)
		v.err = fmt.Errorf("reply is not GraphQL JSON (HTTP %s): %w", v.statusText, jsonErr)
		return v
	}
	v.data = env.Data
	v.ambiguous = mayBeProcessed(v.status, true, cl.usable(env.Data.of(op), v.errs), cl.ambiguous503)
	return v
}

// isTypeError reports whether a decode failed on a value of the wrong
// type (JSON all the same).
func isTypeError(err error) bool {
	if err == nil {
		return false
	}
	var typeErr *json.UnmarshalTypeError
	return errors.As(err, &typeErr)
}

// usable reports whether a 2xx reply is an answer: the result without
// errors, or only errors that refuse the request (every one with a
// refusal code) and no result.
func (cl *classifier) usable(result *lead.Result, errs []GraphQLError) bool {
	if len(errs) == 0 {
		return result != nil
	}
	if result != nil {
		return false // data and errors: what happened is unknown
	}
	for _, ge := range errs {
		if !cl.refusals[ge.Code] {
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
func classifyFailure(r *reply, rule Ambiguous503) verdict {
	var big *bodyTooLargeError
	if errors.As(r.err, &big) {
		return verdict{kind: outcomePermanent, status: big.status, statusText: big.statusText, err: big,
			ambiguous: mayBeProcessed(big.status, true, false, rule)}
	}
	cause, timeout := r.err, time.Duration(0)
	var de *deadlineError
	if errors.As(cause, &de) {
		cause, timeout = de.err, de.timeout
	}
	what := "send request"
	if r.read {
		what = "read reply"
	}
	var err error
	if timeout > 0 {
		err = fmt.Errorf("%s: no reply within %s: %w", what, timeout, cause)
	} else {
		err = fmt.Errorf("%s: %w", what, cause)
	}
	if token.IsTLSError(err) {
		// Nothing was sent, and retrying cannot fix a certificate.
		return verdict{kind: outcomePermanent, outage: true,
			err: fmt.Errorf("TLS failed, check the URL's scheme and the server's certificate: %w", err)}
	}
	if r.wrote {
		err = fmt.Errorf("connection lost after the request was sent: %w", err)
	}
	return verdict{kind: outcomeRetry, ambiguous: mayBeProcessed(0, r.wrote, false, rule), outage: true, timeout: timeout > 0,
		err: err, timedOut: timeout, latency: r.latency}
}

// replyEnvelope is a GraphQL reply as classify reads it.
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
// '{', as every GraphQL reply does.
func looksLikeJSONObject(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// statusText is resp's status line without the protocol: "200 OK".
func statusText(resp *http.Response) string {
	if resp.Status != "" {
		return resp.Status
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
}
