// Package token is the authentication stage of bulkload's pipeline: it
// gets the OAuth 2.0 access token (the client-credentials flow) that every
// call of a run sends, and keeps it. Its theory, testable with no lead
// service: one token shared by every worker, renewed ahead of its expiry
// with exactly one request in flight whose result every waiter shares;
// which answers of the token endpoint refuse the credentials (an
// *AuthError: fatal, remembered, never asked again), which answer with a
// token that cannot be used (a *ReplyError), and which are retried with
// the Cache's own backoff (network errors, 408, 429, 5xx).
//
// The Cache knows nothing of the lead service nor of its outages: it
// tells its caller of each failed request and each token fetched through
// hooks (Config.OnFailure, Config.OnFetch), and its caller decides what a
// failure means for the run.
//
// Nothing in this package's logs or errors contains the client secret or a
// token.
package token

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/bulkload/bulkload/redact"
)

// Hints of AuthError: which setting to check (AuthError.Check names it for
// a caller that says how its user sets it).
const (
	hintInvalidClient = "check the client id and the client secret"
	hintInvalidScope  = "check the scope"
	hintUnauthorized  = "the operator has not granted this application access; ask your account manager"
	hintTokenURL      = "check the token URL"
	hintOther         = "check the token URL, the client id, the scope and the client secret"
)

// maxEarlyRefresh is how long before expiry a usual one-hour token is
// renewed; a shorter-lived token is renewed a tenth of its lifetime early.
const maxEarlyRefresh = 5 * time.Minute

// Defaults of Config.
const (
	DefaultRetries     = 5
	DefaultBackoffBase = 500 * time.Millisecond
	DefaultBackoffMax  = 30 * time.Second
	DefaultTimeout     = 30 * time.Second
)

// Config configures a Cache. Zero values take the documented defaults.
type Config struct {
	TokenURL     string // the token endpoint (URL builds the usual one)
	ClientID     string
	ClientSecret string // never logged, never in an error
	Scope        string // "api://<app-id>/.default"
	// Transport is the base transport to the token endpoint; nil =
	// http.DefaultTransport. Redirects are never followed: the request
	// carries the client secret.
	Transport http.RoundTripper
	// Retries is how many times a request that failed in a way worth
	// retrying (a network error, 408, 429, 5xx, no access_token) is asked
	// again, with full-jitter exponential backoff from BackoffBase up to
	// BackoffMax; defaults DefaultRetries, DefaultBackoffBase,
	// DefaultBackoffMax.
	Retries                 int
	BackoffBase, BackoffMax time.Duration
	// Timeout bounds one token request; default DefaultTimeout.
	Timeout time.Duration
	Now     func() time.Time // nil = time.Now (expiry decisions)
	Logger  *slog.Logger     // nil = discard
	// OnFailure, when set, is told of each token request that failed in a
	// way worth retrying, with the request's error (as x/oauth2 returns
	// it: the secret may be in its text, which the hook must not print)
	// and whether a valid token is left. When it returns true the fetch
	// gives up at once instead of retrying: the caller waits the failure
	// out (an outage of the identity provider) and asks again itself.
	OnFailure func(err error, noValidToken bool) (giveUp bool)
	// OnFetch, when set, is told of each token fetched.
	OnFetch func()
}

// Info describes a token fetched by Fetch, decoded from the JWT payload
// without verifying it (it is our own token, just received over TLS). It
// never holds the token itself.
type Info struct {
	ExpiresAt time.Time
	Roles     []string
	Audience  string
	ClientID  string
	// Opaque is set for an access token that is not a JWT (some OpenID
	// providers issue opaque tokens by default): its roles, audience and
	// client cannot be read from it, only the service knows them.
	Opaque bool
}

// earlyRefresh is how long before expiry a token of this lifetime is
// renewed: min(5 min, lifetime/10).
func earlyRefresh(lifetime time.Duration) time.Duration {
	return min(maxEarlyRefresh, lifetime/10)
}

// Cache holds the one access token shared by every worker of a run. It
// renews the token ahead of expiry with exactly one fetch in flight, whose
// result every waiter shares; the fetch runs under the Cache's long-lived
// context, not a waiter's. Refused credentials are remembered as a fatal
// *AuthError. Safe for concurrent use.
type Cache struct {
	conf      clientcredentials.Config
	bg        context.Context // carries the HTTP client for the token endpoint
	now       func() time.Time
	retries   int
	base      time.Duration
	max       time.Duration
	timeout   time.Duration
	secret    *redact.Secret
	log       *slog.Logger
	fetched   atomic.Int64
	onFailure func(error, bool) bool
	onFetch   func()
	// badReply is what replyLayer found wrong with the token request's
	// answer, nil when nothing.
	badReply atomic.Pointer[ReplyError]

	mu        sync.Mutex
	cur       string    // current access token, "" when none
	refreshAt time.Time // start a background renewal from here
	hardAt    time.Time // stop using cur from here
	fatal     *AuthError
	inflight  *tokenFetch
}

