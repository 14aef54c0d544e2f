package submitter

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/token"
)

// GraphQLError is one entry of the `errors` array of a GraphQL reply, with
// its extensions.code. The client keeps every entry, not only the first.
type GraphQLError struct {
	Message string `json:"message"`
	Code    string `json:"code,omitempty"`
}

// IsFatal reports whether err means the run must stop now: the token
// endpoint refused the credentials (a *token.AuthError anywhere in the
// chain), or the lead endpoint refused the application's access (an
// *AccessError). Every other error from Create or Submit is a row-level
// failure.
func IsFatal(err error) bool {
	var ae *token.AuthError
	var de *AccessError
	return errors.As(err, &ae) || errors.As(err, &de)
}

// IsAccessDenied reports whether err is the lead endpoint refusing the
// application's access (an *AccessError anywhere in the chain).
func IsAccessDenied(err error) bool {
	var de *AccessError
	return errors.As(err, &de)
}

// AccessError is the lead endpoint refusing the application's access
// while its token endpoint still issues tokens: a 401 that a token
// fetched after it did not cure (the identity provider issues tokens the
// API rejects), a 403, or, to createLead or submitLead, a GraphQL error
// whose code says so (Config.DeniedCodes: FORBIDDEN when Lead.Write was
// revoked). Every row would be refused the same way, so it is fatal
// (IsFatal): the run stops as for refused credentials, and no row is
// failed or filed as a refusal for it. Once a Client has seen it, every
// later call fails fast with it, with no token request and no attempt.
// Error never contains a token or a lead's data.
type AccessError struct {
	Op string
	// Status is the HTTP status of the reply (401, 403, or 200 with
	// GraphQL errors); Code the GraphQL error's extensions.code, if any.
	Status int
	Code   string
	// Message is the service's message, redacted.
	Message string
}

// Error says what the endpoint refused and what to check.
func (e *AccessError) Error() string {
	what := fmt.Sprintf("HTTP %d", e.Status)
	if e.Code != "" {
		what = e.Code
	}
	hint := "check that the application is granted Lead.Write (an administrator may have revoked it) and that the scope and tenant name this API"
	if e.Status == http.StatusUnauthorized && e.Code == "" || e.Code == "UNAUTHENTICATED" {
		hint = "the identity provider issues tokens the API rejects, fresh ones too: check the scope (the API's application id) and the tenant, and that the API trusts this identity provider"
	}
	msg := ""
	if e.Message != "" {
		msg = " (" + e.Message + ")"
	}
	return fmt.Sprintf("the lead endpoint refused the application's access: %s answered %s%s: %s", opName(e.Op), what, msg, hint)
}

// CallError is a row-level failure of one createLead or submitLead call,
// after the retries the rules allow. It never aborts the run. Its Error
// never contains request variables, the token or the secret.
type CallError struct {
	// Op is the operation: "createLead" or "submitLead".
	Op string
	// Status is the HTTP status of the last reply, 0 when there was none.
	Status int
	// Code is the extensions.code of the first GraphQL error, if any.
	Code string
	// Message says what went wrong: the HTTP status, the network error, or
	// all GraphQL error messages joined.
	Message string
	// Errors holds every GraphQL error of the reply, with its code.
	Errors []GraphQLError
	// Retryable reports whether the last failure was of a retryable kind
	// (network, 429, 502, 503, 504) and the attempts ran out; sending the
	// row again later may succeed.
	Retryable bool
	// Outage reports that the last failure says the service is down or
	// is not there, rather than that this row or this moment is the
	// problem: no reply (connection refused, DNS, TLS, reset, timeout),
	// 404 or 405, a 5xx other than 503 without GraphQL errors, a reply
	// that is not GraphQL JSON, or no access token to be had. 429 and 503
	// (throttling) and GraphQL errors are not outages. See IsOutage.
	Outage bool
	// Attempts is the number of HTTP attempts made.
	Attempts int
	// Ambiguous reports whether an attempt may have reached the service
	// and got no usable answer (see Call.Ambiguous).
	Ambiguous bool
	// Interrupted reports that the call's context ended (the run stopped
	// and its drain, if any, is over) before the call's outcome was
	// known: while it waited for its turn, between attempts, or with an
	// attempt on the wire (then Ambiguous when the request was written).
	// See IsInterrupted.
	Interrupted bool
	// Err is the underlying cause (a network error, context.Canceled, ...),
	// or nil.
	Err error

	// httpStatus is the status line of a non-2xx reply with GraphQL errors
	// ("429 Too Many Requests"), so that Error can keep it apart from them.
	httpStatus string
}

