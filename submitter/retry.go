package submitter

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfter bounds how long a Retry-After header can make a call wait.
const maxRetryAfter = 10 * time.Minute

// backoffDelay is the full-jitter exponential wait after failed attempt
// number attempt (1-based): a uniform draw (rnd in [0,1)) below
// min(max, base*2^(attempt-1)).
func backoffDelay(attempt int, base, max time.Duration, rnd float64) time.Duration {
	ceiling := base
	for i := 1; i < attempt && ceiling < max; i++ {
		ceiling *= 2
	}
	if ceiling > max {
		ceiling = max
	}
	return time.Duration(rnd * float64(ceiling))
}

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

// outcome is the classification of one HTTP attempt. Every remote outcome of
// a GraphQL call is classified by classifyStatus and the transport's network
// error handling, nowhere else.
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

// isTLSError reports whether err is a certificate or TLS handshake failure
// (an untrusted or mismatched certificate, https to a plain-http server, a
// handshake alert). Retrying cannot fix one: the setting or the server's
// certificate must change.
func isTLSError(err error) bool {
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

// redirectError is a redirect that was not followed.
type redirectError struct {
	status int
	host   string // the Location's host, "" when it had none
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("HTTP %d redirect to %q not followed: set the final URL", e.status, e.host)
}

// refuseRedirect is the CheckRedirect of every http.Client of a Client: it
// stops before the redirected request is sent, so that the client secret
// or the token never reaches the redirect's target.
func refuseRedirect(req *http.Request, via []*http.Request) error {
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	return &redirectError{status: status, host: req.URL.Host}
}

// redirectOf is the redirect a 3xx reply asks for, or nil.
func redirectOf(resp *http.Response) *redirectError {
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		return nil
	}
	re := &redirectError{status: resp.StatusCode}
	if loc, err := resp.Location(); err == nil {
		re.host = loc.Host
	}
	return re
}