// New returns the Cache of cfg. It does no network I/O. ctx bounds its
// fetches, which a waiting caller's own context does not cancel: it should
// live as long as the run, and the caller cancels it when the run ends so
// that no fetch outlives the run.
func New(ctx context.Context, cfg Config) *Cache {
	if cfg.Retries == 0 {
		cfg.Retries = DefaultRetries
	}
	if cfg.BackoffBase == 0 {
		cfg.BackoffBase = DefaultBackoffBase
	}
	if cfg.BackoffMax == 0 {
		cfg.BackoffMax = DefaultBackoffMax
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	base := cfg.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c := &Cache{
		conf: clientcredentials.Config{
			ClientID:     cfg.ClientID,
			ClientSecret: cfg.ClientSecret,
			TokenURL:     cfg.TokenURL,
			Scopes:       []string{cfg.Scope},
			AuthStyle:    oauth2.AuthStyleInParams,
		},
		now:       cfg.Now,
		retries:   cfg.Retries,
		base:      cfg.BackoffBase,
		max:       cfg.BackoffMax,
		timeout:   cfg.Timeout,
		secret:    redact.NewSecret(cfg.ClientID, cfg.ClientSecret),
		log:       log,
		onFailure: cfg.OnFailure,
		onFetch:   cfg.OnFetch,
	}
	hc := &http.Client{Transport: &replyLayer{next: base, bad: &c.badReply}, CheckRedirect: RefuseRedirect}
	c.bg = context.WithValue(ctx, oauth2.HTTPClient, hc)
	return c
}

// Fetches returns how many tokens the Cache fetched since New.
func (c *Cache) Fetches() int64 { return c.fetched.Load() }

// tokenFetch is one token request in flight; done is closed when tok or err
// is set.
type tokenFetch struct {
	done chan struct{}
	tok  *oauth2.Token
	err  error
	// last is the latest failed attempt's error (scrubbed), for a waiter
	// that stops waiting before the fetch ends.
	last atomic.Pointer[error]
}

// gaveUp is a waiter's error when its ctx ended before the fetch f did: ctx's
// error, and what the last attempt met, if one failed (a refused
// connection says more than "context deadline exceeded").
func (f *tokenFetch) gaveUp(ctx context.Context) error {
	if last := f.last.Load(); last != nil {
		return fmt.Errorf("%w; the last token request: %v", ctx.Err(), *last)
	}
	return ctx.Err()
}

// Token returns a token to send, fetching one if needed. A waiter whose
// ctx ends stops waiting; the fetch goes on for the others. Once the
// credentials were refused, it returns that *AuthError at once.
func (c *Cache) Token(ctx context.Context) (string, error) {
	c.mu.Lock()
	if c.fatal != nil {
		c.mu.Unlock()
		return "", c.fatal
	}
	now := c.now()
	if c.cur != "" && now.Before(c.refreshAt) {
		tok := c.cur
		c.mu.Unlock()
		return tok, nil
	}
	f := c.startLocked()
	if c.cur != "" && now.Before(c.hardAt) {
		// Renewal runs in the background; the current token is still good.
		tok := c.cur
		c.mu.Unlock()
		return tok, nil
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		if f.err != nil {
			return "", f.err
		}
		return f.tok.AccessToken, nil
	case <-ctx.Done():
		return "", f.gaveUp(ctx)
	}
}

// Fetch fetches a new token now (joining a fetch already in flight) and
// describes it (expiry, roles, audience, client id), for a check of the
// credentials. It never returns the token itself. Its errors are those of
// Token.
func (c *Cache) Fetch(ctx context.Context) (Info, error) {
	start := c.now()
	tok, err := c.refresh(ctx)
	if err != nil {
		return Info{}, err
	}
	return decodeInfo(tok, start), nil
}

// refresh fetches a new token now (joining a fetch already in flight) and
// returns it.
func (c *Cache) refresh(ctx context.Context) (*oauth2.Token, error) {
	c.mu.Lock()
	if c.fatal != nil {
		c.mu.Unlock()
		return nil, c.fatal
	}
	f := c.startLocked()
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.tok, f.err
	case <-ctx.Done():
		return nil, f.gaveUp(ctx)
	}
}

// Invalidate drops tok if it is still the current token (the service
// answered 401 to it), so that the many workers that saw the same 401
// cause one new fetch, not one each.
func (c *Cache) Invalidate(tok string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == tok {
		c.cur = ""
	}
}

