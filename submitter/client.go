// Package submitter is the sending stage of bulkload's pipeline: it calls
// the Lead Intake Service's createLead, submitLead and lead operations with
// the run's OAuth 2.0 token (package token), and owns the classification
// of every reply, the retries, the pacing of the calls (the shared rate
// and the limit on calls in flight) and the outage gate, and their stats.
//
// A Client is built once per run and shared by all workers. The pool, the
// results file and resume are the caller's; Create and Submit return each
// row's outcome as values (a *CallError is a row-level failure), and only a
// *token.AuthError or an *AccessError (see IsFatal) means the run must
// stop.
//
// The Client takes its token source and its limiters as interfaces
// (TokenSource, RateLimiter, ConcurrencyLimiter): New builds them from the
// Config (package token's Cache, package pace's AIMD or Adaptive and
// Concurrency) unless the Config gives its own.
//
// A call is a loop in the client (retry, in retry.go), as restic's retry
// backend is a wrapper: each attempt (attempt, transport.go) takes its
// turn at the rate and its place in flight, goes out through the GraphQL
// library, machinebox/graphql, and comes back as a reply the client reads
// once, whole; classify (classify.go) alone decides what it means
// (success, retryable, a 401 to renew the token for, or permanent; an
// outage or not; ambiguous or not), and the loop, the limiters, the gate
// and the stats act on its verdict. The library encodes the request; it
// is handed an empty object in the reply's place, as the client has read
// and decoded the reply itself. Under it sit small http.RoundTrippers
// that each do one job and only wrap the next (transport.go): auth (the
// bearer token), the capture that records the reply for the client, the
// deadline (the attempt's timeout, over its body too) and the body limit.
// None interprets a reply for another, none returns an error for a reply
// it obtained, and nothing passes between them in a context value or a
// body of their own: contexts here carry only deadlines, cancellation and
// the libraries' own hooks (httptrace, for the attempt's trace, and
// oauth2.HTTPClient for the token requests).
//
// Nothing in this package's logs or errors contains an SSN, a date of birth,
// the client secret or an access token.
package submitter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/machinebox/graphql"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/pace"
	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/token"
)

// DefaultCreateDocument is the createLead mutation as the interface shows
// it, selecting all five result fields.
const DefaultCreateDocument = `mutation CreateLead($input: LeadInput!) { createLead(input: $input) { id resultCode note partnerLeadId bidValue } }`

// DefaultSubmitDocument is the submitLead mutation. The interface does not
// show its arguments, so this is a guess a partner can override by
// configuration.
const DefaultSubmitDocument = `mutation SubmitLead($id: String!) { submitLead(id: $id) { id resultCode note } }`

// DefaultLeadDocument reads a lead by id (permission Lead.Read). The
// interface names the permission but does not show the operation, so this
// is an assumption a partner can override by configuration; its result
// must be named "lead".
const DefaultLeadDocument = `query Lead($id: String!) { lead(id: $id) { id resultCode note partnerLeadId bidValue } }`

// DefaultRefusalCodes are the GraphQL error codes, comma-separated, taken
// to refuse a request before the service did anything: the simulator's and
// common servers' codes for input, parse and validation errors, missing
// permissions, throttling and a refused submission.
// DefaultDeniedCodes are the GraphQL error codes, comma-separated, taken
// to mean that the application's access is refused (Config.DeniedCodes).
const DefaultDeniedCodes = "UNAUTHENTICATED,FORBIDDEN"

const DefaultRefusalCodes = "BAD_USER_INPUT,GRAPHQL_PARSE_FAILED,GRAPHQL_VALIDATION_FAILED,BAD_REQUEST,UNAUTHENTICATED,FORBIDDEN,RATE_LIMITED,PAYLOAD_TOO_LARGE,SUBMIT_REFUSED"

// PreflightDocument is what Preflight sends: the cheapest query that every
// GraphQL server answers.
const PreflightDocument = `query { __typename }`

// Defaults of Config.
const (
	DefaultMaxAttempts      = 5
	DefaultCallTimeout      = 60 * time.Second
	DefaultBackoffBase      = 500 * time.Millisecond
	DefaultBackoffMax       = 30 * time.Second
	DefaultTokenRetries     = token.DefaultRetries
	DefaultMaxResponseBytes = 1 << 20
	// DefaultPreflightWait is how long Preflight asks again while the
	// endpoint answers 502, 503 or 504 without a GraphQL answer: a gateway
	// in front of a service that is restarting says so for seconds, not
	// minutes.
	DefaultPreflightWait = time.Minute
)

