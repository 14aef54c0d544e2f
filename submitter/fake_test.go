package submitter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkload/bulkload/internal/fakeclock"
	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/token"
)

// Values that must never appear in logs or errors.
const (
	testSSN    = "123456789"
	testDOB    = "1980-02-29"
	testSecret = "fake-test-secret-value"
)

// fakeService is a scripted token endpoint and GraphQL endpoint for the
// cases the simulator does not script: odd bodies, exact status sequences.
type fakeService struct {
	t             *testing.T
	tokens        atomic.Int64 // tokens issued
	tokenRequests atomic.Int64 // valid token requests
	calls         atomic.Int64 // GraphQL requests
	// token answers token request number n (1-based); nil = a valid token.
	token func(n int64, w http.ResponseWriter, r *http.Request) bool
	// graphql answers GraphQL request number n (1-based).
	graphql func(n int64, w http.ResponseWriter, r *http.Request, auth string)

	mu       sync.Mutex
	lastAuth []string
}

func (f *fakeService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/tenant/oauth2/v2.0/token":
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", 400)
			return
		}
		if _, _, ok := r.BasicAuth(); ok {
			f.t.Errorf("token request used HTTP basic auth, want credentials in the form body")
		}
		if r.PostForm.Get("client_secret") != testSecret || r.PostForm.Get("grant_type") != "client_credentials" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			io.WriteString(w, `{"error":"invalid_client","error_description":"bad secret"}`)
			return
		}
		n := f.tokenRequests.Add(1)
		if f.token != nil && f.token(n, w, r) {
			return
		}
		n = f.tokens.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"token_type":"Bearer","expires_in":3599,"access_token":"tok-%d"}`, n)
	case "/graphql":
		n := f.calls.Add(1)
		auth := r.Header.Get("Authorization")
		body, _ := io.ReadAll(r.Body) // read whole, as a service does; graphql may read it again
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.graphql(n, w, r, auth)
	default:
		http.NotFound(w, r)
	}
}

const okCreate = `{"data":{"createLead":{"id":"L1","resultCode":1014,"note":"qualified","partnerLeadId":"p1","bidValue":"$20.00"}}}`

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func testInput() lead.Input {
	yes := true
	return lead.Input{FirstName: "Ann", DateOfBirth: testDOB, SocialSecurityNumber: testSSN, LeadID: "p1", TermsConsent: &yes}
}

// newFakeClient starts f and returns a Client configured against it, with
// tiny backoffs, logging at debug level into logs.
func newFakeClient(t *testing.T, f *fakeService, mod func(*Config)) (*Client, *bytes.Buffer) {
	t.Helper()
	f.t = t
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	logs := &bytes.Buffer{}
	cfg := Config{
		Endpoint:     srv.URL + "/graphql",
		TokenURL:     token.URL(srv.URL, "tenant"),
		ClientID:     "cid",
		ClientSecret: testSecret,
		Scope:        "api://app/.default",
		BackoffBase:  time.Millisecond,
		BackoffMax:   5 * time.Millisecond,
		CallTimeout:  2 * time.Second,
		Logger:       slog.New(slog.NewJSONHandler(&lockedWriter{w: logs}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if mod != nil {
		mod(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	return c, logs
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// assertNoSecrets fails if any sensitive value appears in s.
func assertNoSecrets(t *testing.T, what, s string, extra ...string) {
	t.Helper()
	for _, v := range append([]string{testSSN, testDOB, testSecret, "Bearer "}, extra...) {
		if strings.Contains(s, v) {
			t.Errorf("%s contains %q: %s", what, v, s)
		}
	}
}

func TestFakeReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		maxAttempts   int
		reply         func(n int64, w http.ResponseWriter)
		wantErr       bool
		wantStatus    int
		wantCode      string
		wantMsg       string // substring of Error()
		wantAttempts  int
		wantRetryable bool
		wantErrors    int // GraphQL errors kept
	}{
		{name: "success", reply: func(n int64, w http.ResponseWriter) { writeJSON(w, 200, okCreate) }, wantAttempts: 1},
		{name: "graphql errors in a 200 are kept, all of them, not retried",
			reply: func(n int64, w http.ResponseWriter) {
				writeJSON(w, 200, `{"errors":[{"message":"first `+testSSN+`","extensions":{"code":"BAD_INPUT"}},{"message":"second","extensions":{"code":"OTHER"}}],"data":null}`)
			},
			wantErr: true, wantStatus: 200, wantCode: "BAD_INPUT", wantMsg: "GraphQL error [BAD_INPUT] first [REDACTED]; [OTHER] second", wantAttempts: 1, wantErrors: 2},
		{name: "200 with neither data nor errors fails",
			reply:   func(n int64, w http.ResponseWriter) { writeJSON(w, 200, `{}`) },
			wantErr: true, wantStatus: 200, wantMsg: "no createLead result and no errors", wantAttempts: 1},
		{name: "200 with null createLead fails",
			reply:   func(n int64, w http.ResponseWriter) { writeJSON(w, 200, `{"data":{"createLead":null}}`) },
			wantErr: true, wantStatus: 200, wantMsg: "no createLead result", wantAttempts: 1},
		{name: "200 that is not JSON fails",
			reply:   func(n int64, w http.ResponseWriter) { writeJSON(w, 200, `<html>proxy</html>`) },
			wantErr: true, wantStatus: 200, wantMsg: "not GraphQL JSON", wantAttempts: 1},
		{name: "body over the cap fails",
			reply: func(n int64, w http.ResponseWriter) {
				writeJSON(w, 200, `{"data":{"createLead":{"note":"`+strings.Repeat("x", 5000)+`"}}}`)
			},
			wantErr: true, wantStatus: 200, wantMsg: "larger than 4096 bytes", wantAttempts: 1},
		{name: "500 is not retried",
			reply:   func(n int64, w http.ResponseWriter) { writeJSON(w, 500, `{}`) },
			wantErr: true, wantStatus: 500, wantMsg: "createLead: HTTP 500 Internal Server Error after 1 attempt", wantAttempts: 1},
		{name: "400 with graphql errors keeps the code",
			reply: func(n int64, w http.ResponseWriter) {
				writeJSON(w, 400, `{"errors":[{"message":"bad","extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}`)
			},
			wantErr: true, wantStatus: 400, wantCode: "GRAPHQL_VALIDATION_FAILED", wantMsg: "HTTP 400 Bad Request after 1 attempt: [GRAPHQL_VALIDATION_FAILED] bad", wantAttempts: 1, wantErrors: 1},
		{name: "502 with an empty JSON body is retried, then succeeds",
			reply: func(n int64, w http.ResponseWriter) {
				if n < 3 {
					writeJSON(w, 502, `{}`)
					return
				}
				writeJSON(w, 200, okCreate)
			},
			wantAttempts: 3},
		{name: "429 retried up to 4 times max attempts", maxAttempts: 2,
			reply:   func(n int64, w http.ResponseWriter) { writeJSON(w, 429, `{"data":null}`) },
			wantErr: true, wantStatus: 429, wantMsg: "HTTP 429 Too Many Requests after 8 attempts", wantAttempts: 8, wantRetryable: true},
		{name: "429s do not use up max attempts", maxAttempts: 2,
			reply: func(n int64, w http.ResponseWriter) {
				if n <= 4 {
					writeJSON(w, 429, `{}`)
					return
				}
				writeJSON(w, 200, okCreate)
			},
			wantAttempts: 5},
		{name: "429s and 503s together", maxAttempts: 3,
			reply: func(n int64, w http.ResponseWriter) {
				if n%2 == 1 {
					writeJSON(w, 429, `{}`)
					return
				}
				writeJSON(w, 503, `{}`)
			},
			wantErr: true, wantStatus: 503, wantMsg: "HTTP 503 Service Unavailable after 6 attempts", wantAttempts: 6, wantRetryable: true},
		{name: "503 then success", reply: func(n int64, w http.ResponseWriter) {
			if n == 1 {
				writeJSON(w, 503, `not json`)
				return
			}
			writeJSON(w, 200, okCreate)
		}, wantAttempts: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeService{graphql: func(n int64, w http.ResponseWriter, r *http.Request, auth string) { tc.reply(n, w) }}
			c, logs := newFakeClient(t, f, func(cfg *Config) {
				cfg.MaxResponseBytes = 4096
				cfg.MaxAttempts = tc.maxAttempts
				cfg.Rate = 1000 // a 429 halves it: still fast
			})
			res, call, err := c.Create(context.Background(), testInput(), nil)
			if call.Attempts != tc.wantAttempts {
				t.Errorf("Create() attempts = %d, want %d", call.Attempts, tc.wantAttempts)
			}
			if !tc.wantErr {
				if err != nil || res.ID != "L1" || res.ResultCode != 1014 || res.BidValue == nil || *res.BidValue != "$20.00" {
					t.Fatalf("Create() = %+v, %v, want L1/1014/$20.00", res, err)
				}
				return
			}
			var ce *CallError
			if !errors.As(err, &ce) {
				t.Fatalf("Create() error = %v (%T), want *CallError", err, err)
			}
			if ce.Status != tc.wantStatus || ce.Code != tc.wantCode || ce.Retryable != tc.wantRetryable || len(ce.Errors) != tc.wantErrors || ce.Attempts != tc.wantAttempts {
				t.Errorf("Create() error = %+v, want status %d code %q retryable %v %d errors %d attempts",
					ce, tc.wantStatus, tc.wantCode, tc.wantRetryable, tc.wantErrors, tc.wantAttempts)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("Create() error = %q, want it to contain %q", err, tc.wantMsg)
			}
			if IsFatal(err) {
				t.Errorf("IsFatal(%v) = true, want false", err)
			}
			assertNoSecrets(t, "error", err.Error())
			assertNoSecrets(t, "logs", logs.String())
		})
	}
}

func TestFakeRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	var first time.Time
	var gap time.Duration
	f := &fakeService{graphql: func(n int64, w http.ResponseWriter, r *http.Request, auth string) {
		if n == 1 {
			first = time.Now()
			w.Header().Set("Retry-After", "1")
			writeJSON(w, 503, `{}`)
			return
		}
		gap = time.Since(first)
		writeJSON(w, 200, okCreate)
	}}
	c, _ := newFakeClient(t, f, nil)
	if _, call, err := c.Create(context.Background(), testInput(), nil); err != nil || call.Attempts != 2 {
		t.Fatalf("Create() = %v, %d attempts, want success after 2", err, call.Attempts)
	}
	if gap < time.Second {
		t.Errorf("second attempt came %v after a 503 with Retry-After: 1, want at least 1s", gap)
	}
}

func TestFake401RenewsTokenOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		unauthorized func(n int64) bool
		wantErr      bool
		wantTokens   int64
		wantAttempts int
	}{
		{"one 401 then success with a new token", func(n int64) bool { return n == 1 }, false, 2, 2},
		{"two 401s: a fresh token did not cure it, the run stops", func(n int64) bool { return true }, true, 2, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeService{}
			f.graphql = func(n int64, w http.ResponseWriter, r *http.Request, auth string) {
				if tc.unauthorized(n) {
					writeJSON(w, 401, `{"errors":[{"message":"Unauthorized","extensions":{"code":"UNAUTHENTICATED"}}]}`)
					return
				}
				if auth != "Bearer tok-2" {
					t.Errorf("retry after 401 sent %q, want the new token tok-2", auth)
				}
				writeJSON(w, 200, okCreate)
			}
			c, logs := newFakeClient(t, f, nil)
			_, call, err := c.Create(context.Background(), testInput(), nil)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Create() error = %v, want error %v", err, tc.wantErr)
			}
			var de *AccessError
			if tc.wantErr && (!errors.As(err, &de) || !IsFatal(err) || de.Status != 401 || de.Code != "UNAUTHENTICATED") {
				t.Errorf("Create() error = %#v, want an *AccessError (fatal) with status 401 and code UNAUTHENTICATED", err)
			}
			if got := f.tokens.Load(); got != tc.wantTokens {
				t.Errorf("tokens issued = %d, want %d", got, tc.wantTokens)
			}
			if call.Attempts != tc.wantAttempts {
				t.Errorf("attempts = %d, want %d", call.Attempts, tc.wantAttempts)
			}
			assertNoSecrets(t, "logs", logs.String(), "tok-1", "tok-2")
		})
	}
}

