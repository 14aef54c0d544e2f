package token

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// AuthError is the token endpoint refusing the credentials (invalid_client,
// invalid_scope, unauthorized_client, an unknown token URL, ...). It is
// fatal: retrying cannot help, the run must stop (exit status 3). Once a
// Cache has seen it, every later request for a token fails fast with the
// same AuthError and no new token request is made. Error never contains
// the client secret or a token.
type AuthError struct {
	// Code is the OAuth 2.0 error code the endpoint gave, or "http_<status>"
	// when it gave none.
	Code string
	// Description is the endpoint's error_description, with the secret
	// removed should the endpoint ever echo it.
	Description string
	// Hint says which setting to check, in the words of this package.
	Hint string
	// Check names the settings Hint means ("" when no setting can help),
	// for a caller that says how its user sets them.
	Check Check
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

// Check names the settings that an AuthError asks to check.
type Check string

// The settings an AuthError may ask to check.
const (
	CheckClient   Check = "client" // the client id and the client secret
	CheckScope    Check = "scope"
	CheckTokenURL Check = "token-url"
	CheckAll      Check = "all" // the token URL, client id, scope and client secret
)

// IsTLSError reports whether err is a certificate or TLS handshake failure
// (an untrusted or mismatched certificate, https to a plain-http server, a
// handshake alert). Retrying cannot fix one: the setting or the server's
// certificate must change. The token endpoint's and the lead endpoint's
// clients (package submitter) share this rule.
func IsTLSError(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		record   tls.RecordHeaderError
		alert    tls.AlertError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	return errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &alert) ||
		errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.Is(err, http.ErrSchemeMismatch)
}

// RedirectError is a redirect that was not followed (RefuseRedirect).
type RedirectError struct {
	Status int
	Host   string // the Location's host, "" when it had none
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("HTTP %d redirect to %q not followed: set the final URL", e.Status, e.Host)
}

// RefuseRedirect is the CheckRedirect of every http.Client that carries a
// credential (the Cache's, and package submitter's for the lead endpoint):
// it stops before the redirected request is sent, so that the client
// secret or the token never reaches the redirect's target.
func RefuseRedirect(req *http.Request, via []*http.Request) error {
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	return &RedirectError{Status: status, Host: req.URL.Host}
}

// Backoff is the full-jitter exponential wait after failed request number
// attempt (1-based): a uniform draw (rnd in [0,1)) below
// min(max, base*2^(attempt-1)). The token endpoint's retries and package
// submitter's (a call's retries, the preflight, the outage gate's probes)
// share it.
func Backoff(attempt int, base, max time.Duration, rnd float64) time.Duration {
	ceiling := base
	for i := 1; i < attempt && ceiling < max; i++ {
		ceiling *= 2
	}
	if ceiling > max {
		ceiling = max
	}
	return time.Duration(rnd * float64(ceiling))
}