// Config configures a Client. The caller resolves flags, environment and
// config file into it; zero values take the documented defaults.
type Config struct {
	Endpoint     string // lead GraphQL URL
	TokenURL     string // full token URL ({auth_url}/{tenant_id}/oauth2/v2.0/token)
	ClientID     string
	ClientSecret string // never logged, never in an error
	Scope        string // "api://<app-id>/.default"
	// AllowInsecureHTTP accepts http:// for Endpoint and TokenURL on a
	// host that is not loopback (--allow-insecure-http). Without it such a
	// URL is refused: the secret, the token and the leads would cross the
	// network in clear text.
	AllowInsecureHTTP bool
	// Rate is API calls per second across all workers (createLead,
	// submitLead and every retry attempt); 0 = unlimited until a 429.
	// Ignored when RateAuto is set.
	Rate float64
	// RateAuto lets the rate find the service's limit by itself (--rate
	// auto, see Adaptive): it sets none until the service shows one (a
	// 429), or starts at StartRate when that is set, or held just under
	// KnownRateLimit, a limit an earlier run of the same job found (a
	// resume); it never goes above MaxRate (0 = no cap).
	RateAuto                           bool
	StartRate, MaxRate, KnownRateLimit float64
	// Concurrency > 0 is a fixed limit on attempts in flight, across all
	// workers (--concurrency N); 0 with ConcurrencyAuto unset: the Client
	// sets none (the caller's pool is the limit). ConcurrencyAuto learns
	// the limit by itself (--concurrency auto, see Concurrency): from
	// StartConcurrency (default DefaultStartConcurrency) up to
	// MaxConcurrency (--max-concurrency, default DefaultMaxConcurrency).
	// ConcurrencySettled: StartConcurrency is the limit an earlier run of
	// the same job settled at (a resume): auto starts there, past its
	// climb.
	Concurrency                      int
	ConcurrencyAuto                  bool
	StartConcurrency, MaxConcurrency int
	ConcurrencySettled               bool
	// MaxAttempts is per call, including the first; default 5. Attempts
	// answered 429 (slow down) do not count: while other calls are
	// answered, a call answered 429 waits its turn; with none answered, it
	// gives up after 4×MaxAttempts 429s in a row.
	MaxAttempts             int
	CallTimeout             time.Duration // per HTTP attempt; default 60s
	BackoffBase, BackoffMax time.Duration // full-jitter exponential; defaults 500ms, 30s
	TokenRetries            int           // token endpoint network/429/5xx retries; default 5
	CreateDocument          string        // default DefaultCreateDocument
	SubmitDocument          string        // default DefaultSubmitDocument
	LeadDocument            string        // default DefaultLeadDocument
	MaxResponseBytes        int64         // reply body cap; default 1 MiB
	// RefusalCodes are the extensions.code values of a GraphQL error in a
	// 2xx reply that mean the service refused the request before doing
	// anything (no lead was created). A 2xx reply with any other error, or
	// with no code, may follow a commit: the attempt is ambiguous (see
	// Call.Ambiguous). The interface does not show its error codes, so
	// this is an assumption; nil = DefaultRefusalCodes, split at commas.
	RefusalCodes []string
	// DeniedCodes are the extensions.code values of a GraphQL error to
	// createLead or submitLead that mean the application's access is
	// refused (Lead.Write revoked, a token the API rejects): the run must
	// stop (an *AccessError), since every row would be refused alike. The
	// interface shows only UNAUTHENTICATED, so the rest is an assumption;
	// nil = DefaultDeniedCodes, split at commas.
	DeniedCodes []string
	// Ambiguous503 says which 503 answers of the lead endpoint may follow
	// a commit, so that a retry's duplicate answer gets the own-lead
	// check: by default every 503 but the service's own GraphQL refusal
	// (a proxy's page after the backend reset the stream). Every other
	// 5xx may follow a commit whatever its body. The interface does not
	// show its HTTP statuses, so this is an assumption.
	Ambiguous503 Ambiguous503
	// OutageWait is how long the run waits out an outage of the service or
	// its identity provider (see Outage) before every call waiting for it
	// ends with an *OutageError; default DefaultOutageWait.
	OutageWait time.Duration
	// MaxRetryWait is the most one call waits between its attempts, its
	// backoff and the Retry-After of the answers summed. A wait that would
	// take it past this is not waited: the call ends at once with a
	// *DeferredError (the service asked it to come back later than the
	// run waits for it), and a Retry-After longer than this slows no
	// other call either. The interface shows no Retry-After, so this is
	// an assumption; default DefaultMaxRetryWait.
	MaxRetryWait time.Duration
	// PreflightWait is how long Preflight asks the endpoint again while it
	// answers 502, 503 or 504 without GraphQL errors (a gateway whose
	// service is away, for now),
	// backing off from min(BackoffBase, PreflightWait/20); default
	// DefaultPreflightWait; 1ns: ask once.
	PreflightWait time.Duration
	// OutageThreshold is how many attempts in a row, across all workers,
	// failing as outages begin an outage; default DefaultOutageThreshold;
	// negative: never by count alone (a timeout with nothing answered, a
	// failed token request and a call about to give up still begin one).
	// As many calls of rows in a row failing as outages (IsOutage: their
	// attempts ran out while the probes found the service answering)
	// stop the run: WaitUp returns an *OutageError with Calls set;
	// negative: never.
	OutageThreshold int
	// Transport is the base transport for the API and the token endpoint;
	// nil = a clone of http.DefaultTransport keeping 256 idle connections.
	Transport http.RoundTripper
	Logger    *slog.Logger     // nil = discard
	Now       func() time.Time // nil = time.Now (token expiry and rate decisions)
	// Tokens, RateLimiter and ConcurrencyLimiter, when set, are the
	// Client's token source and limiters in place of those New builds
	// from the settings above (the credentials and TokenRetries; Rate,
	// RateAuto and the rates; Concurrency and the concurrencies), which
	// are still checked: a test gives its own. An outage of the identity
	// provider is noticed only with the Client's own token source, whose
	// failures it hears as they happen.
	Tokens             TokenSource
	RateLimiter        RateLimiter
	ConcurrencyLimiter ConcurrencyLimiter
}

