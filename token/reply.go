package token

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"
)

// maxReply bounds the token reply replyLayer reads, as x/oauth2
// does (1 MiB).
const maxReply = 1 << 20

// ReplyError is a token endpoint's answer of success (2xx) whose token
// cannot be used: a field of it is malformed. The endpoint is reachable and
// took the credentials; its answer is wrong, so retrying does not help and
// the run stops before the first row (exit 4, naming the field). Its Error
// quotes at most 40 bytes of the value, never the token.
type ReplyError struct {
	// Field is the reply's field ("expires_in").
	Field string
	// Value is the field's JSON text, cut to 40 bytes.
	Value string
	// Reason says what is wrong with it.
	Reason string
}

// Error reads like `the token endpoint's answer cannot be used: expires_in
// 1.5 is not a whole number of seconds`.
func (e *ReplyError) Error() string {
	return fmt.Sprintf("the token endpoint's answer cannot be used: %s %s %s", e.Field, e.Value, e.Reason)
}

// replyLayer checks the token endpoint's successful JSON answers
// before x/oauth2 parses them, so that a malformed expires_in is named
// (x/oauth2's own error, "cannot parse json", reads like a network
// failure and would be retried, then reported as an unreachable
// endpoint). It hands every answer on as it came, and records what is
// wrong with one in bad, for the Cache's fetch to read when x/oauth2
// fails on it (one token request is in flight at a time).
type replyLayer struct {
	next http.RoundTripper
	bad  *atomic.Pointer[ReplyError]
}

// RoundTrip checks a 2xx JSON answer's expires_in (checkExpiresIn).
func (l *replyLayer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "application/x-www-form-urlencoded" || ct == "text/plain" {
		return resp, nil // x/oauth2 reads these as a query string
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	resp.Body.Close()
	if err != nil {
		// x/oauth2 meets the failure where it reads.
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		return resp, nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var reply struct {
		ExpiresIn json.RawMessage `json:"expires_in"`
	}
	if json.Unmarshal(body, &reply) != nil {
		return resp, nil // not a JSON object: x/oauth2 says so
	}
	if tre := checkExpiresIn(reply.ExpiresIn); tre != nil {
		l.bad.Store(tre)
	}
	return resp, nil
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// checkExpiresIn says what is wrong with a token reply's expires_in (RFC
// 6749 section 5.1: the token's lifetime in seconds), or nil when it can be
// used. Missing or null is fine (the token is kept until the service
// answers 401), and so is a whole number of seconds, written as digits, as
// a JSON number or a string ("3600", as some providers send it); a large
// one is fine too (x/oauth2 caps it at 2^31-1 s, about 68 years, and the
// first 401 replaces the token). Refused, as x/oauth2 cannot read them: a
// fraction (1.5: bulkload does not round it), exponent notation (1e12), a
// number beyond int64, and anything that is not a number ("abc", true, an
// object). Zero or a negative number says nothing usable about the
// lifetime; it is treated as none given, as before.
func checkExpiresIn(raw json.RawMessage) *ReplyError {
	v := strings.TrimSpace(string(raw))
	if v == "" || v == "null" {
		return nil
	}
	bad := func(reason string) *ReplyError {
		shown := v
		if len(shown) > 40 {
			shown = shown[:40] + "..."
		}
		return &ReplyError{Field: "expires_in", Value: shown, Reason: reason}
	}
	// As x/oauth2 reads it: a JSON number, or a string holding one.
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return bad("is not a number; it must be the token's lifetime in whole seconds")
	}
	num := n.String()
	_, err := n.Int64() // as x/oauth2 reads it
	switch {
	case err == nil:
		return nil
	case strings.ContainsAny(num, "eE"):
		return bad("is in exponent notation; it must be the token's lifetime in whole seconds, written as digits")
	case strings.Contains(num, "."):
		return bad("is not a whole number of seconds")
	}
	return bad("is too large to be a lifetime in seconds")
}
