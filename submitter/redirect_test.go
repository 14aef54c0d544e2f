package submitter

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// recorder is a server that keeps every request it gets, to prove that
// nothing reached it.
type recorder struct {
	mu   sync.Mutex
	got  []string
	srv  *httptest.Server
	host string
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	rc := &recorder{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, r.Method+" "+r.URL.String()+" "+r.Header.Get("Authorization")+" "+string(b))
		rc.mu.Unlock()
		writeJSON(w, 200, `{"token_type":"Bearer","expires_in":3599,"access_token":"evil-token"}`)
	}))
	t.Cleanup(rc.srv.Close)
	u, _ := url.Parse(rc.srv.URL)
	rc.host = u.Host
	return rc
}

func (rc *recorder) requests() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.got...)
}

// TestFakeTokenRedirectNotFollowed: a token endpoint that redirects gets
// no second request anywhere, the secret stays home, and the run stops
// (IsFatal) with an error naming where the redirect pointed.
func TestFakeTokenRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			evil := newRecorder(t)
			f := &fakeService{graphql: func(n int64, w http.ResponseWriter, r *http.Request, auth string) { writeJSON(w, 200, okCreate) }}
			f.token = func(n int64, w http.ResponseWriter, r *http.Request) bool {
				http.Redirect(w, r, evil.srv.URL+"/steal/token", status)
				return true
			}
			c, logs := newFakeClient(t, f, nil)
			_, _, err := c.Create(context.Background(), testInput(), nil)
			if !IsFatal(err) || !strings.Contains(err.Error(), evil.host) {
				t.Errorf("Create() = %v, want a fatal error naming %s", err, evil.host)
			}
			if got := evil.requests(); len(got) != 0 {
				t.Errorf("the redirect's target got %q, want nothing", got)
			}
			if n := f.tokenRequests.Load(); n != 1 {
				t.Errorf("token endpoint got %d requests, want 1 (a redirect is not retried)", n)
			}
			if f.calls.Load() != 0 {
				t.Errorf("the GraphQL endpoint got %d calls, want none without a token", f.calls.Load())
			}
			if err != nil {
				assertNoSecrets(t, "error", err.Error())
			}
			assertNoSecrets(t, "logs", logs.String())
		})
	}
}

// TestFakeEndpointRedirectNotFollowed: the GraphQL endpoint's redirect is
// not followed (the token and the lead stay home) and the error names the
// target's host.
func TestFakeEndpointRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	evil := newRecorder(t)
	f := &fakeService{graphql: func(n int64, w http.ResponseWriter, r *http.Request, auth string) {
		http.Redirect(w, r, evil.srv.URL+"/graphql", http.StatusTemporaryRedirect)
	}}
	c, logs := newFakeClient(t, f, nil)
	_, call, err := c.Create(context.Background(), testInput(), nil)
	if err == nil || !strings.Contains(err.Error(), evil.host) || !IsOutage(err) || call.Attempts != 1 {
		t.Errorf("Create() = %v after %d attempts, want one attempt, an outage naming %s", err, call.Attempts, evil.host)
	}
	if got := evil.requests(); len(got) != 0 {
		t.Errorf("the redirect's target got %q, want nothing", got)
	}
	if err != nil {
		assertNoSecrets(t, "error", err.Error(), "tok-1")
	}
	assertNoSecrets(t, "logs", logs.String(), "tok-1")
}