// Error reads like `createLead: HTTP 500 Internal Server Error after 1
// attempt` or `createLead: GraphQL error [CODE] message; [CODE] message`.
func (e *CallError) Error() string {
	if len(e.Errors) > 0 && e.Status >= 200 && e.Status < 300 {
		return e.Op + ": GraphQL error " + e.Message
	}
	if e.Attempts == 0 {
		return e.Op + ": " + e.Message
	}
	s := "s"
	if e.Attempts == 1 {
		s = ""
	}
	if e.httpStatus != "" && len(e.Errors) > 0 {
		// The count goes with the status, before the service's own text,
		// which may hold anything ("...; retry after the delay").
		return fmt.Sprintf("%s: HTTP %s after %d attempt%s: %s", e.Op, e.httpStatus, e.Attempts, s, joinGraphQLErrors(e.Errors))
	}
	return fmt.Sprintf("%s: %s after %d attempt%s", e.Op, e.Message, e.Attempts, s)
}

// Unwrap returns the underlying cause, so errors.Is(err, context.Canceled)
// works on an interrupted call.
func (e *CallError) Unwrap() error { return e.Err }

// redactCallError redacts every text of ce that may come from the service
// with red, the Redactor of the lead the call was about: the message, the
// extensions codes, and the cause's text.
func redactCallError(red *redact.Redactor, ce *CallError) {
	ce.Message = red.String(ce.Message)
	ce.Code = red.String(ce.Code)
	for i := range ce.Errors {
		ce.Errors[i].Message = red.String(ce.Errors[i].Message)
		ce.Errors[i].Code = red.String(ce.Errors[i].Code)
	}
	if ce.Err != nil {
		if msg := red.String(ce.Err.Error()); msg != ce.Err.Error() {
			ce.Err = &redactedError{msg: msg, err: ce.Err}
		}
	}
}

// redactedError is a cause whose text held personal data: Error prints the
// redacted text, and errors.Is still sees the original.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// joinGraphQLErrors formats every GraphQL error as "[CODE] message".
func joinGraphQLErrors(errs []GraphQLError) string {
	var b strings.Builder
	for i, ge := range errs {
		if i > 0 {
			b.WriteString("; ")
		}
		if ge.Code != "" {
			b.WriteString("[")
			b.WriteString(ge.Code)
			b.WriteString("] ")
		}
		b.WriteString(ge.Message)
	}
	return b.String()
}

// IsOutage reports whether err is a failed call that says the service is
// down or not there (see CallError.Outage), as opposed to throttling (429,
// 503) or the service refusing the row (GraphQL errors, other 4xx). A run's
// circuit breaker counts these; an interrupted call is not one.
func IsOutage(err error) bool {
	var ce *CallError
	return errors.As(err, &ce) && ce.Outage
}

// IsInterrupted reports whether err is a call cut off by the end of its
// context (see CallError.Interrupted): not the service's failure nor the
// row's. When it is not Ambiguous, nothing of it reached the service.
func IsInterrupted(err error) bool {
	var ce *CallError
	return errors.As(err, &ce) && ce.Interrupted
}

// UnreachableError is Preflight's finding that the lead endpoint, or the
// token endpoint before it, cannot be reached or does not answer GraphQL: a
// refused connection, a DNS or TLS failure, 404/405, a 5xx without GraphQL
// errors, or a body that is not GraphQL. Retrying rows cannot help; the
// endpoint's setting, or the service, must be fixed first. Its Error
// names the URL (without any user info) and never holds a secret or token.
type UnreachableError struct {
	// URL is the endpoint that failed, user info removed.
	URL string
	// GraphQL reports whether URL was the lead endpoint (false: the token
	// endpoint).
	GraphQL bool
	// Err is the failed call: a *CallError, or the token fetch's error.
	Err error
	// For is how long Preflight asked again while the endpoint gave a
	// gateway's answer (GatewayAnswer) before giving up; 0 when it did
	// not ask again.
	For time.Duration
}

