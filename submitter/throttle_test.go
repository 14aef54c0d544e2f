package submitter

import (
	"context"
	"net/http"
	"testing"

	"github.com/bulkload/bulkload/leadsim"
)

// TestSimSteadyLimitFarBelowRate: a service limit far below --rate (here
// 20/s against 1000/s, with MaxAttempts 1, so at most 4 429s in a row
// without progress) throttles rows but fails none, since other calls are
// answered all along.
func TestSimSteadyLimitFarBelowRate(t *testing.T) {
	t.Parallel()
	env := startSim(t, leadsim.Options{RateLimit: 20, RateBurst: 1, RateLimitRetryAfter: "0.05", SigningKey: sharedKey(t)}, func(c *Config) {
		c.Rate = 1000
		c.MaxAttempts = 1
	})
	// 12 calls at once: under go test -race beside other packages, 6
	// reached the service far enough apart that only 3 were answered
	// 429 (CI at e75de09).
	out := runLeads(t, env.c, 0, 12, 12, false)
	if f := failures(out); len(f) > 0 {
		t.Fatalf("%d of %d calls failed, first: %s", len(f), len(out), f[0])
	}
	checkCodes(t, out)
	if st := env.c.Stats(); st.CreateLead.Throttled < 4 {
		t.Errorf("createLead was answered 429 %d times, want many (the test needs a steady limit)", st.CreateLead.Throttled)
	}
}

// TestFakeThrottledWithoutProgressFails: when nothing else is answered, a
// call answered 429 again and again gives up after 4×MaxAttempts, and its
// reason reads whole: the attempts go with the status, before the
// service's own text.
func TestFakeThrottledWithoutProgressFails(t *testing.T) {
	t.Parallel()
	f := &fakeService{graphql: func(n int64, w http.ResponseWriter, r *http.Request, auth string) {
		w.Header().Set("Retry-After", "0")
		writeJSON(w, 429, `{"errors":[{"message":"Too many requests: rate limit exceeded; retry after the Retry-After delay","extensions":{"code":"RATE_LIMITED"}}]}`)
	}}
	c, _ := newFakeClient(t, f, func(cfg *Config) {
		cfg.MaxAttempts = 2
		cfg.Rate = 1000 // a 429 halves it: still fast
	})
	_, call, err := c.Create(context.Background(), testInput(), nil)
	const want = "createLead: HTTP 429 Too Many Requests after 8 attempts: [RATE_LIMITED] Too many requests: rate limit exceeded; retry after the Retry-After delay"
	if err == nil || err.Error() != want || call.Attempts != 8 {
		t.Errorf("Create() = %v after %d attempts, want %q after 8", err, call.Attempts, want)
	}
}
