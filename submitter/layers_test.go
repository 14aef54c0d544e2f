package submitter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkload/bulkload/pace"
	"github.com/bulkload/bulkload/token"
)

// recordingLimiter is a RateLimiter that lets everything through and keeps
// what it was told.
type recordingLimiter struct {
	mu       sync.Mutex
	waits    int
	observed []pace.Outcome
}

func (l *recordingLimiter) Wait(ctx context.Context, _ <-chan struct{}) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waits++
	return ctx.Err()
}

func (l *recordingLimiter) Observe(o pace.Outcome) (float64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.observed = append(l.observed, o)
	return 0, false
}

func (l *recordingLimiter) Rate() float64 { return 0 }

// scriptedBase is a base transport that issues tokens tok-1, tok-2, ... and
// answers GraphQL attempt n (1-based) with reply(n, request).
type scriptedBase struct {
	mu     sync.Mutex
	tokens int
	seen   []string // per GraphQL attempt: Authorization header, then body
	reply  func(n int, r *http.Request) (*http.Response, error)
}

func (b *scriptedBase) RoundTrip(r *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	if strings.HasSuffix(r.URL.Path, "/token") {
		b.tokens++
		n := b.tokens
		b.mu.Unlock()
		return canned(200, fmt.Sprintf(`{"token_type":"Bearer","expires_in":3599,"access_token":"tok-%d"}`, n), nil), nil
	}
	b.seen = append(b.seen, r.Header.Get("Authorization")+" "+string(body))
	n := len(b.seen)
	b.mu.Unlock()
	return b.reply(n, r)
}

// canned is a reply of status with body and header.
func canned(status int, body string, header http.Header) *http.Response {
	if header == nil {
		header = http.Header{}
	}
	return &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Header: header, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}
}

// composed is a Client over base, as New builds it, with lim as its rate:
// 3 attempts a call, 200 ms each, a millisecond's backoff, replies of at
// most 80 bytes.
func composed(t *testing.T, base http.RoundTripper, lim RateLimiter, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{Endpoint: "http://127.0.0.1/graphql", TokenURL: "http://127.0.0.1/t/oauth2/v2.0/token",
		ClientID: "cid", ClientSecret: testSecret, Scope: "api://a/.default", Transport: base, RateLimiter: lim,
		MaxAttempts: 3, CallTimeout: 200 * time.Millisecond, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond, MaxResponseBytes: 80}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestCallComposes makes one call through the client and its layers: a
// 429 (retried after its Retry-After), a 401 (token renewed, retried at
// once), then a 200 with GraphQL errors, and checks what each part did.
func TestCallComposes(t *testing.T) {
	base := &scriptedBase{reply: func(n int, r *http.Request) (*http.Response, error) {
		switch n {
		case 1:
			return canned(429, `{}`, http.Header{"Retry-After": {"0"}}), nil
		case 2:
			return canned(401, ``, nil), nil
		}
		return canned(200, `{"data":null,"errors":[{"message":"m","extensions":{"code":"C"}}]}`, nil), nil
	}}
	lim := &recordingLimiter{}
	c := composed(t, base, lim, nil)
	_, call, err := c.Create(context.Background(), testInput(), nil)
	// The loop: three attempts, the same request each time; the
	// authLayer: the token, renewed after the 401.
	if len(base.seen) != 3 {
		t.Fatalf("the service saw %d attempts, want 3", len(base.seen))
	}
	body := strings.TrimPrefix(base.seen[0], "Bearer tok-1 ")
	want := []string{"Bearer tok-1 " + body, "Bearer tok-1 " + body, "Bearer tok-2 " + body}
	if fmt.Sprint(base.seen) != fmt.Sprint(want) || !strings.Contains(body, `"variables":{"input":{`) {
		t.Errorf("the service saw %q, want %q with the lead's variables", base.seen, want)
	}
	// classify: the GraphQL errors of the 2xx, with their code.
	var ce *CallError
	if !errors.As(err, &ce) || call.Attempts != 3 || len(ce.Errors) != 1 || ce.Code != "C" {
		t.Errorf("Create() = %v after %d attempts, want the GraphQL error with code C after 3", err, call.Attempts)
	}
	// Pacing: a wait before each attempt, each outcome observed.
	var statuses []int
	for _, o := range lim.observed {
		statuses = append(statuses, o.Status)
	}
	if lim.waits != 3 || fmt.Sprint(statuses) != "[429 401 200]" {
		t.Errorf("limiter: %d waits, observed %v, want 3 and [429 401 200]", lim.waits, statuses)
	}
	// Stats.
	st := c.Stats()
	if st.Attempts != 3 || st.Retries != 2 || st.Status429 != 1 || st.Status401 != 1 || st.CreateLead.GraphQLError != 1 || st.Answered != 1 {
		t.Errorf("stats: %+v, want 3 attempts, 2 retries, one 429, one 401, one GraphQL error answered", st)
	}
}

// TestAttemptBounds: the deadline and body limit layers bound each
// attempt, and the outcome of each is classified once.
func TestAttemptBounds(t *testing.T) {
	// Parallel: a scripted transport, no service; the timeouts are the
	// test's own (200 ms against a reply that never comes), no healthy
	// call must meet them.
	t.Parallel()
	tests := []struct {
		name         string
		reply        func(n int, r *http.Request) (*http.Response, error)
		wantMsg      string
		wantAttempts int
	}{
		{"reply over the body cap is not retried", func(n int, r *http.Request) (*http.Response, error) {
			return canned(200, `{"data":"`+strings.Repeat("x", 100)+`"}`, nil), nil
		}, "reply body larger than 80 bytes (HTTP 200 OK)", 1},
		{"over the cap with no length announced", func(n int, r *http.Request) (*http.Response, error) {
			resp := canned(200, `{"data":"`+strings.Repeat("x", 100)+`"}`, nil)
			resp.ContentLength = -1
			return resp, nil
		}, "reply body larger than 80 bytes (HTTP 200 OK)", 1},
		{"no reply within the call timeout is retried", func(n int, r *http.Request) (*http.Response, error) {
			select {
			case <-r.Context().Done():
				return nil, r.Context().Err()
			case <-time.After(time.Second): // without a deadline
				return nil, errors.New("gave up waiting")
			}
		}, "send request: no reply within 200ms", 3},
		{"a reply's body cut off by the call timeout is retried", func(n int, r *http.Request) (*http.Response, error) {
			resp := canned(200, ``, nil)
			resp.Body = io.NopCloser(ctxReader{r.Context()})
			return resp, nil
		}, "read reply: no reply within 200ms", 3},
		{"a network failure is retried", func(n int, r *http.Request) (*http.Response, error) {
			return nil, errors.New("connection reset")
		}, "send request: connection reset", 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := composed(t, &scriptedBase{reply: tc.reply}, &recordingLimiter{}, nil)
			_, call, err := c.Create(context.Background(), testInput(), nil)
			var ce *CallError
			if !errors.As(err, &ce) || !strings.Contains(ce.Message, tc.wantMsg) || call.Attempts != tc.wantAttempts || ce.Attempts != tc.wantAttempts {
				t.Errorf("Create() = %v after %d attempts, want a CallError saying %q after %d", err, call.Attempts, tc.wantMsg, tc.wantAttempts)
			}
		})
	}
}