func TestFakeConcurrent401sCauseOneFetch(t *testing.T) {
	t.Parallel()
	const workers = 50
	f := &fakeService{}
	f.graphql = func(n int64, w http.ResponseWriter, r *http.Request, auth string) {
		if auth == "Bearer tok-1" {
			writeJSON(w, 401, `{"errors":[{"message":"Unauthorized","extensions":{"code":"UNAUTHENTICATED"}}]}`)
			return
		}
		writeJSON(w, 200, okCreate)
	}
	c, _ := newFakeClient(t, f, nil)
	// Fetch tok-1 first, so that every worker starts with it.
	if _, err := c.CheckAuth(context.Background()); err != nil {
		t.Fatalf("CheckAuth() = %v", err)
	}
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := c.Create(context.Background(), testInput(), nil); err != nil {
				failed.Add(1)
				t.Errorf("Create() = %v", err)
			}
		}()
	}
	wg.Wait()
	if got := f.tokens.Load(); got != 2 {
		t.Errorf("tokens issued for %d workers that saw the same 401 = %d, want 2 (initial + one renewal)", workers, got)
	}
	if s := c.Stats(); s.TokensFetched != 2 || s.Status401 < 1 {
		t.Errorf("Stats() = %+v, want TokensFetched 2 and Status401 >= 1", s)
	}
}

func TestFakeTokenEndpoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		secret     string
		tokenURL   string
		token      func(n int64, w http.ResponseWriter, r *http.Request) bool
		wantFatal  bool
		wantErr    bool
		wantCheck  token.Check // of the AuthError, when fatal
		wantIssued int64
	}{
		{name: "wrong secret is fatal with its hint", secret: "wrong-" + testSecret, wantFatal: true, wantErr: true, wantCheck: token.CheckClient},
		{name: "404 token URL is fatal", tokenURL: "/nope/oauth2/v2.0/token", wantFatal: true, wantErr: true, wantCheck: token.CheckTokenURL},
		{name: "invalid_scope is fatal", token: func(n int64, w http.ResponseWriter, r *http.Request) bool {
			writeJSON(w, 400, `{"error":"invalid_scope"}`)
			return true
		}, wantFatal: true, wantErr: true, wantCheck: token.CheckScope},
		{name: "unauthorized_client is fatal", token: func(n int64, w http.ResponseWriter, r *http.Request) bool {
			writeJSON(w, 400, `{"error":"unauthorized_client"}`)
			return true
		}, wantFatal: true, wantErr: true, wantCheck: ""},
		{name: "503s are retried", token: func(n int64, w http.ResponseWriter, r *http.Request) bool {
			if n <= 2 {
				writeJSON(w, 503, `{}`)
				return true
			}
			return false
		}, wantIssued: 1},
		{name: "503s beyond the retries fail the call, not the run", token: func(n int64, w http.ResponseWriter, r *http.Request) bool {
			writeJSON(w, 503, `upstream down`)
			return true
		}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeService{token: tc.token, graphql: func(n int64, w http.ResponseWriter, r *http.Request, auth string) {
				writeJSON(w, 200, okCreate)
			}}
			c, logs := newFakeClient(t, f, func(cfg *Config) {
				if tc.secret != "" {
					cfg.ClientSecret = tc.secret
				}
				if tc.tokenURL != "" {
					cfg.TokenURL = strings.Replace(cfg.TokenURL, "/tenant/oauth2/v2.0/token", tc.tokenURL, 1)
				}
				cfg.TokenRetries = 3
			})
			for i := 0; i < 3; i++ { // later calls fail fast with the same error
				_, _, err := c.Create(context.Background(), testInput(), nil)
				if (err != nil) != tc.wantErr || IsFatal(err) != tc.wantFatal {
					t.Fatalf("Create() #%d error = %v, want error %v fatal %v", i, err, tc.wantErr, tc.wantFatal)
				}
				if err == nil {
					continue
				}
				var ae *token.AuthError
				if tc.wantFatal && (!errors.As(err, &ae) || ae.Check != tc.wantCheck || ae.Hint == "" || !strings.Contains(err.Error(), ae.Hint)) {
					t.Errorf("Create() error = %q, want an AuthError checking %q with its hint", err, tc.wantCheck)
				}
				assertNoSecrets(t, "error", err.Error(), "wrong-")
			}
			if got := f.tokens.Load(); got != tc.wantIssued {
				t.Errorf("tokens issued = %d, want %d", got, tc.wantIssued)
			}
			if tc.wantFatal && f.calls.Load() != 0 {
				t.Errorf("GraphQL calls after refused credentials = %d, want 0", f.calls.Load())
			}
			assertNoSecrets(t, "logs", logs.String(), "wrong-")
		})
	}
}

func TestFakeWrongSecretFetchesOnceForManyWorkers(t *testing.T) {
	t.Parallel()
	var refused atomic.Int64
	f := &fakeService{graphql: func(n int64, w http.ResponseWriter, r *http.Request, auth string) { writeJSON(w, 200, okCreate) }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/token") {
			refused.Add(1)
			time.Sleep(50 * time.Millisecond) // let every worker queue up behind this fetch
		}
		f.ServeHTTP(w, r)
	}))
	defer srv.Close()
	f.t = t
	c, err := New(context.Background(), Config{Endpoint: srv.URL + "/graphql", TokenURL: token.URL(srv.URL, "tenant"),
		ClientID: "cid", ClientSecret: "wrong", Scope: "api://app/.default"})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := c.Create(context.Background(), testInput(), nil); !IsFatal(err) {
				t.Errorf("Create() = %v, want a fatal AuthError", err)
			}
		}()
	}
	wg.Wait()
	if got := refused.Load(); got != 1 {
		t.Errorf("token requests with a wrong secret from 20 workers = %d, want 1", got)
	}
}