// Call describes how one Create or Submit went on the wire.
type Call struct {
	// Attempts is the number of HTTP attempts made for this call.
	Attempts int
	// Ambiguous reports that an attempt may have reached the service and
	// got no usable answer (mayBeProcessed: no reply after the request was
	// sent, a 5xx but the service's own 503, a 2xx that is no answer), so a "duplicate"
	// answer may refer to this row's own earlier attempt.
	Ambiguous bool
}

// Stats are a Client's counters since New.
type Stats struct {
	Calls, Attempts, Retries, Status429, Status401, TokensFetched int64
	// Status503 counts attempts answered 503; Answered the attempts the
	// service answered (data or GraphQL errors), and Latency how long
	// those took (for the run report's timeline).
	Status503, Answered int64
	Latency             LatencyCounts
	// CreateLead, SubmitLead, Lead and Preflight count each operation's
	// calls, retries and attempts by outcome (for metrics).
	CreateLead, SubmitLead, Lead, Preflight OpStats
	// CurrentRate is the shared rate in calls per second now; 0 means
	// unlimited.
	CurrentRate float64
	// RateWaited is the time during which calls waited for the rate (it
	// held them back).
	RateWaited time.Duration
	// RateAllowed is the mean rate in force over RateLimited, the time a
	// rate was (--rate 0 and --rate auto set none until a 429), in
	// calls/s; 0 when none ever was.
	RateAllowed float64
	RateLimited time.Duration
	// BackoffWaited sums the time the calls waited between their
	// attempts (a retry's backoff, or the Retry-After it honoured), the
	// waits under way included: time in which a row held its worker and
	// no place in flight.
	BackoffWaited time.Duration
	// Wire sums the attempts' times from their sending to their reply
	// read (or their end without one); FailedWire those of the attempts
	// answered 429 or 5xx or not at all (a timeout, a reset): with
	// BackoffWaited, what the service's errors cost the rows.
	Wire, FailedWire time.Duration
	// Concurrency is the limit on calls in flight now, and what bound it.
	Concurrency pace.ConcurrencySnapshot
	// AttemptLatency is the histogram of the attempts' latencies with
	// their sum, in LatencyBuckets (from the request written to the
	// reply's first byte: no backoff, no wait for the rate or a place),
	// for --metrics-file.
	AttemptLatency LatencyHistogram
	// Auto reports --rate auto. Then SettledRate is the rate to pin with
	// --rate next time (97% of the limit found), and LimitFound is false
	// when no 429 showed a limit (SettledRate is then the rate reached, 0
	// when none was set); RateLimit is the limit found, for a resume to
	// start from.
	Auto        bool
	SettledRate float64
	LimitFound  bool
	RateLimit   float64
	// Outages counts the outages the run has begun to wait out;
	// OutageWaiting reports that it waits one out now.
	Outages       int64
	OutageWaiting bool
}

// Client calls the Lead Intake Service. Build one per run with New and
// share it: it is safe for concurrent use by many workers, which share one
// token and one rate.
type Client struct {
	// endpointURL is the lead endpoint, as the library is given it.
	endpointURL string
	// chain is the transport under each caller's authLayer and capture
	// (see transport.go); callers are the library's, one per attempt in
	// flight, made by newCaller.
	chain      http.RoundTripper
	callers    sync.Pool
	bearer     atomic.Pointer[bearerHeader]
	classifier classifier
	// maxBody caps a reply's body; maxAttempts bounds a call's attempts,
	// maxRetryWait its waits between them (Config.MaxRetryWait).
	maxBody      int64
	maxAttempts  int
	maxRetryWait time.Duration
	endpoint     string // for messages: user info removed
	tokenURL     string // for messages: user info removed
	createDoc    string
	submitDoc    string
	leadDoc      string
	tokens       TokenSource
	// tokenTimeout bounds one token request.
	tokenTimeout time.Duration
	rate         RateLimiter
	conc         ConcurrencyLimiter
	rateWait     *waitClock
	allowed      *rateClock
	stats        *stats
	now          func() time.Time
	// idle closes the idle keep-alive connections of the transport this
	// Client made, so that their goroutines end with the run.
	idle func()
	// gate is the run's outage state: see Outage.
	gate *gate
	// preflightWait, backoffBase and backoffMax bound Preflight's asking
	// again (Config.PreflightWait).
	preflightWait, backoffBase, backoffMax time.Duration
	log                                    *slog.Logger
	// denied is the codes of Config.DeniedCodes; deniedErr the first
	// *AccessError seen, which every later call returns at once.
	denied    map[string]bool
	deniedErr atomic.Pointer[AccessError]
	// longWaitSaid is set once the log has said that the service asks
	// calls to wait long (longRetryAfter) before their next attempt.
	longWaitSaid atomic.Bool
}