// ctxReader blocks each read until its context ends, and fails with the
// context's error.
type ctxReader struct{ ctx context.Context }

func (r ctxReader) Read([]byte) (int, error) {
	<-r.ctx.Done()
	return 0, r.ctx.Err()
}

// TestAttemptTraces: the attempt's one trace tells the service's latency
// (the request written to the reply's first byte, on the client's clock)
// to the limiters, not the wall time around the attempt, and whether the
// request was written before a failure (then the attempt is ambiguous);
// nothing measured is 0, and the limiters then take the wall time.
func TestAttemptTraces(t *testing.T) {
	failed := errors.New("connection reset")
	tests := []struct {
		name        string
		write, read bool // the base transport writes the request, reads a first byte
		err         error
		want        time.Duration
	}{
		{"reply", true, true, nil, 25 * time.Millisecond},
		{"lost after the first byte", true, true, failed, 25 * time.Millisecond},
		{"lost after the request was written", true, false, failed, 1025 * time.Millisecond},
		{"never written", false, false, failed, 1025 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			clock := time.Unix(1000, 0)
			now := func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				return clock
			}
			advance := func(d time.Duration) {
				mu.Lock()
				clock = clock.Add(d)
				mu.Unlock()
			}
			base := &scriptedBase{reply: func(n int, r *http.Request) (*http.Response, error) {
				trace := httptrace.ContextClientTrace(r.Context())
				if tc.write {
					trace.WroteRequest(httptrace.WroteRequestInfo{})
				}
				advance(25 * time.Millisecond)
				if tc.read {
					trace.GotFirstResponseByte()
				}
				advance(time.Second) // the client's own work: not the service's
				if tc.err != nil {
					return nil, tc.err
				}
				return canned(200, `{"data":{"createLead":{"id":"L1","resultCode":1014}}}`, nil), nil
			}}
			lim := &recordingLimiter{}
			c := composed(t, base, lim, func(cfg *Config) { cfg.MaxAttempts, cfg.Now, cfg.MaxResponseBytes = 1, now, 1<<10 })
			_, call, err := c.Create(context.Background(), testInput(), nil)
			if (err == nil) != (tc.err == nil) {
				t.Fatalf("Create() = %v", err)
			}
			if len(lim.observed) != 1 || lim.observed[0].Latency != tc.want || lim.observed[0].Op != "createLead" {
				t.Errorf("the rate observed %+v, want one outcome of createLead with latency %v", lim.observed, tc.want)
			}
			if err != nil && call.Ambiguous != tc.write {
				t.Errorf("a failure %v: ambiguous %v, want %v", err, call.Ambiguous, tc.write)
			}
		})
	}
}