func TestFakeTimeoutIsAmbiguous(t *testing.T) {
	t.Parallel()
	f := &fakeService{graphql: func(n int64, w http.ResponseWriter, r *http.Request, auth string) {
		if n == 1 {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
			return
		}
		writeJSON(w, 200, `{"data":{"createLead":{"id":"L2","resultCode":1002,"note":"duplicate","partnerLeadId":"p1","bidValue":null}}}`)
	}}
	c, _ := newFakeClient(t, f, func(cfg *Config) { cfg.CallTimeout = 200 * time.Millisecond })
	res, call, err := c.Create(context.Background(), testInput(), nil)
	if err != nil || res.ResultCode != 1002 {
		t.Fatalf("Create() = %+v, %v, want the duplicate answer 1002", res, err)
	}
	if call.Attempts != 2 || !call.Ambiguous {
		t.Errorf("Create() call = %+v, want 2 attempts, ambiguous", call)
	}
}

func TestFakeCancelledCall(t *testing.T) {
	t.Parallel()
	f := &fakeService{graphql: func(n int64, w http.ResponseWriter, r *http.Request, auth string) {
		writeJSON(w, 503, `{}`)
	}}
	c, _ := newFakeClient(t, f, func(cfg *Config) {
		cfg.BackoffBase, cfg.BackoffMax = time.Hour, time.Hour
		cfg.MaxRetryWait = 200 * time.Hour // the hour's backoff is waited, not deferred
		cfg.MaxAttempts = 100
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, _, err := c.Create(ctx, testInput(), nil)
	if !errors.Is(err, context.Canceled) || IsFatal(err) {
		t.Errorf("Create() after cancel = %v, want context.Canceled, not fatal", err)
	}
	if _, _, err := c.Create(ctx, testInput(), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Create() with a cancelled ctx = %v, want context.Canceled", err)
	}
}

func TestFakeSubmitSendsID(t *testing.T) {
	t.Parallel()
	f := &fakeService{}
	f.graphql = func(n int64, w http.ResponseWriter, r *http.Request, auth string) {
		writeJSON(w, 200, `{"data":{"submitLead":{"id":"L1","resultCode":1014,"note":"submitted"}}}`)
	}
	var body []byte
	c, _ := newFakeClient(t, f, func(cfg *Config) {
		cfg.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if strings.HasSuffix(r.URL.Path, "/graphql") {
				body, _ = io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			return http.DefaultTransport.RoundTrip(r)
		})
	})
	res, call, err := c.Submit(context.Background(), "L1", nil)
	if err != nil || res.ID != "L1" || call.Attempts != 1 {
		t.Fatalf("Submit() = %+v, %+v, %v, want L1 in 1 attempt", res, call, err)
	}
	var sent struct {
		Query     string
		Variables map[string]string
	}
	if err := json.Unmarshal(body, &sent); err != nil || sent.Query != DefaultSubmitDocument || sent.Variables["id"] != "L1" {
		t.Errorf("Submit() sent %s, want the default document with id L1", body)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestNewValidates(t *testing.T) {
	t.Parallel()
	good := Config{Endpoint: "http://127.0.0.1/graphql", TokenURL: "http://127.0.0.1/t/oauth2/v2.0/token", ClientID: "c", ClientSecret: testSecret, Scope: "api://a/.default"}
	tests := []struct {
		name string
		mod  func(*Config)
		want string // substring of the error; "" = valid
	}{
		{"valid", func(*Config) {}, ""},
		{"no endpoint", func(c *Config) { c.Endpoint = "" }, "endpoint is required"},
		{"endpoint not a URL", func(c *Config) { c.Endpoint = "graphql" }, "not an http(s) URL"},
		{"no token URL", func(c *Config) { c.TokenURL = "" }, "token URL is required"},
		{"no secret", func(c *Config) { c.ClientSecret = "" }, "client secret is required"},
		{"no scope", func(c *Config) { c.Scope = "" }, "scope is required"},
		{"negative rate", func(c *Config) { c.Rate = -1 }, "rate -1 is negative"},
		{"http endpoint on a remote host", func(c *Config) { c.Endpoint = "http://leads.example.com/graphql" }, "set AllowInsecureHTTP to accept it"},
		{"http token URL on a remote host", func(c *Config) { c.TokenURL = "http://10.1.2.3/t/oauth2/v2.0/token" }, "unencrypted"},
		{"http on a name that starts like localhost", func(c *Config) { c.Endpoint = "http://localhost.evil.example/graphql" }, "unencrypted"},
		{"http on a name that starts like 127.0.0.1", func(c *Config) { c.Endpoint = "http://127.0.0.1.nip.io/graphql" }, "unencrypted"},
		{"http on 0.0.0.0", func(c *Config) { c.Endpoint = "http://0.0.0.0:8080/graphql" }, "unencrypted"},
		{"http on 127.0.0.0/8", func(c *Config) { c.Endpoint = "http://127.8.9.10:8080/graphql" }, ""},
		{"http on ::1", func(c *Config) { c.Endpoint = "http://[::1]:8080/graphql" }, ""},
		{"http on localhost", func(c *Config) { c.TokenURL = "http://LocalHost:9/t/oauth2/v2.0/token" }, ""},
		{"https on a remote host", func(c *Config) { c.Endpoint = "https://leads.example.com/graphql" }, ""},
		{"http on a remote host with AllowInsecureHTTP", func(c *Config) {
			c.Endpoint, c.TokenURL, c.AllowInsecureHTTP = "http://leads.example.com/graphql", "http://login.example.com/t", true
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.mod(&cfg)
			_, err := New(context.Background(), cfg)
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("New(%s) = %v, want error containing %q", tc.name, err, tc.want)
			}
			if err != nil {
				assertNoSecrets(t, "error", err.Error())
			}
		})
	}
}

func TestFakeTokenRenewedAheadOfExpiry(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC))
	var seen sync.Map // tokens the service saw
	f := &fakeService{graphql: func(n int64, w http.ResponseWriter, r *http.Request, auth string) {
		seen.Store(auth, true)
		writeJSON(w, 200, okCreate)
	}}
	c, _ := newFakeClient(t, f, func(cfg *Config) { cfg.Now = clk.Now })
	create := func() {
		t.Helper()
		if _, _, err := c.Create(context.Background(), testInput(), nil); err != nil {
			t.Fatalf("Create() = %v", err)
		}
	}
	waitTokens := func(want int64) {
		t.Helper()
		for i := 0; i < 200 && f.tokens.Load() < want; i++ {
			time.Sleep(5 * time.Millisecond)
		}
	}
	// The token lives 3599 s and is renewed 5 minutes (300 s) early.
	steps := []struct {
		name       string
		advance    time.Duration
		wantTokens int64
	}{
		{"first call fetches", 0, 1},
		{"cached long before expiry", 3000 * time.Second, 1},
		{"still cached just before the renewal point", 298 * time.Second, 1},
		{"renewed in the background after the renewal point", 2 * time.Second, 2},
		{"the renewed token is cached", 1000 * time.Second, 2},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			clk.Advance(st.advance)
			create()
			waitTokens(st.wantTokens)
			if got := f.tokens.Load(); got != st.wantTokens {
				t.Errorf("tokens issued = %d, want %d", got, st.wantTokens)
			}
		})
	}
	if _, ok := seen.Load("Bearer tok-2"); !ok {
		t.Errorf("the renewed token tok-2 was never sent")
	}
}

func TestFakeWaiterStopsWaitingFetchGoesOn(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	f := &fakeService{
		token: func(n int64, w http.ResponseWriter, r *http.Request) bool {
			<-release
			return false
		},
		graphql: func(n int64, w http.ResponseWriter, r *http.Request, auth string) { writeJSON(w, 200, okCreate) },
	}
	c, _ := newFakeClient(t, f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _, err := c.Create(ctx, testInput(), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Create() with a 50ms deadline while the token fetch hangs = %v, want context.DeadlineExceeded", err)
	}
	close(release)
	if _, _, err := c.Create(context.Background(), testInput(), nil); err != nil {
		t.Fatalf("Create() after the fetch was released = %v", err)
	}
	if got := f.tokens.Load(); got != 1 {
		t.Errorf("tokens issued = %d, want 1 (the first waiter's fetch went on and was shared)", got)
	}
}