// New validates cfg and builds a Client. It does no network I/O. ctx bounds
// the Client's background work (token fetches, which a waiting call's own
// context does not cancel): it should live as long as the run, and the
// caller cancels it when the run ends so that no fetch outlives the run.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	base := cfg.Transport
	idle := func() {}
	if base == nil {
		dt := http.DefaultTransport.(*http.Transport).Clone()
		dt.MaxIdleConns = 256
		dt.MaxIdleConnsPerHost = 256
		base = dt
		idle = dt.CloseIdleConnections
	}
	threshold := cfg.OutageThreshold
	if threshold < 0 {
		threshold = 0
	}
	c := &Client{
		endpoint:  redact.URL(cfg.Endpoint),
		tokenURL:  redact.URL(cfg.TokenURL),
		createDoc: cfg.CreateDocument,
		submitDoc: cfg.SubmitDocument,
		leadDoc:   cfg.LeadDocument,
		stats:     &stats{},
		now:       cfg.Now,
		idle:      idle,
		rateWait:  &waitClock{now: cfg.Now},
		allowed:   &rateClock{now: cfg.Now},

		preflightWait: cfg.PreflightWait,
		backoffBase:   cfg.BackoffBase,
		backoffMax:    cfg.BackoffMax,
		log:           log,
	}
	switch {
	case cfg.ConcurrencyLimiter != nil:
		c.conc = cfg.ConcurrencyLimiter
	case cfg.ConcurrencyAuto:
		c.conc = pace.NewConcurrency(pace.ConcurrencyConfig{Start: cfg.StartConcurrency, Max: cfg.MaxConcurrency,
			Settled: cfg.ConcurrencySettled && cfg.StartConcurrency > 0, Now: cfg.Now})
	case cfg.Concurrency > 0:
		c.conc = pace.NewConcurrency(pace.ConcurrencyConfig{Fixed: cfg.Concurrency, Now: cfg.Now})
	default:
		c.conc = pace.NewConcurrency(pace.ConcurrencyConfig{Fixed: pace.NoLimit, Now: cfg.Now})
	}
	c.gate = newGate(ctx, gateConfig{threshold: threshold, wait: cfg.OutageWait, probeBase: cfg.BackoffBase,
		probeMax: min(cfg.BackoffMax, defaultProbeMax), now: cfg.Now, log: log}, c.probe)
	// Redirects are never followed: the token request carries the client
	// secret (the token package refuses them), and a GraphQL request the
	// token and personal data (token.RefuseRedirect).
	c.tokenTimeout = min(cfg.CallTimeout, maxTokenAttemptTimeout)
	c.tokens = cfg.Tokens
	if c.tokens == nil {
		c.tokens = c.newTokens(ctx, cfg, base, log)
	}
	switch {
	case cfg.RateLimiter != nil:
		c.rate = cfg.RateLimiter
	case cfg.RateAuto:
		c.rate = pace.NewAdaptive(pace.AutoConfig{Start: cfg.StartRate, Limit: cfg.KnownRateLimit, Max: cfg.MaxRate, Now: cfg.Now})
	default:
		c.rate = pace.NewAIMD(cfg.Rate, cfg.Now)
	}
	c.endpointURL = cfg.Endpoint
	c.chain = &deadlineLayer{next: &bodyLimitLayer{next: base, max: cfg.MaxResponseBytes}, timeout: cfg.CallTimeout}
	c.callers.New = func() any { return c.newCaller() }
	c.classifier = classifier{refusals: refusalSet(cfg.RefusalCodes), ambiguous503: cfg.Ambiguous503}
	c.maxBody, c.maxAttempts, c.maxRetryWait = cfg.MaxResponseBytes, cfg.MaxAttempts, cfg.MaxRetryWait
	c.denied = codeSet(cfg.DeniedCodes, DefaultDeniedCodes)
	return c, nil
}

// newTokens builds the token cache of cfg's credentials, on base, whose
// failures the outage gate hears.
func (c *Client) newTokens(ctx context.Context, cfg Config, base http.RoundTripper, log *slog.Logger) *token.Cache {
	return token.New(ctx, token.Config{
		TokenURL:     cfg.TokenURL,
		ClientID:     cfg.ClientID,
		ClientSecret: cfg.ClientSecret,
		Scope:        cfg.Scope,
		Transport:    base,
		Retries:      cfg.TokenRetries,
		BackoffBase:  cfg.BackoffBase,
		BackoffMax:   cfg.BackoffMax,
		Timeout:      c.tokenTimeout,
		Now:          cfg.Now,
		Logger:       log,
		// A token request failing as an outage (5xx, no reply, refused)
		// when no valid token is left begins an outage of the identity
		// provider: the fetch gives up, and the gate's probes take over.
		OnFailure: func(err error, noValidToken bool) bool {
			cause, outage := tokenOutage(err, c.tokenTimeout)
			return outage && c.gate.tokenFailed(cause, noValidToken)
		},
		OnFetch: c.gate.tokenFetched,
	})
}

// refusalSet is codes as a set; nil codes give DefaultRefusalCodes.
func refusalSet(codes []string) map[string]bool { return codeSet(codes, DefaultRefusalCodes) }

