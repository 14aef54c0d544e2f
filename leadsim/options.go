package leadsim

import (
	"crypto/rsa"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"
)

// Permission names a client may hold, as the spec's section 5 lists them.
const (
	RoleWrite = "Lead.Write"
	RoleRead  = "Lead.Read"
)

// Defaults of Options.
const (
	DefaultTenantID      = "sim-tenant"
	DefaultAppID         = "sim-debt-core"
	DefaultTokenLifetime = 3599 * time.Second
	DefaultClientID      = "bulkload-sim-client"
	DefaultClientSecret  = "bulkload-sim-secret"
)

// Client is an application registered with the simulated identity provider:
// a partner's credentials, its permissions and its submission mode. The
// secret is a fake, so it is printed by `bulkload sim`, but the simulator
// itself never logs it.
type Client struct {
	ID, Secret string
	Roles      []string // RoleWrite, RoleRead
	Granted    bool     // false: the operator has not granted the app: token requests get unauthorized_client
	AutoSubmit bool     // partner with automatic submission: the simulator submits its qualified leads itself
}

// DefaultClient returns the client the simulator registers when Options has
// none: both permissions, granted, manual submission.
func DefaultClient() Client {
	return Client{
		ID:      DefaultClientID,
		Secret:  DefaultClientSecret,
		Roles:   []string{RoleWrite, RoleRead},
		Granted: true,
	}
}

// Latency is the simulated time one operation takes: each call sleeps Fixed
// plus a uniform draw from [0, Jitter) plus a draw from Dist (bimodal or
// heavy-tailed, see LatencyDist), and stops early when the request's
// context ends. None of it depends on the load (Options.Capacity does).
type Latency struct {
	Fixed, Jitter time.Duration
	Dist          LatencyDist
}

// RateChange is one change of the rate limit while the simulator runs.
type RateChange struct {
	At    time.Duration // since New
	Limit float64       // requests per second; 0 = unlimited
}

// ParseRateChanges reads --rate-limit-change: comma-separated LIMIT@AT,
// e.g. "150@30s" (the limit becomes 150/s 30 s after the start) or
// "150@30s,0@1m" (and unlimited after a minute).
func ParseRateChanges(v string) ([]RateChange, error) {
	var out []RateChange
	for _, part := range strings.Split(v, ",") {
		lim, at, ok := strings.Cut(strings.TrimSpace(part), "@")
		l, err1 := strconv.ParseFloat(lim, 64)
		d, err2 := time.ParseDuration(at)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("rate limit change %q: want LIMIT@AT, e.g. 150@30s", part)
		}
		out = append(out, RateChange{At: d, Limit: l})
	}
	return out, nil
}

// HangMode is how the lead endpoint hangs after Options.HangAfter
// requests.
type HangMode string

// The hang modes.
const (
	// HangHeld processes each request and holds its answer.
	HangHeld HangMode = "held"
	// HangUnread holds the connection without reading the request.
	HangUnread HangMode = "unread"
)

// Set reads a hang mode from a flag: held or unread.
func (m *HangMode) Set(v string) error {
	switch HangMode(v) {
	case HangHeld, HangUnread:
		*m = HangMode(v)
		return nil
	}
	return fmt.Errorf("hang mode %q: use held or unread", v)
}

func (m *HangMode) String() string {
	if m == nil || *m == "" {
		return string(HangHeld)
	}
	return string(*m)
}

// Window is a span of the simulator's life, counted from New on the Now
// clock: from Start for Dur. A zero Dur is no window.
type Window struct{ Start, Dur time.Duration }

// contains reports whether el, the time since New, falls in w.
func (w Window) contains(el time.Duration) bool {
	return w.Dur > 0 && el >= w.Start && el < w.Start+w.Dur
}

// String is w as ParseWindow reads it, e.g. "3s:12s"; "" for no window.
func (w Window) String() string {
	if w.Dur == 0 {
		return ""
	}
	return w.Start.String() + ":" + w.Dur.String()
}

// ParseWindow reads a window as START:DUR, two Go durations counted from
// the simulator's start, e.g. "3s:12s" (from 3 s after the start, for 12 s).
func ParseWindow(v string) (Window, error) {
	start, dur, ok := strings.Cut(strings.TrimSpace(v), ":")
	s, err1 := time.ParseDuration(start)
	d, err2 := time.ParseDuration(dur)
	if !ok || err1 != nil || err2 != nil || s < 0 || d <= 0 {
		return Window{}, fmt.Errorf("window %q: want START:DUR, two durations counted from the start, e.g. 3s:12s", v)
	}
	return Window{Start: s, Dur: d}, nil
}