// startLocked returns the fetch in flight, starting one if there is none.
// c.mu must be held.
func (c *Cache) startLocked() *tokenFetch {
	if c.inflight != nil {
		return c.inflight
	}
	f := &tokenFetch{done: make(chan struct{})}
	c.inflight = f
	go c.run(f)
	return f
}

// run performs one fetch and publishes its result.
func (c *Cache) run(f *tokenFetch) {
	start := c.now()
	tok, err := c.fetch(f)
	c.mu.Lock()
	var ae *AuthError
	switch {
	case err == nil:
		c.cur = tok.AccessToken
		c.refreshAt, c.hardAt = time.Time{}, time.Time{}
		if life := tokenLifetime(tok); life > 0 {
			expiry := start.Add(life)
			// A JWT's exp is whole seconds and may fall before start +
			// expires_in; trust it only when it is in that window, so that
			// a skewed server clock cannot make every token look expired.
			if exp := jwtExpiry(tok.AccessToken); exp.After(start) && exp.Before(expiry) {
				expiry = exp
				life = exp.Sub(start)
			}
			early := earlyRefresh(life)
			c.refreshAt = expiry.Add(-early)
			c.hardAt = expiry.Add(-early / 4)
		} else {
			// No lifetime given: keep the token until a 401 drops it.
			c.refreshAt = start.Add(100 * 365 * 24 * time.Hour)
			c.hardAt = c.refreshAt
		}
	case errors.As(err, &ae):
		c.fatal = ae
	}
	c.inflight = nil
	c.mu.Unlock()
	if err == nil && c.onFetch != nil {
		c.onFetch()
	}
	f.tok, f.err = tok, err
	close(f.done)
}

// noValidToken reports whether no token is left to send: none, or past
// the time to stop using it.
func (c *Cache) noValidToken() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur == "" || !c.now().Before(c.hardAt)
}

// fetch requests a token, retrying network errors, 429 and 5xx with
// backoff. It returns an *AuthError when the credentials are refused.
func (c *Cache) fetch(f *tokenFetch) (*oauth2.Token, error) {
	var last error
	for attempt := 1; attempt <= c.retries+1; attempt++ {
		if attempt > 1 {
			d := Backoff(attempt-1, c.base, c.max, rand.Float64())
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-c.bg.Done():
				t.Stop()
				return nil, fmt.Errorf("get access token: %w", c.bg.Err())
			}
		}
		ctx, cancel := context.WithTimeout(c.bg, c.timeout)
		c.badReply.Store(nil)
		tok, err := c.conf.Token(ctx)
		cancel()
		if tre := c.badReply.Load(); tre != nil {
			// A malformed answer stays malformed: no retry.
			c.log.Error("token endpoint's answer cannot be used", "field", tre.Field, "reason", tre.Reason)
			return nil, tre
		}
		if err == nil {
			if tok.AccessToken == "" {
				last = errors.New("token endpoint returned no access_token")
				continue
			}
			c.fetched.Add(1)
			c.log.Debug("access token fetched", "lifetime", tokenLifetime(tok))
			return tok, nil
		}
		if c.bg.Err() != nil {
			return nil, fmt.Errorf("get access token: %w", c.bg.Err())
		}
		var rd *RedirectError
		if errors.As(err, &rd) {
			// Following it would send the client secret to rd.Host.
			ae := &AuthError{Code: fmt.Sprintf("http_%d", rd.Status), Status: rd.Status,
				Description: fmt.Sprintf("redirect to %q not followed", rd.Host), Hint: hintTokenURL, Check: CheckTokenURL}
			c.log.Error("token endpoint redirected; not following it", "status", rd.Status, "host", rd.Host)
			return nil, ae
		}
		if ae := c.classify(err); ae != nil {
			c.log.Error("token endpoint refused the credentials", "code", ae.Code, "hint", ae.Hint)
			return nil, ae
		}
		last = c.scrub(err)
		if IsTLSError(err) {
			// A certificate or scheme problem does not go away by retrying.
			c.log.Error("token request failed", "err", last.Error())
			return nil, fmt.Errorf("get access token: TLS failed, check the token URL's scheme and the server's certificate: %w", last)
		}
		seen := last
		f.last.Store(&seen)
		if c.onFailure != nil && c.onFailure(err, c.noValidToken()) {
			// The caller waits the failure out and asks again itself.
			c.log.Debug("token request failed during an outage", "attempt", attempt, "err", last.Error())
			return nil, fmt.Errorf("get access token: %w", last)
		}
		c.log.Warn("token request failed", "attempt", attempt, "err", last.Error())
	}
	return nil, fmt.Errorf("get access token: %d attempts failed, last: %w", c.retries+1, last)
}