// codeSet is codes as a set; nil codes give def, split at commas.
func codeSet(codes []string, def string) map[string]bool {
	if codes == nil {
		codes = strings.Split(def, ",")
	}
	set := make(map[string]bool, len(codes))
	for _, c := range codes {
		set[c] = true
	}
	return set
}

// validate returns a *ConfigError naming every setting of cfg that New
// refuses, or nil.
func (cfg *Config) validate() error {
	var problems []*SettingError
	add := func(p Problem, text string, fields ...string) {
		problems = append(problems, &SettingError{Fields: fields, Problem: p, Text: text})
	}
	checkURL := func(name, field, v string) {
		if v == "" {
			add(ProblemMissing, name+" is required", field)
			return
		}
		u, err := url.Parse(v)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			add(ProblemNotURL, fmt.Sprintf("%s %q is not an http(s) URL", name, redact.URL(v)), field)
		case u.Scheme == "http" && !cfg.AllowInsecureHTTP && !isLoopback(u.Hostname()):
			add(ProblemInsecure, fmt.Sprintf("%s %q is plain http to a host that is not this machine: the client secret, the token and the leads would cross the network unencrypted", name, redact.URL(v)), field)
		}
	}
	checkURL("endpoint", "Endpoint", cfg.Endpoint)
	checkURL("token URL", "TokenURL", cfg.TokenURL)
	if cfg.ClientID == "" {
		add(ProblemMissing, "client id is required", "ClientID")
	}
	if cfg.ClientSecret == "" {
		add(ProblemMissing, "client secret is required", "ClientSecret")
	}
	if cfg.Scope == "" {
		add(ProblemMissing, "scope is required", "Scope")
	}
	if cfg.Rate < 0 {
		add(ProblemNegative, fmt.Sprintf("rate %v is negative", cfg.Rate), "Rate")
	}
	if cfg.StartRate < 0 || cfg.MaxRate < 0 {
		add(ProblemNegative, fmt.Sprintf("start rate %v or max rate %v is negative", cfg.StartRate, cfg.MaxRate), "StartRate", "MaxRate")
	}
	if cfg.Concurrency < 0 || cfg.StartConcurrency < 0 || cfg.MaxConcurrency < 0 {
		add(ProblemNegative, fmt.Sprintf("concurrency %d, start %d or max %d is negative", cfg.Concurrency, cfg.StartConcurrency, cfg.MaxConcurrency),
			"Concurrency", "StartConcurrency", "MaxConcurrency")
	}
	if cfg.MaxAttempts < 0 {
		add(ProblemNegative, fmt.Sprintf("max attempts %d is negative", cfg.MaxAttempts), "MaxAttempts")
	}
	if cfg.CallTimeout < 0 || cfg.BackoffBase < 0 || cfg.BackoffMax < 0 {
		add(ProblemNegative, "timeouts and backoff must not be negative", "CallTimeout", "BackoffBase", "BackoffMax")
	}
	if cfg.PreflightWait < 0 {
		add(ProblemNegative, fmt.Sprintf("preflight wait %v is negative", cfg.PreflightWait), "PreflightWait")
	}
	if cfg.TokenRetries < 0 || cfg.MaxResponseBytes < 0 {
		add(ProblemNegative, "token retries and the response size cap must not be negative", "TokenRetries", "MaxResponseBytes")
	}
	if len(problems) > 0 {
		return &ConfigError{Problems: problems}
	}
	return nil
}