// windowFlag binds a Window to a flag.
type windowFlag struct{ w *Window }

func (f windowFlag) String() string {
	if f.w == nil {
		return ""
	}
	return f.w.String()
}

func (f windowFlag) Set(v string) error {
	w, err := ParseWindow(v)
	if err == nil {
		*f.w = w
	}
	return err
}

// Options configures a Server. The zero value is a fast, fault-free
// simulator with DefaultClient; every realism knob is off by default. New
// copies Options, so the caller may reuse it.
type Options struct {
	TenantID      string        // default DefaultTenantID
	AppID         string        // the API's app id (debt_core_app_id): scope must be "api://"+AppID+"/.default", tokens' aud = AppID; default DefaultAppID
	Clients       []Client      // default: DefaultClient()
	TokenLifetime time.Duration // default 3599s; may be a few seconds in tests

	CreateLatency, SubmitLatency, TokenLatency, ReadLatency Latency

	RateLimit float64 // GraphQL requests per second (both endpoints), token bucket; 0 = unlimited
	RateBurst int     // default max(1, RateLimit/10)
	// RateChanges change RateLimit while the simulator runs, to test a
	// client that must follow a limit it cannot see: at each At, counted
	// from New on the Now clock, the limit becomes Limit (0 = unlimited).
	// The burst stays RateBurst when that is set, else becomes
	// max(1, Limit/10). At must increase from one change to the next.
	RateChanges []RateChange
	// RateLimitRetryAfter, when set, is the Retry-After of the 429s of
	// RateLimit, in Fail503RetryAfter's forms; empty: the whole seconds
	// until the bucket holds a token, at least 1. Tests give a fraction
	// of a second ("0.05"), so that a client that honours it retries in
	// milliseconds instead of waiting a second for each 429.
	RateLimitRetryAfter string

	// Capacity is how many GraphQL requests (both endpoints) are
	// processed at once, after the rate limit and authentication; the rest
	// wait in a FIFO queue, so that their latency grows with it, as in a
	// service with a fixed pool of workers. 0 = unlimited. QueueLimit
	// bounds the queue: a request that finds it full is shed with 503 and
	// Retry-After: 1 (0 = no bound). CapacityChanges change Capacity while
	// the simulator runs, as RateChanges do the rate limit.
	Capacity        int
	QueueLimit      int
	CapacityChanges []CapacityChange

	// Fail503, Fail500 and DropAfter are fractions of createLead and
	// submitLead requests: answered 503 before processing; answered 500
	// before processing; processed fully, then the connection is dropped
	// without an answer. They and ProxyReset take disjoint slices of one
	// draw in that order, so their sum should not exceed 1.
	Fail503, Fail500, DropAfter float64
	TokenFail503                float64 // fraction of token requests answered 503
	// FaultOp, when set, is the one operation, OpCreateLead or
	// OpSubmitLead, that Fail503, Fail500, DropAfter and ProxyReset draw
	// for; the other is never faulted. "" (the default) is both. A
	// submitLead served by a backend or a limit of its own fails as its
	// createLead does not.
	FaultOp string
	// Fail503RetryAfter, when set, is the Retry-After of the 503s of
	// Fail503: delta seconds as written ("2", "1.5", "99999999999999999999")
	// or "date+DUR", an HTTP-date DUR after the answer ("date+2s").
	Fail503RetryAfter string
	// ProxyReset is a fraction of createLead and submitLead requests
	// processed fully (a createLead creates its lead), then answered by a
	// proxy in front of the service with ProxyResetStatus and a body of
	// kind ProxyResetBody that is not GraphQL: what Envoy or Istio answer
	// when the backend resets the stream after it committed. It takes
	// the draw's slice after DropAfter's.
	ProxyReset float64
	// ProxyResetStatus is the proxy's status: 503 (the default), 502 or
	// 504.
	ProxyResetStatus int
	// ProxyResetBody is the proxy's body: ProxyBodyText (the default,
	// Envoy's text/plain line), ProxyBodyHTML (a gateway's page) or
	// ProxyBodyEmpty (no body).
	ProxyResetBody string
	// ProxyResetRetryAfter, when set, is the Retry-After of the proxy's
	// answers, in Fail503RetryAfter's forms: a gateway that asks the
	// client to come back after the backend committed its lead.
	ProxyResetRetryAfter string

	// TokenOutage is an outage of the identity provider: every token
	// request in the window is answered 503 temporarily_unavailable.
	TokenOutage Window
	// Outage is an outage of the lead endpoint behind its gateway: in the
	// window, GraphQL requests are answered 502 with an HTML body (the
	// gateway's page, not GraphQL), before any processing. OutageShare is
	// the fraction of them so answered (a partial outage); 0 means all.
	Outage      Window
	OutageShare float64
	// FirstAnswers are the statuses the lead endpoint's gateway answers its
	// first GraphQL requests with, one each, in order, before any
	// processing, with a gateway's HTML page: a service restarting behind
	// its load balancer, flapping (502,200 is not needed: every request
	// after them is served). Each is a 5xx.
	FirstAnswers []int
	// HangAfter, when above 0, makes the lead endpoint hang after that
	// many requests, until Heal (POST /_sim/heal), the client gives up or
	// Close. HangMode says how: HangHeld (the default) processes every
	// later request (a createLead creates its lead) but holds its answer,
	// the connection open: a stuck proxy in front of a backend that did
	// the work. HangUnread holds the connection open without reading the
	// request: nothing is processed, no lead created (a backend stuck
	// before it reads, or a load balancer that accepted the connection
	// and has nowhere to send it); Heal or Close then closes the held
	// connections unanswered, and later requests are served.
	HangAfter int
	HangMode  HangMode

	// RevokeWriteAfter, when above 0, has an administrator revoke
	// Lead.Write from every client after that many createLead requests,
	// and revoke the sessions of the tokens issued before: the next call
	// with one is answered 401, and every token
	// issued after lacks the role, so createLead and submitLead are
	// answered FORBIDDEN. GrantRoles (POST /_sim/grant) grants it again.
	RevokeWriteAfter int
	// RejectTokensAfter, when above 0, makes the lead endpoint answer 401
	// UNAUTHENTICATED to every request after that many, whatever its
	// token, a freshly issued one too: an identity provider that issues
	// tokens the API no longer accepts (a signing key or an audience it
	// does not trust).
	RejectTokensAfter int

	// EchoPII makes the simulator a careless service that echoes each
	// lead's SSN and date of birth, written several ways (123-45-6789,
	// 123 45 6789, 07/07/1977, 7/7/77, 19770707, July 7, 1977, ...), in
	// every createLead, submitLead and lead note, in a qualified lead's
	// bidValue, and in the message and extensions.code of createLead's
	// BAD_USER_INPUT errors, submitLead's SUBMIT_REFUSED errors and the
	// injected 500 and 503 faults. For testing a client's redaction.
	EchoPII bool

	MaxBodyBytes   int64         // largest request body of every route; over it: 413; 0 = no limit (the spec shows none)
	RotateKeyEvery time.Duration // 0 = never; else the signing key is replaced every interval (old tokens become invalid)
	Seed           int64         // faults and jitter are drawn from a source seeded with it

	// SigningKey is the first token signing key; nil makes a 2048-bit key
	// at start, which takes a fraction of a second (seconds under -race on
	// a busy machine), so tests that start many simulators may share one.
	// Simulators sharing a key (and tenant, app id and client) accept each
	// other's tokens. Rotation always makes a new key. New does not modify it.
	SigningKey *rsa.PrivateKey

	Logger *slog.Logger     // nil = discard; never given SSNs, dates of birth, secrets or tokens
	Now    func() time.Time // clock of token issue and expiry; nil = time.Now (tests move it to expire tokens without waiting)
}

