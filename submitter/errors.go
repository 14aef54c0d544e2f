package submitter

import (
	"errors"
	"fmt"
	"strings"
)

// GraphQLError is one entry of the `errors` array of a GraphQL reply, with
// its extensions.code. The client keeps every entry, not only the first.
type GraphQLError struct {
	Message string `json:"message"`
	Code    string `json:"code,omitempty"`
}

// AuthError is the token endpoint refusing the credentials (invalid_client,
// invalid_scope, unauthorized_client, an unknown token URL, ...). It is
// fatal: retrying cannot help, the run must stop (exit status 3). Once a
// Client has seen it, every later call fails fast with the same AuthError and
// no new token request is made. Error never contains the client secret or a
// token.
type AuthError struct {
	// Code is the OAuth 2.0 error code the endpoint gave, or "http_<status>"
	// when it gave none.
	Code string
	// Description is the endpoint's error_description, with the secret
	// removed should the endpoint ever echo it.
	Description string
	// Hint says which setting to check.
	Hint string
	// Status is the HTTP status of the token endpoint's reply.
	Status int
}

// Error says what the token endpoint refused and which setting to check.
func (e *AuthError) Error() string {
	var b strings.Builder
	b.WriteString("token request refused: ")
	b.WriteString(e.Code)
	if e.Description != "" {
		fmt.Fprintf(&b, " (%s)", e.Description)
	}
	if e.Hint != "" {
		b.WriteString(": ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// IsFatal reports whether err means the run must stop now: the token
// endpoint refused the credentials (an *AuthError anywhere in the chain).
// Every other error from Create or Submit is a row-level failure.
func IsFatal(err error) bool {
	var ae *AuthError
	return errors.As(err, &ae)
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
	// Attempts is the number of HTTP attempts made.
	Attempts int
	// Ambiguous reports whether an attempt may have reached the service
	// although no answer came back.
	Ambiguous bool
	// Err is the underlying cause (a network error, context.Canceled, ...),
	// or nil.
	Err error
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
	return fmt.Sprintf("%s: %s after %d attempt%s", e.Op, e.Message, e.Attempts, s)
}

// Unwrap returns the underlying cause, so errors.Is(err, context.Canceled)
// works on an interrupted call.
func (e *CallError) Unwrap() error { return e.Err }

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