// TestReadUpTo: a reply is read whole up to the cap (one byte past it
// tells a reply over the cap), whatever its announced length says: exact,
// unknown, shorter or longer than the body, or none.
func TestReadUpTo(t *testing.T) {
	body := strings.Repeat("x", 700)
	for _, tc := range []struct {
		name      string
		body      string
		n, size   int64
		want      int
		wantError bool
	}{
		{"exact length", body, 1001, 700, 700, false},
		{"unknown length", body, 1001, -1, 700, false},
		{"length says less", body, 1001, 10, 700, false},
		{"length says more", body, 1001, 900, 700, false},
		{"empty", "", 1001, 0, 0, false},
		{"over the cap", body, 101, 700, 101, false},
		{"over the cap, unknown length", body, 101, -1, 101, false},
		{"read fails", body, 1001, 700, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(tc.body)
			if tc.wantError {
				r = errReader{errors.New("connection reset")}
			}
			b, err := readUpTo(r, tc.n, tc.size)
			if (err != nil) != tc.wantError || len(b) != tc.want || (!tc.wantError && string(b) != tc.body[:tc.want]) {
				t.Errorf("readUpTo(%d bytes, %d, %d) = %d bytes, %v; want %d bytes, error %v", len(tc.body), tc.n, tc.size, len(b), err, tc.want, tc.wantError)
			}
		})
	}
}

// TestReplyDecodedOnce: the capture reads the reply whole for the client,
// which decodes it (classify), and hands the library an empty object.
func TestReplyDecodedOnce(t *testing.T) {
	const body = `{"data":{"createLead":{"id":"L-1","resultCode":1013}}}`
	x := &capture{next: roundTripFunc(func(*http.Request) (*http.Response, error) { return canned(200, body, nil), nil }), maxBody: 1 << 10, now: time.Now}
	x.start()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://127.0.0.1/graphql", strings.NewReader(`{"query":"q"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := x.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != `{}` || resp.StatusCode != 200 {
		t.Errorf("the library reads %d %q, want 200 {}", resp.StatusCode, b)
	}
	if !x.reached || string(x.r.body) != body || x.r.status != 200 {
		t.Errorf("the capture kept %d %q (reached %v), want the service's 200 and body", x.r.status, x.r.body, x.reached)
	}
	base := &scriptedBase{reply: func(int, *http.Request) (*http.Response, error) { return canned(200, body, nil), nil }}
	c := composed(t, base, &recordingLimiter{}, nil)
	if res, _, err := c.Create(context.Background(), testInput(), nil); err != nil || res.ID != "L-1" || res.ResultCode != 1013 {
		t.Errorf("Create() = %+v, %v, want lead L-1, 1013", res, err)
	}
}

// TestLayersOnlyWrap: every layer hands up the reply it got as a reply,
// whatever its status (never an error for a reply it obtained), with its
// header and its whole body; the bodyLimitLayer fails only the read past
// its cap, the deadlineLayer only a read past its deadline, and its
// deadline holds until the body is closed.
func TestLayersOnlyWrap(t *testing.T) {
	const body = `{"errors":[{"message":"busy"}]}`
	inner := roundTripFunc(func(*http.Request) (*http.Response, error) {
		return canned(503, body, http.Header{"Retry-After": {"7"}}), nil
	})
	c := composed(t, &scriptedBase{}, &recordingLimiter{}, nil)
	layers := map[string]http.RoundTripper{
		"auth":       &authLayer{next: inner, tokens: c.tokens, bearer: &c.bearer},
		"deadline":   &deadlineLayer{next: inner, timeout: time.Minute},
		"body limit": &bodyLimitLayer{next: inner, max: 1 << 10},
	}
	for name, l := range layers {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://127.0.0.1/graphql", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := l.RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip() = %v, want the 503 as a reply", err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || string(b) != body || resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "7" {
				t.Errorf("reply %d %q (Retry-After %q), read error %v; want the 503 whole", resp.StatusCode, b, resp.Header.Get("Retry-After"), err)
			}
		})
	}
	t.Run("body limit past the cap", func(t *testing.T) {
		resp, err := (&bodyLimitLayer{next: inner, max: 10}).RoundTrip(&http.Request{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		var big *bodyTooLargeError
		if !errors.As(err, &big) || string(b) != body[:10] || big.status != 503 {
			t.Errorf("read %q, %v; want 10 bytes, then a bodyTooLargeError of the 503", b, err)
		}
	})
	t.Run("deadline over the body", func(t *testing.T) {
		slow := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp := canned(200, ``, nil)
			resp.Body = io.NopCloser(io.MultiReader(strings.NewReader("{"), ctxReader{r.Context()}))
			return resp, nil
		})
		resp, err := (&deadlineLayer{next: slow, timeout: 20 * time.Millisecond}).RoundTrip(&http.Request{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		var de *deadlineError
		if !errors.As(err, &de) || de.timeout != 20*time.Millisecond || !bytes.Equal(b, []byte("{")) {
			t.Errorf("read %q, %v; want the first byte, then a deadlineError of 20ms", b, err)
		}
	})
}

// staticTokens is a token source of one token per Invalidate: tok-1, then
// tok-2 once tok-1 is dropped, ...
type staticTokens struct {
	mu          sync.Mutex
	n           int
	invalidated []string
}

func (s *staticTokens) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("tok-%d", s.n+1), nil
}

