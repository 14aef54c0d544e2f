package submitter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingLimiter is a limiter that lets everything through and keeps
// what it was told.
type recordingLimiter struct {
	mu       sync.Mutex
	waits    int
	observed []attemptOutcome
}

func (l *recordingLimiter) Wait(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waits++
	return ctx.Err()
}

func (l *recordingLimiter) Observe(o attemptOutcome) (float64, bool) {
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
		return reply(200, fmt.Sprintf(`{"token_type":"Bearer","expires_in":3599,"access_token":"tok-%d"}`, n), nil), nil
	}
	b.seen = append(b.seen, r.Header.Get("Authorization")+" "+string(body))
	n := len(b.seen)
	b.mu.Unlock()
	return b.reply(n, r)
}

func reply(status int, body string, header http.Header) *http.Response {
	if header == nil {
		header = http.Header{}
	}
	return &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Header: header, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}
}

// composed builds the transport's layers over base with lim as the rate,
// the way New does, with the token cache of a Client on the same base.
func composed(t *testing.T, base http.RoundTripper, lim limiter, st *stats) http.RoundTripper {
	t.Helper()
	c, err := New(t.Context(), Config{Endpoint: "http://127.0.0.1/graphql", TokenURL: "http://127.0.0.1/t/oauth2/v2.0/token",
		ClientID: "cid", ClientSecret: testSecret, Scope: "api://a/.default", Transport: base})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	return newTransport(layers{base: base, tokens: c.tokens, rate: lim, stats: st, log: slog.New(slog.DiscardHandler), now: time.Now,
		maxAttempts: 3, callTimeout: 200 * time.Millisecond, backoffBase: time.Millisecond, backoffMax: time.Millisecond, maxBody: 80})
}

// send makes one call through rt, as Client.run does, and returns what
// the transport handed back.
func send(t *testing.T, rt http.RoundTripper) (*callOutcome, *http.Response, error) {
	t.Helper()
	h := &handOff{spec: callSpec{op: "test"}}
	ctx := withHandOff(t.Context(), h)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/graphql", strings.NewReader(`{"query":"q"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	return &h.out, resp, err
}

// TestLayersCompose sends one call through every layer: a 429 (retried
// after its Retry-After), a 401 (token renewed, retried at once), then a
// 200 with GraphQL errors, and checks what each layer did.
func TestLayersCompose(t *testing.T) {
	base := &scriptedBase{reply: func(n int, r *http.Request) (*http.Response, error) {
		switch n {
		case 1:
			return reply(429, `{}`, http.Header{"Retry-After": {"0"}}), nil
		case 2:
			return reply(401, ``, nil), nil
		}
		return reply(200, `{"data":{"x":1},"errors":[{"message":"m","extensions":{"code":"C"}}]}`, nil), nil
	}}
	lim, st := &recordingLimiter{}, &stats{}
	rec, resp, err := send(t, composed(t, base, lim, st))
	if err != nil {
		t.Fatalf("RoundTrip() = %v, want the 200", err)
	}
	if b, _ := io.ReadAll(resp.Body); !strings.Contains(string(b), `"x":1`) {
		t.Errorf("reply body = %q, want the service's", b)
	}
	// retryLayer: three attempts, the body rewound for each.
	want := []string{`Bearer tok-1 {"query":"q"}`, `Bearer tok-1 {"query":"q"}`, `Bearer tok-2 {"query":"q"}`}
	// authLayer: the token, renewed after the 401.
	if fmt.Sprint(base.seen) != fmt.Sprint(want) {
		t.Errorf("the service saw %q, want %q", base.seen, want)
	}
	// outcomeLayer: the GraphQL errors of the 2xx, with their code.
	if rec.attempts != 3 || len(rec.errs) != 1 || rec.errs[0].Code != "C" || rec.err != nil {
		t.Errorf("outcome = %+v, want 3 attempts, the GraphQL error with code C, no failure", rec)
	}
	// rateLayer: a wait before each attempt, each outcome observed.
	var statuses []int
	for _, o := range lim.observed {
		statuses = append(statuses, o.Status)
	}
	if lim.waits != 3 || fmt.Sprint(statuses) != "[429 401 200]" {
		t.Errorf("limiter: %d waits, observed %v, want 3 and [429 401 200]", lim.waits, statuses)
	}
	// statsLayer.
	if st.attempts.Load() != 3 || st.retries.Load() != 2 || st.status429.Load() != 1 || st.status401.Load() != 1 {
		t.Errorf("stats: %d attempts %d retries %d 429s %d 401s, want 3 2 1 1",
			st.attempts.Load(), st.retries.Load(), st.status429.Load(), st.status401.Load())
	}
}

// TestLayersAttemptBounds: the deadline and body limit layers bound each
// attempt, and the outcome of each is classified once.
func TestLayersAttemptBounds(t *testing.T) {
	tests := []struct {
		name         string
		reply        func(n int, r *http.Request) (*http.Response, error)
		wantMsg      string
		wantAttempts int
	}{
		{"reply over the body cap is not retried", func(n int, r *http.Request) (*http.Response, error) {
			return reply(200, `{"data":"`+strings.Repeat("x", 100)+`"}`, nil), nil
		}, "reply body larger than 80 bytes (HTTP 200 OK)", 1},
		{"no reply within the call timeout is retried", func(n int, r *http.Request) (*http.Response, error) {
			select {
			case <-r.Context().Done():
				return nil, r.Context().Err()
			case <-time.After(time.Second): // without a deadline
				return nil, errors.New("gave up waiting")
			}
		}, "no reply within 200ms", 3},
		{"a network failure is retried", func(n int, r *http.Request) (*http.Response, error) {
			return nil, errors.New("connection reset")
		}, "send request: connection reset", 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, _, err := send(t, composed(t, &scriptedBase{reply: tc.reply}, &recordingLimiter{}, &stats{}))
			var ce *CallError
			if !errors.As(err, &ce) || !strings.Contains(ce.Message, tc.wantMsg) || rec.attempts != tc.wantAttempts || rec.err != err {
				t.Errorf("RoundTrip() = %v after %d attempts, want a CallError, handed back too, saying %q after %d", err, rec.attempts, tc.wantMsg, tc.wantAttempts)
			}
		})
	}
}