func (cfg *Config) setDefaults() {
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.BackoffBase == 0 {
		cfg.BackoffBase = DefaultBackoffBase
	}
	if cfg.BackoffMax == 0 {
		cfg.BackoffMax = DefaultBackoffMax
	}
	if cfg.BackoffMax < cfg.BackoffBase {
		cfg.BackoffMax = cfg.BackoffBase
	}
	if cfg.TokenRetries == 0 {
		cfg.TokenRetries = DefaultTokenRetries
	}
	if cfg.CreateDocument == "" {
		cfg.CreateDocument = DefaultCreateDocument
	}
	if cfg.SubmitDocument == "" {
		cfg.SubmitDocument = DefaultSubmitDocument
	}
	if cfg.LeadDocument == "" {
		cfg.LeadDocument = DefaultLeadDocument
	}
	if cfg.MaxResponseBytes == 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.OutageWait <= 0 {
		cfg.OutageWait = DefaultOutageWait
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = DefaultMaxRetryWait
	}
	if cfg.PreflightWait <= 0 {
		cfg.PreflightWait = DefaultPreflightWait
	}
	if cfg.OutageThreshold == 0 {
		cfg.OutageThreshold = DefaultOutageThreshold
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
}

// Create calls createLead for one lead. red is in's Redactor
// (redact.New(in)), the one the caller gives the row's Submit and Lead
// too: it cuts the lead's SSN and date of birth out of the answer, the
// error and the debug logs; nil: Create makes one. A non-nil error is a
// *CallError (the row failed; the others go on) or a *token.AuthError
// (IsFatal: stop the run). Call says how many attempts it took and whether
// one of them may have reached the service unanswered.
func (c *Client) Create(ctx context.Context, in lead.Input, red *redact.Redactor) (lead.Result, Call, error) {
	if red == nil {
		red = redact.New(in)
	}
	return c.call(ctx, "createLead", c.createDoc, "input", wireInput(in), red)
}

// Lead reads the lead the service holds under id. red is the Redactor of
// the lead the call is about (redact.New of the row's input): it cuts
// that lead's SSN and date of birth out of the answer, the error and the
// debug logs, as it does for Create; nil cuts only SSN-shaped numbers.
// Errors are as for Create.
func (c *Client) Lead(ctx context.Context, id string, red *redact.Redactor) (lead.Result, Call, error) {
	return c.call(ctx, "lead", c.leadDoc, "id", id, red)
}

// Close ends the Client's idle connections (and their goroutines) and its
// outage probes once the run is over. Calls after Close still work; they
// open new connections, but no longer wait out an outage.
func (c *Client) Close() {
	c.gate.stop()
	c.gate.close()
	c.idle()
}

// WaitUp blocks while the run is in an outage of the service or its
// identity provider (see Outage): a worker calls it before it takes a new
// row. It returns nil when the service is there, an error wrapping an
// *OutageError once the run stopped waiting (the outage wait ran out,
// StopWaiting, or OutageThreshold calls in a row failed as outages), or
// ctx's error.
func (c *Client) WaitUp(ctx context.Context) error { return c.gate.wait(ctx) }

// StopWaiting ends every wait for the service, now and later, with an
// *OutageError (Stopped unless the outage wait ran out first): the run is
// stopping and takes no new rows. Calls in flight that are answered go on.
func (c *Client) StopWaiting() { c.gate.stop() }

// Outages returns the run's outages so far, in order; one going on is last,
// with End zero. The caller owns the copy.
func (c *Client) Outages() []Outage { return c.gate.outages() }

// CurrentOutage returns the outage the run waits out now, if any.
func (c *Client) CurrentOutage() (Outage, bool) { return c.gate.current() }

// probe is the outage gate's probe: a token (from the cache, or one token
// request), then one attempt of PreflightDocument. It succeeds when the
// service answers anything but an outage; idp reports that the token
// endpoint failed, cause names the failure.
func (c *Client) probe(ctx context.Context) (idp bool, cause string, err error) {
	if _, err := c.tokens.Token(ctx); err != nil {
		if cause, ok := tokenOutage(err, c.tokenTimeout); ok {
			return true, cause, err
		}
		return true, err.Error(), err
	}
	_, _, err = c.run(ctx, callSpec{op: "preflight", probe: true}, graphql.NewRequest(PreflightDocument))
	var ce *CallError
	switch {
	case err == nil:
		return false, "", nil
	case errors.As(err, &ce) && !ce.Outage && ce.Status != 0:
		return false, "", nil // an answer: GraphQL errors, 401, 429, 503
	case errors.As(err, &ce):
		return false, ce.Message, err
	}
	return false, err.Error(), err
}

// Submit calls submitLead for the lead the service created with this id.
// red is as for Lead. Errors are as for Create.
func (c *Client) Submit(ctx context.Context, id string, red *redact.Redactor) (lead.Result, Call, error) {
	return c.call(ctx, "submitLead", c.submitDoc, "id", id, red)
}

// call performs operation op (its result is named op too) with one
// variable, and returns the result. red cuts personal data out of every
// text the service sends back: the result lands in the results file.
func (c *Client) call(ctx context.Context, op, doc, name string, value any, red *redact.Redactor) (_ lead.Result, _ Call, err error) {
	defer func() { c.gate.callEnded(err) }()
	req := graphql.NewRequest(doc)
	req.Var(name, value)
	call, data, err := c.run(ctx, callSpec{op: op, red: red}, req)
	if err != nil {
		return lead.Result{}, call, err
	}
	result := data.of(op)
	if result == nil {
		return lead.Result{}, call, &CallError{Op: op, Status: http.StatusOK,
			Message: "reply has no " + op + " result and no errors", Attempts: call.Attempts, Ambiguous: call.Ambiguous}
	}
	return red.Result(*result), call, nil
}

// resultData is the `data` of a reply to any of the Client's operations,
// each result under its operation's name: one decode, no map. Typename is
// the preflight's, as the reply wrote it (JSON).
type resultData struct {
	CreateLead *lead.Result    `json:"createLead"`
	SubmitLead *lead.Result    `json:"submitLead"`
	Lead       *lead.Result    `json:"lead"`
	Typename   json.RawMessage `json:"__typename"`
}

// of is the result of operation op, nil when the reply has none.
func (d *resultData) of(op string) *lead.Result {
	if d == nil {
		return nil
	}
	switch op {
	case "createLead":
		return d.CreateLead
	case "submitLead":
		return d.SubmitLead
	case "lead":
		return d.Lead
	}
	return nil
}

// run performs one GraphQL call (retry) and turns its outcome into the
// call's result: data is a 2xx reply's data, nil when it has none.
// spec.red cuts personal data out of every text of the service's error.
func (c *Client) run(ctx context.Context, spec callSpec, req *graphql.Request) (_ Call, data *resultData, _ error) {
	op, red := spec.op, spec.red
	if de := c.deniedErr.Load(); de != nil && !spec.probe {
		// Access was refused: no call can succeed, none is sent.
		return Call{}, nil, de
	}
	c.stats.calls.Add(1)
	c.stats.ops[opIndex(op)].calls.Add(1)
	o := c.retry(ctx, spec, req)
	call := Call{Attempts: o.attempts, Ambiguous: o.ambiguous}
	switch {
	case o.err != nil:
		var ce *CallError
		if errors.As(o.err, &ce) {
			redactCallError(red, ce)
			if de := c.accessDenied(op, ce); de != nil {
				return call, nil, de
			}
		}
		return call, nil, o.err
	case len(o.errs) > 0:
		ce := &CallError{Op: op, Status: http.StatusOK, Code: o.errs[0].Code,
			Message: joinGraphQLErrors(o.errs), Errors: o.errs, Attempts: o.attempts, Ambiguous: o.ambiguous}
		redactCallError(red, ce)
		if de := c.accessDenied(op, ce); de != nil {
			return call, nil, de
		}
		return call, nil, ce
	}
	return call, o.data, nil
}

// accessDenied returns the *AccessError that ce, a failed call of op, is,
// or nil: a 401 after the retry loop fetched a fresh token for it (it
// always does once), a 403, or, to createLead or submitLead, a GraphQL
// error with one of the denied codes (a lead read refused for want of
// Lead.Read is the row's own-lead check's to report, not the run's). The
// first one is kept: every later call returns it at once.
func (c *Client) accessDenied(op string, ce *CallError) *AccessError {
	de := &AccessError{Op: op, Status: ce.Status, Message: ce.Message}
	switch {
	case ce.Status == http.StatusUnauthorized, ce.Status == http.StatusForbidden:
		if len(ce.Errors) > 0 {
			de.Code, de.Message = ce.Errors[0].Code, ce.Errors[0].Message
		}
	case op != "createLead" && op != "submitLead":
		return nil
	default:
		found := false
		for _, ge := range ce.Errors {
			if c.denied[ge.Code] {
				de.Code, de.Message, found = ge.Code, ge.Message, true
				break
			}
		}
		if !found || ce.Status < 200 || ce.Status >= 300 {
			return nil
		}
	}
	if c.deniedErr.CompareAndSwap(nil, de) {
		c.log.Error("the lead endpoint refused the application's access: no new rows are sent", "op", op, "status", de.Status, "code", de.Code)
	}
	return c.deniedErr.Load()
}

// wireInput is lead.Input as the variable "input": the same JSON, but
// formatting it prints a constant. The GraphQL library formats the
// variables with %v for its Log hook on every call, even when the hook
// does nothing; this keeps that cheap, and keeps the SSN and date of birth
// out of it should the hook ever be set.
type wireInput lead.Input

// String returns a constant, never the lead's values.
func (wireInput) String() string { return "LeadInput{...}" }

// Preflight checks, before the first row is sent, that an access token can
// be had and that the lead endpoint answers one GraphQL query
// (PreflightDocument) with it. A gateway's answer (502, 503 or 504 without
// GraphQL errors: GatewayAnswer) is asked again, backing off, for up to
// Config.PreflightWait; other outages (a refused connection, DNS, TLS, a
// 404) fail at once; 429 and a 503 with the service's GraphQL errors are
// retried as for any call and, when they last, returned as they are (the
// service is there, asking to slow down). It
// returns nil when the endpoint gave a GraphQL answer,
// even one with GraphQL errors; a *token.AuthError when the credentials are
// refused (IsFatal); an *UnreachableError (IsUnreachable) naming the URL
// when the endpoint or the token endpoint cannot be reached, fails TLS,
// answers 404/405/5xx without GraphQL errors, or answers something that is
// not GraphQL; and any other error (a 401 or 403, throttling that did not
// end, cancellation) as it is, naming --endpoint.
func (c *Client) Preflight(ctx context.Context) error {
	var first time.Time
	for attempt := 1; ; attempt++ {
		err := c.preflightOnce(ctx)
		status, gateway := GatewayAnswer(err)
		if !gateway {
			return err
		}
		now := c.now()
		if first.IsZero() {
			first = now
		}
		left := c.preflightWait - now.Sub(first)
		// A wait of 1ns is the caller's "ask once" (as OutageWait's).
		if left <= 0 || c.preflightWait <= time.Nanosecond {
			var ue *UnreachableError
			if errors.As(err, &ue) {
				ue.For = now.Sub(first)
			}
			return err
		}
		wait := min(token.Backoff(attempt, min(c.backoffBase, c.preflightWait/20), c.backoffMax, rand.Float64()), left)
		c.log.Warn(fmt.Sprintf("preflight: the endpoint answered %d, a gateway's answer (the service behind it may be restarting); asking again", status),
			"endpoint", c.endpoint, "in", wait.Round(time.Millisecond), "for up to", left.Round(time.Millisecond))
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}

// preflightOnce is one try of Preflight.
func (c *Client) preflightOnce(ctx context.Context) error {
	if _, err := c.tokens.Token(ctx); err != nil {
		if IsFatal(err) || ctx.Err() != nil {
			return err
		}
		return &UnreachableError{URL: c.tokenURL, Err: err}
	}
	call, data, err := c.run(ctx, callSpec{op: "preflight", failFast: true}, graphql.NewRequest(PreflightDocument))
	var typename string
	if err == nil && data != nil && len(data.Typename) > 0 {
		if jerr := json.Unmarshal(data.Typename, &typename); jerr != nil {
			err = &CallError{Op: "preflight", Status: http.StatusOK, Message: "reply is not GraphQL JSON of the expected shape: " + jerr.Error(),
				Attempts: call.Attempts, Ambiguous: call.Ambiguous}
		}
	}
	var ce *CallError
	switch {
	case err == nil && typename == "":
		return &UnreachableError{URL: c.endpoint, GraphQL: true, Err: &CallError{Op: "preflight",
			Status: http.StatusOK, Message: "reply has no data.__typename", Outage: true, Attempts: call.Attempts}}
	case err == nil:
		return nil
	case IsAccessDenied(err):
		return fmt.Errorf("endpoint %s: %w", c.endpoint, err)
	case IsFatal(err) || ctx.Err() != nil:
		return err
	case !errors.As(err, &ce):
		return fmt.Errorf("endpoint %s: %w", c.endpoint, err)
	case ce.Status >= 200 && ce.Status < 300 && len(ce.Errors) > 0:
		// GraphQL errors to { __typename } are odd, but they come from a
		// GraphQL service: the rows will tell what it objects to.
		return nil
	case ce.Outage, len(ce.Errors) == 0 && !preflightTolerated(ce.Status):
		return &UnreachableError{URL: c.endpoint, GraphQL: true, Err: err}
	}
	return fmt.Errorf("endpoint %s: %w", c.endpoint, err)
}

// preflightTolerated lists the statuses without GraphQL errors that do not
// make Preflight call an endpoint unreachable: they come from a service
// that is there but refuses the token (401, 403) or asks to slow down
// (429). A 503 without GraphQL errors is a gateway's page (GatewayAnswer);
// one with them is the service's and never gets here.
func preflightTolerated(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
		return true
	}
	return false
}

// isLoopback reports whether host (without port) is this machine:
// localhost, 127.0.0.0/8 or ::1.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckAuth fetches a token now with the Client's settings and describes it
// (expiry, roles, audience, client id), for `bulkload auth check` and
// before an upload's first row. It never returns the token itself. A
// refusal of the credentials is a *token.AuthError (IsFatal); a token endpoint
// that cannot be reached, fails TLS, answers something other than a token
// or a refusal, or does not answer before ctx's deadline is an
// *UnreachableError naming the token URL (IsUnreachable): an outage or a
// wrong URL, not a credential to fix; ctx's cancellation is returned as it
// is.
func (c *Client) CheckAuth(ctx context.Context) (token.Info, error) {
	info, err := c.tokens.Fetch(ctx)
	if err != nil {
		if IsFatal(err) || errors.Is(ctx.Err(), context.Canceled) {
			return token.Info{}, err
		}
		return token.Info{}, &UnreachableError{URL: c.tokenURL, Err: err}
	}
	return info, nil
}

// autoRate is a rate that finds the service's limit by itself, as
// *pace.Adaptive does (--rate auto), for Stats.
type autoRate interface {
	Settled() (callsPerSecond float64, found bool)
	Limit() float64
}

// maxTokenAttemptTimeout bounds one token request.
const maxTokenAttemptTimeout = 30 * time.Second

// InFlight returns the limit on calls in flight and the calls in flight
// now (attempts, precisely: a retry waiting out its backoff holds no
// place). Safe for concurrent use and cheap: one lock.
func (c *Client) InFlight() (limit, inFlight int) { return c.conc.Limits() }

// Stats returns the counters so far. Safe for concurrent use.
func (c *Client) Stats() Stats {
	s := Stats{
		Calls:         c.stats.calls.Load(),
		Attempts:      c.stats.attempts.Load(),
		Retries:       c.stats.retries.Load(),
		Status429:     c.stats.status429.Load(),
		Status401:     c.stats.status401.Load(),
		Status503:     c.stats.status503.Load(),
		Answered:      c.stats.answered.Load(),
		Latency:       c.stats.latency.load(),
		TokensFetched: c.tokens.Fetches(),
		CurrentRate:   c.rate.Rate(),
		CreateLead:    c.stats.ops[opCreate].load(),
		SubmitLead:    c.stats.ops[opSubmit].load(),
		Lead:          c.stats.ops[opLead].load(),
		Preflight:     c.stats.ops[opPreflight].load(),
		RateWaited:    c.rateWait.waited(),
		BackoffWaited: c.stats.backoff.total(c.now()),
		Wire:          time.Duration(c.stats.wire.Load()),
		FailedWire:    time.Duration(c.stats.failedWire.Load()),

		Concurrency:    c.conc.Snapshot(),
		AttemptLatency: c.stats.attemptLatency.load(),
	}
	s.RateAllowed, s.RateLimited = c.allowed.mean()
	s.Outages = c.gate.started.Load()
	_, s.OutageWaiting = c.gate.current()
	if auto, ok := c.rate.(autoRate); ok {
		s.Auto = true
		s.SettledRate, s.LimitFound = auto.Settled()
		s.RateLimit = auto.Limit()
	}
	return s
}