// withDefaults returns a copy of o with defaults filled in, or an error
// naming the first invalid setting.
func (o Options) withDefaults() (Options, error) {
	if o.TenantID == "" {
		o.TenantID = DefaultTenantID
	}
	if o.AppID == "" {
		o.AppID = DefaultAppID
	}
	if len(o.Clients) == 0 {
		o.Clients = []Client{DefaultClient()}
	} else {
		o.Clients = append([]Client(nil), o.Clients...)
	}
	seen := make(map[string]bool, len(o.Clients))
	for i, c := range o.Clients {
		if c.ID == "" {
			return o, fmt.Errorf("leadsim options: client %d has no ID: give every client an ID", i)
		}
		if seen[c.ID] {
			return o, fmt.Errorf("leadsim options: client %q is listed twice: give each client once", c.ID)
		}
		seen[c.ID] = true
		o.Clients[i].Roles = append([]string(nil), c.Roles...)
	}
	if o.TokenLifetime == 0 {
		o.TokenLifetime = DefaultTokenLifetime
	}
	if o.TokenLifetime < time.Second {
		return o, fmt.Errorf("leadsim options: token lifetime %v is below 1s: use at least 1s", o.TokenLifetime)
	}
	for name, l := range map[string]Latency{"create": o.CreateLatency, "submit": o.SubmitLatency, "token": o.TokenLatency, "read": o.ReadLatency} {
		if l.Fixed < 0 || l.Jitter < 0 {
			return o, fmt.Errorf("leadsim options: %s latency %v+%v is negative: use durations >= 0", name, l.Fixed, l.Jitter)
		}
		if err := l.Dist.check(); err != nil {
			return o, fmt.Errorf("leadsim options: %s %w", name, err)
		}
	}
	if o.RateLimit < 0 || math.IsNaN(o.RateLimit) {
		return o, fmt.Errorf("leadsim options: rate limit %v: use a rate >= 0 (0 = unlimited)", o.RateLimit)
	}
	if o.RateBurst <= 0 {
		o.RateBurst = max(1, int(o.RateLimit/10))
	}
	o.RateChanges = append([]RateChange(nil), o.RateChanges...)
	for i, c := range o.RateChanges {
		if c.Limit < 0 || math.IsNaN(c.Limit) || math.IsInf(c.Limit, 0) {
			return o, fmt.Errorf("leadsim options: rate limit change %d: limit %v: use a rate >= 0 (0 = unlimited)", i, c.Limit)
		}
		if c.At <= 0 || (i > 0 && c.At <= o.RateChanges[i-1].At) {
			return o, fmt.Errorf("leadsim options: rate limit change %d at %v: times must be after the start and increase", i, c.At)
		}
	}
	if err := o.checkCapacity(); err != nil {
		return o, err
	}
	if o.TokenOutage.Start < 0 || o.TokenOutage.Dur < 0 || o.Outage.Start < 0 || o.Outage.Dur < 0 {
		return o, errors.New("leadsim options: an outage window is negative: use START:DUR with durations >= 0")
	}
	o.FirstAnswers = append([]int(nil), o.FirstAnswers...)
	for _, st := range o.FirstAnswers {
		if st < 500 || st > 599 {
			return o, fmt.Errorf("leadsim options: first answer %d: want a 5xx status, a gateway's", st)
		}
	}
	if o.HangAfter < 0 {
		return o, errors.New("leadsim options: hang-after is negative: use 0 (never) or a request count")
	}
	switch o.HangMode {
	case "":
		o.HangMode = HangHeld
	case HangHeld, HangUnread:
	default:
		return o, fmt.Errorf("leadsim options: hang mode %q: use %q or %q", o.HangMode, HangHeld, HangUnread)
	}
	if err := o.checkProxyReset(); err != nil {
		return o, err
	}
	for name, f := range map[string]float64{"fail-503": o.Fail503, "fail-500": o.Fail500, "drop-after": o.DropAfter, "proxy-reset": o.ProxyReset, "token-fail-503": o.TokenFail503, "outage-share": o.OutageShare} {
		if !(f >= 0 && f <= 1) {
			return o, fmt.Errorf("leadsim options: %s fraction %v is outside [0,1]", name, f)
		}
	}
	if o.FaultOp != "" && o.FaultOp != OpCreateLead && o.FaultOp != OpSubmitLead {
		return o, fmt.Errorf("leadsim options: fault op %q: use %s, %s or \"\" (both)", o.FaultOp, OpCreateLead, OpSubmitLead)
	}
	if err := checkRetryAfter(o.Fail503RetryAfter); err != nil {
		return o, fmt.Errorf("leadsim options: fail-503 %w", err)
	}
	if err := checkRetryAfter(o.ProxyResetRetryAfter); err != nil {
		return o, fmt.Errorf("leadsim options: proxy-reset %w", err)
	}
	if err := checkRetryAfter(o.RateLimitRetryAfter); err != nil {
		return o, fmt.Errorf("leadsim options: rate-limit %w", err)
	}
	if o.MaxBodyBytes < 0 {
		return o, errors.New("leadsim options: max body size is negative: use 0 (no limit) or a size > 0")
	}
	if o.RotateKeyEvery < 0 {
		return o, errors.New("leadsim options: key rotation interval is negative: use 0 (never) or a positive interval")
	}
	if o.SigningKey != nil {
		if err := o.SigningKey.Validate(); err != nil || o.SigningKey.N.BitLen() < 2048 {
			return o, fmt.Errorf("leadsim options: signing key is invalid or under 2048 bits: give an RSA key of 2048 bits or more, or none")
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// RegisterFlags binds the flags of `bulkload sim` to o. The flags
// --client-id, --client-secret and --auto-submit configure o.Clients[0]; if
// o has no client, RegisterFlags adds DefaultClient() first. Call it before
// fs.Parse and pass o to New after.
func (o *Options) RegisterFlags(fs *flag.FlagSet) {
	if len(o.Clients) == 0 {
		o.Clients = []Client{DefaultClient()}
	}
	if o.TenantID == "" {
		o.TenantID = DefaultTenantID
	}
	if o.AppID == "" {
		o.AppID = DefaultAppID
	}
	if o.TokenLifetime == 0 {
		o.TokenLifetime = DefaultTokenLifetime
	}
	c := &o.Clients[0]
	fs.StringVar(&o.TenantID, "tenant-id", o.TenantID, "tenant id of the simulated identity provider (token URL is BASE/TENANT/oauth2/v2.0/token)")
	fs.StringVar(&o.AppID, "app-id", o.AppID, "the API's app id: scope is api://APP-ID/.default and tokens' audience is APP-ID")
	fs.StringVar(&c.ID, "client-id", c.ID, "client id of the simulated partner application")
	fs.StringVar(&c.Secret, "client-secret", c.Secret, "client secret of the simulated partner (a fake, not sensitive)")
	fs.BoolVar(&c.AutoSubmit, "auto-submit", c.AutoSubmit, "the partner has automatic submission: the simulator submits its qualified leads itself")
	fs.DurationVar(&o.TokenLifetime, "token-lifetime", o.TokenLifetime, "lifetime of issued access tokens (expires_in)")
	fs.DurationVar(&o.CreateLatency.Fixed, "create-latency", o.CreateLatency.Fixed, "fixed latency of each createLead")
	fs.DurationVar(&o.CreateLatency.Jitter, "create-jitter", o.CreateLatency.Jitter, "random extra latency of each createLead, uniform in [0, jitter)")
	fs.Var(distFlag{&o.CreateLatency.Dist}, "create-latency-dist", "random latency of each createLead on top, whatever the load: bimodal:FAST,SLOW,SHARE (e.g. bimodal:50ms,2s,0.1), lognormal:MEDIAN,SIGMA (e.g. lognormal:100ms,1) or pareto:MIN,ALPHA (e.g. pareto:50ms,1.5; draws at most 1m)")
	fs.DurationVar(&o.SubmitLatency.Fixed, "submit-latency", o.SubmitLatency.Fixed, "fixed latency of each submitLead")
	fs.DurationVar(&o.SubmitLatency.Jitter, "submit-jitter", o.SubmitLatency.Jitter, "random extra latency of each submitLead")
	fs.Var(distFlag{&o.SubmitLatency.Dist}, "submit-latency-dist", "random latency of each submitLead on top, as --create-latency-dist")
	fs.DurationVar(&o.TokenLatency.Fixed, "token-latency", o.TokenLatency.Fixed, "fixed latency of each token request")
	fs.DurationVar(&o.ReadLatency.Fixed, "read-latency", o.ReadLatency.Fixed, "fixed latency of each lead or creditReport query")
	fs.Float64Var(&o.RateLimit, "rate-limit", o.RateLimit, "GraphQL requests per second over both endpoints (token bucket); over it: 429 with Retry-After; 0 = unlimited")
	fs.IntVar(&o.RateBurst, "rate-burst", o.RateBurst, "token bucket size of --rate-limit; 0 = max(1, rate/10)")
	fs.StringVar(&o.RateLimitRetryAfter, "rate-limit-retry-after", o.RateLimitRetryAfter, "Retry-After of --rate-limit's 429s, in --fail-503-retry-after's forms; empty: the whole seconds until the bucket holds a token, at least 1")
	fs.Func("rate-limit-change", "change --rate-limit while running: LIMIT@AT[,LIMIT@AT...], AT counted from the start, e.g. 150@30s (0 = unlimited)", func(v string) error {
		c, err := ParseRateChanges(v)
		if err == nil {
			o.RateChanges = c
		}
		return err
	})
	o.registerCapacityFlags(fs)
	fs.Float64Var(&o.Fail503, "fail-503", o.Fail503, "fraction of createLead/submitLead requests answered 503 before processing")
	fs.StringVar(&o.Fail503RetryAfter, "fail-503-retry-after", o.Fail503RetryAfter, "Retry-After of the 503s of --fail-503: delta seconds (2, 1.5, 99999999999999999999) or date+DURATION (an HTTP-date, e.g. date+2s); empty: none")
	fs.Float64Var(&o.Fail500, "fail-500", o.Fail500, "fraction of createLead/submitLead requests answered 500 before processing")
	fs.Float64Var(&o.DropAfter, "drop-after", o.DropAfter, "fraction of createLead/submitLead requests processed, then answered by dropping the connection")
	fs.Float64Var(&o.ProxyReset, "proxy-reset", o.ProxyReset, "fraction of createLead/submitLead requests processed, then answered by a proxy with --proxy-reset-status and a body that is not GraphQL (a backend reset after the commit)")
	fs.IntVar(&o.ProxyResetStatus, "proxy-reset-status", o.ProxyResetStatus, "status of --proxy-reset's answers: 503, 502 or 504 (0 = 503)")
	fs.StringVar(&o.ProxyResetBody, "proxy-reset-body", o.ProxyResetBody, "body of --proxy-reset's answers: text (Envoy's line), html (a gateway's page) or empty")
	fs.StringVar(&o.ProxyResetRetryAfter, "proxy-reset-retry-after", o.ProxyResetRetryAfter, "Retry-After of --proxy-reset's answers, in --fail-503-retry-after's forms; empty: none")
	fs.StringVar(&o.FaultOp, "fault-op", o.FaultOp, "the one operation --fail-503, --fail-500, --drop-after and --proxy-reset apply to: createLead or submitLead; empty: both")
	fs.Float64Var(&o.TokenFail503, "token-fail-503", o.TokenFail503, "fraction of token requests answered 503")
	fs.Var(windowFlag{&o.TokenOutage}, "token-outage", "an identity provider outage: token requests answered 503 temporarily_unavailable from START for DUR (START:DUR, e.g. 3s:12s, counted from the start)")
	fs.Var(windowFlag{&o.Outage}, "outage", "a lead endpoint outage: GraphQL requests answered 502 with an HTML body from START for DUR (START:DUR, e.g. 30s:20s)")
	fs.Float64Var(&o.OutageShare, "outage-share", o.OutageShare, "fraction of GraphQL requests answered 502 during --outage (a partial outage); 0 = all")
	fs.Func("first-answers", "statuses the lead endpoint answers its first GraphQL requests with, one each, with a gateway's HTML page, before serving (a flapping service: 502,502,504)", func(v string) error {
		o.FirstAnswers = nil
		for _, f := range strings.Split(v, ",") {
			st, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return fmt.Errorf("%q is not a status", f)
			}
			o.FirstAnswers = append(o.FirstAnswers, st)
		}
		return nil
	})
	fs.IntVar(&o.HangAfter, "hang-after", o.HangAfter, "after this many lead endpoint requests, hang with the connection open (see --hang-mode) until POST /_sim/heal; 0 = never")
	fs.Var(&o.HangMode, "hang-mode", "how --hang-after hangs: held (process each request, hold its answer) or unread (hold the connection without reading the request: nothing processed)")
	fs.IntVar(&o.RevokeWriteAfter, "revoke-write-after", o.RevokeWriteAfter, "after this many createLead requests, revoke Lead.Write and the tokens issued before (401, then FORBIDDEN); 0 = never")
	fs.IntVar(&o.RejectTokensAfter, "reject-tokens-after", o.RejectTokensAfter, "after this many lead endpoint requests, answer 401 to every token, fresh ones too; 0 = never")
	fs.DurationVar(&o.RotateKeyEvery, "rotate-key-every", o.RotateKeyEvery, "replace the signing key at this interval, revoking every token issued before; 0 = never")
	fs.Int64Var(&o.MaxBodyBytes, "max-body", o.MaxBodyBytes, "largest request body in bytes; over it: 413; 0 = no limit")
	fs.BoolVar(&o.EchoPII, "echo-pii", o.EchoPII, "echo each lead's SSN and date of birth, written several ways, in notes, bidValue and error messages and codes (to test a client's redaction)")
	fs.Int64Var(&o.Seed, "seed", o.Seed, "seed of the random source of faults and jitter")
}