// Error reads like `service unreachable or not a GraphQL endpoint:
// http://127.0.0.1:1/graphql: preflight: send request: dial tcp
// 127.0.0.1:1: connect: connection refused after 1 attempt`.
func (e *UnreachableError) Error() string {
	var tre *token.ReplyError
	switch {
	case !e.GraphQL && errors.As(e.Err, &tre):
		// Reached, and it answered: say what was wrong with the answer.
		return fmt.Sprintf("token endpoint %s answered with a token that cannot be used: %s %s %s", e.URL, tre.Field, tre.Value, tre.Reason)
	case !e.GraphQL:
		return fmt.Sprintf("token endpoint unreachable: %s: %v", e.URL, e.Err)
	}
	if e.For > 0 {
		return fmt.Sprintf("service unreachable: %s answered as a gateway does when the service behind it is away, for %v: %v", e.URL, e.For.Round(time.Millisecond), e.Err)
	}
	return fmt.Sprintf("service unreachable or not a GraphQL endpoint: %s: %v", e.URL, e.Err)
}

// Unwrap returns the failed call's error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// GatewayAnswer reports whether err is the lead endpoint answering 502, 503
// or 504 with no GraphQL error, and which: what a gateway or load balancer
// says while the service behind it restarts or is away, for seconds. A
// refused connection, a name that does not resolve, a 404 or any other
// answer is not: the endpoint is dead or wrong, and asking again will not
// change that. (A 503 that carries the service's GraphQL errors is the
// service itself asking to slow down: Preflight lets the run go on, and
// its calls are retried as any call's are.)
func GatewayAnswer(err error) (status int, ok bool) {
	var ue *UnreachableError
	var ce *CallError
	if !errors.As(err, &ue) || !ue.GraphQL || !errors.As(ue.Err, &ce) || len(ce.Errors) > 0 {
		return 0, false
	}
	switch ce.Status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return ce.Status, true
	}
	return 0, false
}

// IsUnreachable reports whether err is (or wraps) an *UnreachableError:
// the run should stop before sending any row (exit status 4).
func IsUnreachable(err error) bool {
	var ue *UnreachableError
	return errors.As(err, &ue)
}

// ConfigError is New refusing a Config: every setting at fault, in the
// order of Config's fields. Its text names the settings in this package's
// words; a caller that knows how its user sets them (the command line's
// flags) adds that.
type ConfigError struct {
	Problems []*SettingError
}

// Error lists every problem.
func (e *ConfigError) Error() string {
	texts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		texts[i] = p.Error()
	}
	return "submitter config: " + strings.Join(texts, "; ")
}

// Unwrap returns the problems, for errors.As.
func (e *ConfigError) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p
	}
	return errs
}

// SettingError is one setting of a Config that New refuses.
type SettingError struct {
	// Fields are the Config fields at fault: one, or the few checked
	// together ("StartRate", "MaxRate").
	Fields []string
	// Problem is what is wrong with them.
	Problem Problem
	// Text says what is wrong, naming the setting in words ("endpoint is
	// required"), without advice.
	Text string
}

// Error is Text, with the way out of an insecure URL.
func (e *SettingError) Error() string {
	if e.Problem == ProblemInsecure {
		return e.Text + "; use https, or set AllowInsecureHTTP to accept it"
	}
	return e.Text
}

// Problem is what is wrong with a setting of a Config.
type Problem string

// The problems a SettingError reports.
const (
	ProblemMissing  Problem = "missing"  // required, and empty
	ProblemNotURL   Problem = "not-url"  // not an http(s) URL with a host
	ProblemInsecure Problem = "insecure" // plain http to another machine, and AllowInsecureHTTP not set
	ProblemNegative Problem = "negative" // below zero
)