// TestRateLayerTakesTheServiceLatency: the rateLayer observes the latency
// the deadlineLayer traced (the service's), carried up on the attempt's
// result, an *attemptError or a 2xx reply's replyBody, not its own wall
// time around the attempt; and the operation of the call.
func TestRateLayerTakesTheServiceLatency(t *testing.T) {
	tests := []struct {
		name string
		next roundTripFunc
		want time.Duration
	}{
		{"attempt error", func(*http.Request) (*http.Response, error) {
			return nil, &attemptError{kind: outcomeRetry, status: 429, latency: 7 * time.Millisecond}
		}, 7 * time.Millisecond},
		{"2xx reply", func(*http.Request) (*http.Response, error) {
			resp := reply(200, `{}`, nil)
			resp.Body = &replyBody{bufferedBody: bufferedBody{latency: 9 * time.Millisecond}}
			return resp, nil
		}, 9 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lim := &recordingLimiter{}
			clock := time.Unix(0, 0)
			l := &rateLayer{next: tc.next, lim: lim, log: slog.New(slog.DiscardHandler),
				now: func() time.Time { clock = clock.Add(time.Second); return clock }}
			ctx := withHandOff(t.Context(), &handOff{spec: callSpec{op: "submitLead"}})
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/graphql", nil)
			if err != nil {
				t.Fatal(err)
			}
			l.RoundTrip(req)
			if len(lim.observed) != 1 || lim.observed[0].Latency != tc.want || lim.observed[0].Op != "submitLead" {
				t.Errorf("observed %+v, want one outcome of submitLead with latency %v", lim.observed, tc.want)
			}
		})
	}
}

// TestDeadlineLayerTraces: the deadlineLayer's one trace tells the
// service's latency (the request written to the reply's first byte, on
// its clock) to the layers above, on the reply's body or the failure, and
// whether the request was written before a failure; nothing measured is 0.
func TestDeadlineLayerTraces(t *testing.T) {
	failed := errors.New("connection reset")
	tests := []struct {
		name        string
		write, read bool // the base transport writes the request, reads a first byte
		err         error
		want        time.Duration
	}{
		{"reply", true, true, nil, 25 * time.Millisecond},
		{"lost after the first byte", true, true, failed, 25 * time.Millisecond},
		{"lost after the request was written", true, false, failed, 0},
		{"never written", false, false, failed, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := time.Unix(1000, 0)
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				trace := httptrace.ContextClientTrace(r.Context())
				if tc.write {
					trace.WroteRequest(httptrace.WroteRequestInfo{})
				}
				clock = clock.Add(25 * time.Millisecond)
				if tc.read {
					trace.GotFirstResponseByte()
				}
				clock = clock.Add(time.Second) // the client's own work: not the service's
				if tc.err != nil {
					return nil, tc.err
				}
				return reply(200, `{"data":{}}`, nil), nil
			})
			l := &deadlineLayer{next: &bodyLimitLayer{next: base, max: 1 << 10}, timeout: time.Minute, now: func() time.Time { return clock }}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://127.0.0.1/graphql", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := l.RoundTrip(req)
			var got time.Duration
			var se *sendError
			switch {
			case errors.As(err, &se):
				got = se.latency
				if se.wrote != tc.write {
					t.Errorf("wrote = %v, want %v", se.wrote, tc.write)
				}
			case err == nil:
				got = resp.Body.(*bufferedBody).latency
			default:
				t.Fatalf("RoundTrip: %v", err)
			}
			if got != tc.want {
				t.Errorf("latency = %v, want %v", got, tc.want)
			}
			if ae := classifyFailure(err, Ambiguous503NotGraphQL); err != nil && (ae.latency != tc.want || ae.ambiguous != tc.write) {
				t.Errorf("attempt error: latency %v, ambiguous %v; want %v, %v", ae.latency, ae.ambiguous, tc.want, tc.write)
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

// TestReplyDecodedOnce: a call whose result the caller reads from its
// outcome (Client.call: createLead, submitLead, lead) hands the library an
// empty object, the reply having been decoded by the outcomeLayer; any
// other call (the preflight, which the library decodes for its caller)
// hands it the service's reply.
func TestReplyDecodedOnce(t *testing.T) {
	const body = `{"data":{"createLead":{"id":"L-1","resultCode":1013}}}`
	for _, decoded := range []bool{true, false} {
		t.Run(fmt.Sprint("decoded ", decoded), func(t *testing.T) {
			base := &scriptedBase{reply: func(int, *http.Request) (*http.Response, error) { return reply(200, body, nil), nil }}
			rt := composed(t, base, &recordingLimiter{}, &stats{})
			h := &handOff{spec: callSpec{op: "createLead", decoded: decoded}}
			req, err := http.NewRequestWithContext(withHandOff(t.Context(), h), http.MethodPost, "http://127.0.0.1/graphql", strings.NewReader(`{"query":"q"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			want := body
			if decoded {
				want = `{}`
			}
			if string(b) != want {
				t.Errorf("the library reads %q, want %q", b, want)
			}
			if r := h.out.result; r == nil || r.ID != "L-1" || r.ResultCode != 1013 {
				t.Errorf("outcome's result = %+v, want lead L-1, 1013", r)
			}
		})
	}
}
