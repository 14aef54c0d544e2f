package app

import (
	"crypto/rsa"
	"net/http"
	"time"
)

// Deps are what a command's run depends on beyond its options and the
// process's world (Env): the transport and the timings of its calls to the
// service. The zero Deps is production's. Tests give their own, as the
// GitHub CLI's options take an HttpClient func: waits of milliseconds, so
// that a test of a retry, an outage or a preflight computes instead of
// waiting out production's backoff.
type Deps struct {
	// Transport carries every request to the service and to its token
	// endpoint; nil is submitter's own (a clone of
	// http.DefaultTransport).
	Transport http.RoundTripper
	// BackoffBase and BackoffMax bound every wait before asking again:
	// a call's retries, the preflight's asking while a gateway answers
	// for the service, the probes of an outage and the token requests.
	// Zero: submitter.DefaultBackoffBase and DefaultBackoffMax.
	BackoffBase, BackoffMax time.Duration
	// SimSigningKey signs the tokens of the built-in simulator that
	// --simulate starts; nil: a new 2048-bit key at each start (about a
	// tenth of a second of CPU).
	SimSigningKey *rsa.PrivateKey
	// KeepRuntimeSettings leaves the Go runtime's process-wide memory
	// settings alone (validate's collector budget, upload's soft memory
	// limit, memory.go): for a process that runs several commands at once,
	// as the tests do, where one command's restore would undo another's.
	KeepRuntimeSettings bool
	// IdentityEvery is how often a streamed input's identity is brought
	// up to date beside the results file while the run reads it; zero:
	// every 2 s.
	IdentityEvery time.Duration
}