func (s *staticTokens) Invalidate(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.invalidated = append(s.invalidated, tok)
	s.n++
}

func (s *staticTokens) Fetch(ctx context.Context) (token.Info, error) {
	return token.Info{Opaque: true}, nil
}

func (s *staticTokens) Fetches() int64 { return 7 }

// recordingLimit is a limit on calls in flight that lets everything
// through and keeps the outcomes it was given back.
type recordingLimit struct {
	mu       sync.Mutex
	acquired int
	released []pace.Outcome
}

func (l *recordingLimit) Acquire(ctx context.Context) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acquired++
	return int64(l.acquired), ctx.Err()
}

func (l *recordingLimit) Release(ticket int64, o pace.Outcome, learn bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.released = append(l.released, o)
}

func (l *recordingLimit) Limits() (int, int) { return 3, 0 }

func (l *recordingLimit) Snapshot() pace.ConcurrencySnapshot {
	return pace.ConcurrencySnapshot{Limit: 3}
}

// TestInjectedSources: a Client sends with the token source and the
// limiters it is given (Config.Tokens, RateLimiter, ConcurrencyLimiter):
// the token it hands out, dropped after a 401 and asked again; a place and
// a turn for each attempt, given back with its outcome; and its figures in
// Stats. No token request reaches the token endpoint.
func TestInjectedSources(t *testing.T) {
	base := &scriptedBase{reply: func(n int, r *http.Request) (*http.Response, error) {
		if n == 1 {
			return canned(401, ``, nil), nil
		}
		return canned(200, `{"data":{"createLead":{"id":"L-1","resultCode":1013}}}`, nil), nil
	}}
	tokens, rate, limit := &staticTokens{}, &recordingLimiter{}, &recordingLimit{}
	c := composed(t, base, rate, func(cfg *Config) { cfg.Tokens, cfg.ConcurrencyLimiter = tokens, limit })
	if res, call, err := c.Create(context.Background(), testInput(), nil); err != nil || res.ID != "L-1" || call.Attempts != 2 {
		t.Fatalf("Create() = %+v after %d attempts, %v; want L-1 after 2", res, call.Attempts, err)
	}
	if len(base.seen) != 2 || !strings.HasPrefix(base.seen[0], "Bearer tok-1 ") || !strings.HasPrefix(base.seen[1], "Bearer tok-2 ") || fmt.Sprint(tokens.invalidated) != "[tok-1]" {
		t.Errorf("the service saw %q, the source dropped %v; want tok-1, dropped after the 401, then tok-2", base.seen, tokens.invalidated)
	}
	if base.tokens != 0 {
		t.Errorf("%d token requests, want none: the source is the one given", base.tokens)
	}
	var statuses []int
	for _, o := range limit.released {
		statuses = append(statuses, o.Status)
	}
	if limit.acquired != 2 || fmt.Sprint(statuses) != "[401 200]" || rate.waits != 2 || len(rate.observed) != 2 {
		t.Errorf("limit: %d places, given back with %v; rate: %d waits, %d observed; want 2, [401 200], 2, 2", limit.acquired, statuses, rate.waits, len(rate.observed))
	}
	st := c.Stats()
	if st.TokensFetched != 7 || st.Concurrency.Limit != 3 || st.Auto {
		t.Errorf("Stats: %d tokens fetched, limit %d, auto %v; want the source's 7 and the limit's 3, not auto", st.TokensFetched, st.Concurrency.Limit, st.Auto)
	}
	if info, err := c.CheckAuth(context.Background()); err != nil || !info.Opaque {
		t.Errorf("CheckAuth() = %+v, %v; want the source's Fetch", info, err)
	}
}