// classify returns the fatal *AuthError for a refusal of the credentials, or
// nil for a failure worth retrying.
func (c *Cache) classify(err error) *AuthError {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.Response == nil {
		return nil
	}
	status := re.Response.StatusCode
	ae := &AuthError{Code: re.ErrorCode, Status: status, Description: c.scrubString(re.ErrorDescription)}
	switch re.ErrorCode {
	case "invalid_client":
		ae.Hint, ae.Check = hintInvalidClient, CheckClient
		return ae
	case "invalid_scope":
		ae.Hint, ae.Check = hintInvalidScope, CheckScope
		return ae
	case "unauthorized_client":
		ae.Hint = hintUnauthorized
		return ae
	}
	switch {
	case status == http.StatusNotFound:
		if ae.Code == "" {
			ae.Code = "http_404"
		}
		ae.Hint, ae.Check = hintTokenURL, CheckTokenURL
		return ae
	case status == http.StatusRequestTimeout, status == http.StatusTooManyRequests, status >= 500:
		return nil
	case status >= 400:
		if ae.Code == "" {
			ae.Code = fmt.Sprintf("http_%d", status)
		}
		ae.Hint, ae.Check = hintOther, CheckAll
		return ae
	}
	return nil
}

// scrub returns err with its message stripped of the secret, and without
// the token endpoint's raw reply body (RetrieveError prints it).
func (c *Cache) scrub(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		msg := "token endpoint answered HTTP " + re.Response.Status
		if re.ErrorCode != "" {
			msg += " " + re.ErrorCode
		}
		return errors.New(c.scrubString(msg))
	}
	return errors.New(c.scrubString(err.Error()))
}

// scrubString removes the secret in every encoding, and any client_secret
// value or Basic credential, from a token endpoint's free text, and the
// user info and query values of any URL it quotes (redact.URLsIn).
func (c *Cache) scrubString(s string) string {
	return redact.URLsIn(c.secret.Cut(s))
}

// tokenLifetime is the token's expires_in. clientcredentials does not copy
// ExpiresIn into the token it returns, so it is read from the raw reply, or
// else from Expiry (set from expires_in with the wall clock on receipt).
func tokenLifetime(tok *oauth2.Token) time.Duration {
	if tok.ExpiresIn > 0 {
		return time.Duration(tok.ExpiresIn) * time.Second
	}
	switch v := tok.Extra("expires_in").(type) {
	case float64:
		if v > 0 {
			return time.Duration(v * float64(time.Second))
		}
	case json.Number:
		if f, err := v.Float64(); err == nil && f > 0 {
			return time.Duration(f * float64(time.Second))
		}
	case string:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	if !tok.Expiry.IsZero() {
		if d := time.Until(tok.Expiry).Round(time.Second); d > 0 {
			return d
		}
	}
	return 0
}

// jwtExpiry is the exp claim of a JWT, unverified, or the zero time.
func jwtExpiry(raw string) time.Time {
	var claims struct {
		Exp json.Number `json:"exp"`
	}
	if !decodeClaims(raw, &claims) {
		return time.Time{}
	}
	exp, err := claims.Exp.Float64()
	if err != nil || exp <= 0 {
		return time.Time{}
	}
	return time.Unix(int64(exp), 0)
}

// decodeClaims decodes the payload of a JWT into v, without verifying it.
func decodeClaims(raw string, v any) bool {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return false
	}
	return json.Unmarshal(payload, v) == nil
}

// decodeInfo reads the claims of a JWT access token without verifying its
// signature. A token that is not a JWT gives only ExpiresAt.
func decodeInfo(tok *oauth2.Token, fetchedAt time.Time) Info {
	var info Info
	if life := tokenLifetime(tok); life > 0 {
		info.ExpiresAt = fetchedAt.Add(life)
	}
	var claims struct {
		Exp      json.Number     `json:"exp"`
		Roles    []string        `json:"roles"`
		Aud      json.RawMessage `json:"aud"`
		AppID    string          `json:"appid"`
		Azp      string          `json:"azp"`
		ClientID string          `json:"client_id"`
	}
	if !decodeClaims(tok.AccessToken, &claims) {
		info.Opaque = true
		return info
	}
	info.Roles = claims.Roles
	if exp, err := claims.Exp.Float64(); err == nil && exp > 0 && info.ExpiresAt.IsZero() {
		info.ExpiresAt = time.Unix(int64(exp), 0)
	}
	var aud string
	var auds []string
	switch {
	case json.Unmarshal(claims.Aud, &aud) == nil:
		info.Audience = aud
	case json.Unmarshal(claims.Aud, &auds) == nil:
		info.Audience = strings.Join(auds, " ")
	}
	for _, id := range []string{claims.AppID, claims.Azp, claims.ClientID} {
		if id != "" {
			info.ClientID = id
			break
		}
	}
	return info
}
