package submitter

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/token"
)

// slowMachine is the call timeout of tests whose attempts must end by
// their own failure (a TLS handshake that fails), never by the timeout,
// even under -race on a busy machine.
const slowMachine = time.Minute

// quietTLSServer is an httptest TLS server with a certificate the client
// does not trust, whose handshake errors are not logged.
func quietTLSServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// otherEndpoint starts h as a lead endpoint of its own and returns its URL.
func otherEndpoint(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL + "/graphql"
}

func TestSimPreflightPasses(t *testing.T) {
	t.Parallel()
	env := startSim(t, leadsim.Options{}, nil)
	if err := env.c.Preflight(context.Background()); err != nil {
		t.Fatalf("Preflight() against leadsim = %v, want nil", err)
	}
	if st := env.c.Stats(); st.Attempts != 1 || st.TokensFetched != 1 {
		t.Errorf("Preflight() made %d attempts and fetched %d tokens, want 1 and 1", st.Attempts, st.TokensFetched)
	}
}

func TestSimPreflightUnreachable(t *testing.T) {
	t.Parallel()
	plain := otherEndpoint(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, `{"data":{"__typename":"Query"}}`) })
	untrusted := quietTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"data":{"__typename":"Query"}}`)
	}))
	tests := []struct {
		name     string
		endpoint string
		wantMsg  string
	}{
		{"refused connection", "http://127.0.0.1:1/graphql", "connection refused"},
		{"unknown host", "https://no-such-host.invalid/graphql", "no-such-host.invalid"},
		{"404", otherEndpoint(t, http.NotFound), "HTTP 404"},
		{"405", otherEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}), "HTTP 405"},
		{"500 without GraphQL errors", otherEndpoint(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 500, `{}`) }), "HTTP 500"},
		{"HTML page", otherEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>welcome</html>")
		}), "not GraphQL JSON"},
		{"JSON that is not GraphQL", otherEndpoint(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, `{"status":"ok"}`) }), "no data.__typename"},
		{"400 that is not GraphQL", otherEndpoint(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 400, `{"message":"bad"}`) }), "HTTP 400"},
		{"https to a plain-http server", strings.Replace(plain, "http://", "https://", 1), "TLS failed"},
		{"untrusted certificate", untrusted.URL + "/graphql", "certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := startSim(t, leadsim.Options{SigningKey: sharedKey(t)}, func(cfg *Config) {
				cfg.Endpoint = tc.endpoint
				cfg.CallTimeout = slowMachine // a TLS handshake under -race on a busy machine
			})
			err := env.c.Preflight(context.Background())
			if !IsUnreachable(err) {
				t.Fatalf("Preflight() = %v, want an error that IsUnreachable", err)
			}
			var ue *UnreachableError
			if !errors.As(err, &ue) || !ue.GraphQL {
				t.Errorf("Preflight() = %#v, want an *UnreachableError for the endpoint", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "endpoint: "+tc.endpoint) || !strings.Contains(msg, tc.wantMsg) {
				t.Errorf("Preflight() = %q, want it to name the endpoint %s and say %q", msg, tc.endpoint, tc.wantMsg)
			}
			if strings.Contains(msg, "deadline exceeded") {
				t.Errorf("Preflight() = %q, want the cause, not a deadline", msg)
			}
			if st := env.c.Stats(); st.Attempts != 1 {
				t.Errorf("Preflight() made %d attempts, want 1: an outage is not retried at preflight", st.Attempts)
			}
			assertNoSecrets(t, "error", msg, leadsim.DefaultClientSecret)
			assertNoSecrets(t, "logs", env.logs.String(), leadsim.DefaultClientSecret)
		})
	}
}

func TestSimPreflightReachable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		reply   func(w http.ResponseWriter)
		wantErr bool
	}{
		{"GraphQL errors in a 200 are a GraphQL answer", func(w http.ResponseWriter) {
			writeJSON(w, 200, `{"errors":[{"message":"no","extensions":{"code":"FORBIDDEN"}}],"data":null}`)
		}, false},
		{"403 is the service refusing, not an outage", func(w http.ResponseWriter) { writeJSON(w, 403, `{}`) }, true},
		{"401 twice is the service refusing the token", func(w http.ResponseWriter) { writeJSON(w, 401, ``) }, true},
		{"a 503 storm with the service's GraphQL errors is throttling", func(w http.ResponseWriter) {
			writeJSON(w, 503, `{"errors":[{"message":"slow down"}],"data":null}`)
		}, true},
		{"500 with GraphQL errors comes from the service", func(w http.ResponseWriter) {
			writeJSON(w, 500, `{"errors":[{"message":"internal"}]}`)
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ep := otherEndpoint(t, func(w http.ResponseWriter, r *http.Request) { tc.reply(w) })
			env := startSim(t, leadsim.Options{SigningKey: sharedKey(t)}, func(cfg *Config) {
				cfg.Endpoint = ep
				cfg.MaxAttempts = 2
			})
			err := env.c.Preflight(context.Background())
			if IsUnreachable(err) || (err != nil) != tc.wantErr {
				t.Fatalf("Preflight() = %v, want error %v and not IsUnreachable", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "endpoint "+ep) {
				t.Errorf("Preflight() = %q, want it to name the endpoint %s", err, ep)
			}
		})
	}
}

func TestSimPreflightTokenEndpoint(t *testing.T) {
	t.Parallel()
	var conns atomic.Int64
	untrusted := httptest.NewUnstartedServer(http.NotFoundHandler())
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0)
	untrusted.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	untrusted.StartTLS()
	t.Cleanup(untrusted.Close)
	tests := []struct {
		name, tokenURL, wantMsg string
	}{
		{"untrusted certificate", token.URL(untrusted.URL, "t"), "certificate"},
		{"refused connection", "http://127.0.0.1:1/t/oauth2/v2.0/token", "connection refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := startSim(t, leadsim.Options{SigningKey: sharedKey(t)}, func(cfg *Config) {
				cfg.TokenURL = tc.tokenURL
				cfg.TokenRetries = 2
				cfg.CallTimeout = slowMachine
			})
			err := env.c.Preflight(context.Background())
			var ue *UnreachableError
			if !errors.As(err, &ue) || ue.GraphQL {
				t.Fatalf("Preflight() = %v, want an *UnreachableError for the token endpoint", err)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.tokenURL) || !strings.Contains(msg, tc.wantMsg) || strings.Contains(msg, "deadline exceeded") {
				t.Errorf("Preflight() = %q, want it to name %s and say %q", msg, tc.tokenURL, tc.wantMsg)
			}
			assertNoSecrets(t, "error", err.Error(), leadsim.DefaultClientSecret)
			assertNoSecrets(t, "logs", env.logs.String(), leadsim.DefaultClientSecret)
		})
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("the token endpoint with an untrusted certificate got %d connections, want 1: TLS failures are not retried", n)
	}
}

// TestSimTLSFailureIsNotRetried: a certificate problem is reported as such,
// after one attempt, and counts as an outage.
func TestSimTLSFailureIsNotRetried(t *testing.T) {
	t.Parallel()
	untrusted := quietTLSServer(t, http.NotFoundHandler())
	env := startSim(t, leadsim.Options{SigningKey: sharedKey(t)}, func(cfg *Config) {
		cfg.Endpoint = untrusted.URL + "/graphql"
		cfg.CallTimeout = slowMachine
	})
	_, call, err := env.c.Create(context.Background(), simLead(1, true), nil)
	if call.Attempts != 1 || !IsOutage(err) || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("Create() against an untrusted certificate = %v after %d attempts, want one attempt, an outage naming the certificate", err, call.Attempts)
	}
}

// TestFakeOutageClassification: what the circuit breaker counts.
func TestFakeOutageClassification(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		reply      func(w http.ResponseWriter)
		wantOutage bool
	}{
		{"404", func(w http.ResponseWriter) { http.NotFound(w, nil) }, true},
		{"405", func(w http.ResponseWriter) { writeJSON(w, 405, ``) }, true},
		{"500 without body", func(w http.ResponseWriter) { writeJSON(w, 500, ``) }, true},
		{"502 HTML page", func(w http.ResponseWriter) { writeJSON(w, 502, `<html>bad gateway</html>`) }, true},
		{"504", func(w http.ResponseWriter) { writeJSON(w, 504, `{}`) }, true},
		{"200 HTML page", func(w http.ResponseWriter) { writeJSON(w, 200, `<html>login</html>`) }, true},
		{"503 is throttling", func(w http.ResponseWriter) { writeJSON(w, 503, ``) }, false},
		{"429 is throttling", func(w http.ResponseWriter) { writeJSON(w, 429, ``) }, false},
		{"GraphQL errors in a 200", func(w http.ResponseWriter) { writeJSON(w, 200, `{"errors":[{"message":"bad"}]}`) }, false},
		{"500 with GraphQL errors", func(w http.ResponseWriter) { writeJSON(w, 500, `{"errors":[{"message":"bad"}]}`) }, false},
		{"400", func(w http.ResponseWriter) { writeJSON(w, 400, `{}`) }, false},
		{"413", func(w http.ResponseWriter) { writeJSON(w, 413, ``) }, false},
		{"200 without the result", func(w http.ResponseWriter) { writeJSON(w, 200, `{"data":{}}`) }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeService{graphql: func(n int64, w http.ResponseWriter, r *http.Request, auth string) { tc.reply(w) }}
			c, _ := newFakeClient(t, f, func(cfg *Config) { cfg.MaxAttempts = 2 })
			_, _, err := c.Create(context.Background(), testInput(), nil)
			if err == nil {
				t.Fatalf("Create() = nil error, want one")
			}
			if got := IsOutage(err); got != tc.wantOutage {
				t.Errorf("IsOutage(%v) = %v, want %v", err, got, tc.wantOutage)
			}
		})
	}
	t.Run("refused connection", func(t *testing.T) {
		t.Parallel()
		f := &fakeService{}
		c, _ := newFakeClient(t, f, func(cfg *Config) { cfg.Endpoint = "http://127.0.0.1:1/graphql"; cfg.MaxAttempts = 2 })
		_, call, err := c.Create(context.Background(), testInput(), nil)
		if !IsOutage(err) || call.Attempts != 2 {
			t.Errorf("Create() = %v after %d attempts, want an outage after 2 (retried during a run)", err, call.Attempts)
		}
	})
	t.Run("interrupted is not an outage", func(t *testing.T) {
		t.Parallel()
		f := &fakeService{}
		c, _ := newFakeClient(t, f, func(cfg *Config) { cfg.Endpoint = "http://127.0.0.1:1/graphql" })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, _, err := c.Create(ctx, testInput(), nil); err == nil || IsOutage(err) {
			t.Errorf("Create() with a cancelled context = %v, want an error that is not an outage", err)
		}
	})
}

// sharedKey returns leadsim's committed test signing key: parsing it is fast
// where making a key takes seconds under -race on a busy machine.
func sharedKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	b, err := os.ReadFile("../leadsim/testdata/signing-key.pem")
	if err != nil {
		t.Fatalf("read test key: %v", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatal("../leadsim/testdata/signing-key.pem holds no PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatalf("parse test key: %v", err)
	}
	return k.(*rsa.PrivateKey)
}

// TestGatewayAnswer: only the lead endpoint answering 502, 503 or 504
// without GraphQL errors is a gateway's answer that Preflight asks again; a
// dead or wrong endpoint (no reply, 404, 500), the token endpoint and a
// GraphQL answer (a 503 with the service's errors included) are not.
func TestGatewayAnswer(t *testing.T) {
	ep := func(ce *CallError) error { return &UnreachableError{URL: "http://x/graphql", GraphQL: true, Err: ce} }
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"502", ep(&CallError{Op: "preflight", Status: 502, Outage: true}), 502},
		{"504", ep(&CallError{Op: "preflight", Status: 504, Outage: true}), 504},
		{"502 wrapped", fmt.Errorf("connect: %w", ep(&CallError{Status: 502})), 502},
		{"refused connection (no reply)", ep(&CallError{Status: 0, Outage: true, Message: "connection refused"}), 0},
		{"404", ep(&CallError{Status: 404}), 0},
		{"500", ep(&CallError{Status: 500}), 0},
		{"503", ep(&CallError{Status: 503}), 503},
		{"503 with GraphQL errors", ep(&CallError{Status: 503, Errors: []GraphQLError{{Message: "slow down"}}}), 0},
		{"502 with GraphQL errors", ep(&CallError{Status: 502, Errors: []GraphQLError{{Message: "x"}}}), 0},
		{"the token endpoint", &UnreachableError{URL: "http://x/token", Err: &CallError{Status: 502}}, 0},
		{"a bare CallError", &CallError{Status: 502}, 0},
		{"nil", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, ok := GatewayAnswer(tc.err)
			if st != tc.want || ok != (tc.want != 0) {
				t.Errorf("GatewayAnswer(%v) = %d, %v; want %d", tc.err, st, ok, tc.want)
			}
		})
	}
}

// TestSimPreflightAsksAgainThroughAGateway: a service flapping behind its
// gateway, whose first answers are 502 and 504, passes Preflight once it
// answers (it failed at the first 502, 1 attempt); one that keeps
// answering 502 fails after PreflightWait with an *UnreachableError that
// says for how long.
func TestSimPreflightAsksAgainThroughAGateway(t *testing.T) {
	t.Parallel()
	t.Run("flapping", func(t *testing.T) {
		t.Parallel()
		env := startSim(t, leadsim.Options{FirstAnswers: []int{502, 504, 502}}, nil)
		if err := env.c.Preflight(context.Background()); err != nil {
			t.Fatalf("Preflight() = %v, want nil once the service answers", err)
		}
		if st := env.c.Stats(); st.Attempts != 4 {
			t.Errorf("Preflight() made %d attempts, want 4 (three gateway answers, then the service's)", st.Attempts)
		}
		if !strings.Contains(env.logs.String(), "preflight: the endpoint answered 504") {
			t.Errorf("no warning of the gateway's answers in the log:\n%s", env.logs.String())
		}
	})
	t.Run("away", func(t *testing.T) {
		t.Parallel()
		env := startSim(t, leadsim.Options{Outage: leadsim.Window{Dur: time.Hour}}, func(cfg *Config) { cfg.PreflightWait = 30 * time.Millisecond })
		err := env.c.Preflight(context.Background())
		var ue *UnreachableError
		if !errors.As(err, &ue) || ue.For < 30*time.Millisecond {
			t.Fatalf("Preflight() = %v, want an *UnreachableError after asking for 30ms", err)
		}
		if msg := err.Error(); !strings.Contains(msg, "answered as a gateway does when the service behind it is away, for") || !strings.Contains(msg, "HTTP 502") {
			t.Errorf("Preflight() = %q, want it to say the gateway answered 502 for a while", msg)
		}
		if st := env.c.Stats(); st.Attempts < 2 {
			t.Errorf("Preflight() made %d attempts, want it to ask again", st.Attempts)
		}
	})
}
