package submitter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/leadsim/simtest"
	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/token"
)

// simEnv is a running simulator and a Client against it.
type simEnv struct {
	srv    *leadsim.Server
	c      *Client
	logs   *bytes.Buffer
	cfg    Config
	cancel context.CancelFunc
}

// startSim starts leadsim with opts and a Client with tiny backoffs whose
// debug logs go into env.logs.
func startSim(t *testing.T, opts leadsim.Options, mod func(*Config)) *simEnv {
	t.Helper()
	sim := simtest.Start(t, opts)
	srv := sim.Server
	logs := &bytes.Buffer{}
	cfg := Config{
		Endpoint:     sim.Endpoint(),
		TokenURL:     token.URL(sim.URL, leadsim.DefaultTenantID),
		ClientID:     leadsim.DefaultClientID,
		ClientSecret: leadsim.DefaultClientSecret,
		Scope:        sim.Scope(),
		BackoffBase:  time.Millisecond,
		BackoffMax:   20 * time.Millisecond,
		MaxAttempts:  10,
		CallTimeout:  5 * time.Second,
		Logger:       slog.New(slog.NewTextHandler(&lockedWriter{w: logs}, &slog.HandlerOptions{Level: slog.LevelDebug})),
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
	return &simEnv{srv: srv, c: c, logs: logs, cfg: cfg, cancel: cancel}
}

// simLead is lead number i: a distinct SSN (so no duplicates), qualified
// when qualified is true (score 300 + last4 mod 551 >= 600).
func simLead(i int, qualified bool) lead.Input {
	yes := true
	last4 := 100 + i%150 // score 400..549: not qualified
	if qualified {
		last4 = 300 + i%250 // score 600..849
	}
	return lead.Input{
		FirstName:            "Test",
		LastName:             fmt.Sprintf("Lead%d", i),
		DateOfBirth:          fmt.Sprintf("19%02d-0%d-1%d", 50+i%40, 1+i%9, i%10),
		SocialSecurityNumber: fmt.Sprintf("%05d%04d", i, last4),
		LeadID:               fmt.Sprintf("P-%d", i),
		TermsConsent:         &yes,
	}
}

// wantCode is leadsim's result code for simLead(i, qualified).
func wantCode(in lead.Input) int {
	score := leadsim.CreditScore(in.SocialSecurityNumber)
	if score < 600 {
		return leadsim.CodeComplete
	}
	return leadsim.QualifiedCode(score)
}

// outcome of one Create in runLeads.
type simOutcome struct {
	in   lead.Input
	res  lead.Result
	call Call
	err  error
}

// runLeads creates n leads with the given number of workers and returns
// every outcome, in lead order.
func runLeads(t *testing.T, c *Client, from, n, workers int, qualified bool) []simOutcome {
	t.Helper()
	out := make([]simOutcome, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= n {
					return
				}
				in := simLead(from+k, qualified)
				res, call, err := c.Create(context.Background(), in, nil)
				out[k] = simOutcome{in, res, call, err}
			}
		}()
	}
	wg.Wait()
	return out
}

// failures lists the failed outcomes' errors.
func failures(out []simOutcome) []string {
	var f []string
	for _, o := range out {
		if o.err != nil {
			f = append(f, o.err.Error())
		}
	}
	return f
}

// checkCodes fails for each successful outcome whose code is not leadsim's
// prediction (a duplicate is allowed only after an ambiguous attempt).
func checkCodes(t *testing.T, out []simOutcome) {
	t.Helper()
	for _, o := range out {
		if o.err != nil {
			continue
		}
		want := wantCode(o.in)
		if o.res.ResultCode == leadsim.CodeDuplicate && o.call.Ambiguous {
			continue
		}
		if o.res.ResultCode != want || o.res.PartnerLeadID != o.in.LeadID {
			t.Errorf("Create(%s) = %d %q, want %d, partnerLeadId %s", o.in.LeadID, o.res.ResultCode, o.res.PartnerLeadID, want, o.in.LeadID)
		}
		if lead.NeedsSubmission(want) && (o.res.BidValue == nil || *o.res.BidValue != leadsim.BidValue(want)) {
			t.Errorf("Create(%s) bid = %v, want %s", o.in.LeadID, o.res.BidValue, leadsim.BidValue(want))
		}
	}
}

// checkLogs fails if the logs hold an SSN, a date of birth, the secret or a
// token of the run.
func checkLogs(t *testing.T, env *simEnv, out []simOutcome) {
	t.Helper()
	logs := env.logs.String()
	for _, bad := range []string{env.cfg.ClientSecret, "Bearer ", "eyJ"} {
		if strings.Contains(logs, bad) {
			t.Errorf("logs contain %q", bad)
		}
	}
	for _, o := range out {
		for _, v := range []string{o.in.SocialSecurityNumber, o.in.DateOfBirth} {
			if strings.Contains(logs, v) {
				t.Errorf("logs contain the SSN or date of birth %q of %s", v, o.in.LeadID)
			}
			if o.err != nil && strings.Contains(o.err.Error(), v) {
				t.Errorf("error %q contains the SSN or date of birth of %s", o.err, o.in.LeadID)
			}
		}
	}
}

func TestSimTokenSharedByConcurrentCalls(t *testing.T) {
	t.Parallel()
	env := startSim(t, leadsim.Options{}, nil)
	out := runLeads(t, env.c, 0, 200, 200, true)
	if f := failures(out); len(f) > 0 {
		t.Fatalf("%d of 200 calls failed, first: %s", len(f), f[0])
	}
	checkCodes(t, out)
	st := env.srv.Stats()
	if st.TokensIssued != 1 {
		t.Errorf("tokens issued for 200 concurrent calls = %d, want 1", st.TokensIssued)
	}
	if s := env.c.Stats(); s.Calls != 200 || s.Attempts != 200 || s.Retries != 0 || s.TokensFetched != 1 {
		t.Errorf("Stats() = %+v, want 200 calls, 200 attempts, 0 retries, 1 token", s)
	}
	checkLogs(t, env, out)
}

func TestSimSubmit(t *testing.T) {
	t.Parallel()
	env := startSim(t, leadsim.Options{}, nil)
	ctx := context.Background()
	created, _, err := env.c.Create(ctx, simLead(1, true), nil)
	if err != nil || !lead.NeedsSubmission(created.ResultCode) {
		t.Fatalf("Create(qualified) = %+v, %v, want a qualified lead", created, err)
	}
	res, call, err := env.c.Submit(ctx, created.ID, redact.New(simLead(1, true)))
	if err != nil || res.ID != created.ID || call.Attempts != 1 {
		t.Fatalf("Submit(%s) = %+v, %+v, %v, want the lead submitted in 1 attempt", created.ID, res, call, err)
	}
	// A second submission is refused: a GraphQL error in a 200, kept with
	// its code, not retried.
	_, call, err = env.c.Submit(ctx, created.ID, redact.New(simLead(1, true)))
	var ce *CallError
	if !errors.As(err, &ce) || ce.Status != 200 || ce.Code != "SUBMIT_REFUSED" || len(ce.Errors) != 1 || call.Attempts != 1 {
		t.Fatalf("Submit(%s) again = %+v, %v, want CallError 200 SUBMIT_REFUSED after 1 attempt", created.ID, call, err)
	}
	if want := "submitLead: GraphQL error [SUBMIT_REFUSED] lead " + created.ID + " already submitted"; err.Error() != want {
		t.Errorf("Submit() error = %q, want %q", err, want)
	}
	if st := env.srv.Stats(); st.Submissions != 1 {
		t.Errorf("leadsim submissions = %d, want 1", st.Submissions)
	}
}

func TestSimShortLivedTokens(t *testing.T) {
	t.Parallel()
	const life, run = 2 * time.Second, 4500 * time.Millisecond
	env := startSim(t, leadsim.Options{TokenLifetime: life}, func(c *Config) { c.Rate = 50 })
	var out []simOutcome
	start := time.Now()
	for i := 0; time.Since(start) < run && i < 100; i++ {
		out = append(out, runLeads(t, env.c, i*20, 20, 4, false)...)
	}
	elapsed := time.Since(start)
	if f := failures(out); len(f) > 0 {
		t.Fatalf("%d of %d calls failed, first: %s", len(f), len(out), f[0])
	}
	checkCodes(t, out)
	tokens := env.srv.Stats().TokensIssued
	// One per lifetime (less a tenth renewed early, less the JWT's whole
	// seconds), plus the first: never one per call. (It also wanted 10
	// calls a token at least: a loaded host may send fewer in a lifetime.)
	lo, hi := int(elapsed/life), int(2*elapsed/life)+2
	if tokens < lo || tokens > hi {
		t.Errorf("tokens issued over %v with %v tokens and %d calls = %d, want %d..%d", elapsed, life, len(out), tokens, lo, hi)
	}
	s := env.c.Stats()
	if int(s.TokensFetched) != tokens {
		t.Errorf("Stats().TokensFetched = %d, want leadsim's %d", s.TokensFetched, tokens)
	}
	// Renewal ahead of expiry, not 401s, should replace the tokens.
	if s.Status401 >= int64(tokens) {
		t.Errorf("Stats().Status401 = %d with %d tokens, want renewals ahead of expiry, not after 401s", s.Status401, tokens)
	}
	t.Logf("%d calls over %v: %d tokens, %d 401s", len(out), elapsed, tokens, s.Status401)
	checkLogs(t, env, out)
}

func TestSimKeyRotation(t *testing.T) {
	t.Parallel()
	env := startSim(t, leadsim.Options{}, nil)
	var out []simOutcome
	for phase := 0; phase < 3; phase++ {
		if phase > 0 {
			env.srv.RotateKey()
		}
		out = append(out, runLeads(t, env.c, phase*50, 50, 25, true)...)
	}
	if f := failures(out); len(f) > 0 {
		t.Fatalf("%d of %d calls failed, first: %s", len(f), len(out), f[0])
	}
	checkCodes(t, out)
	if st := env.srv.Stats(); st.TokensIssued != 3 {
		t.Errorf("tokens issued over 2 key rotations with 25 workers = %d, want 3 (one refetch per rotation)", st.TokensIssued)
	}
	if s := env.c.Stats(); s.Status401 < 2 {
		t.Errorf("Stats().Status401 = %d, want at least 2", s.Status401)
	}
	// A rotation while calls are in flight fails none of them either.
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(50 * time.Millisecond)
		env.srv.RotateKey()
	}()
	more := runLeads(t, env.c, 1000, 200, 10, false)
	<-done
	if f := failures(more); len(f) > 0 {
		t.Fatalf("%d of %d calls failed across a rotation in flight, first: %s", len(f), len(more), f[0])
	}
	checkLogs(t, env, append(out, more...))
}

func TestSimRateLimited(t *testing.T) {
	t.Parallel()
	env := startSim(t, leadsim.Options{RateLimit: 50, RateBurst: 2}, func(c *Config) { c.Rate = 100 })
	out := runLeads(t, env.c, 0, 60, 16, false)
	if f := failures(out); len(f) > 0 {
		t.Fatalf("%d of %d calls failed, first: %s", len(f), len(out), f[0])
	}
	checkCodes(t, out)
	s := env.c.Stats()
	if s.Status429 == 0 || s.CurrentRate >= 100 || s.CurrentRate <= 0 {
		t.Errorf("Stats() = %+v, want 429s seen and the shared rate lowered below 100", s)
	}
	if got := env.srv.Stats().Rejections[leadsim.RejectRateLimited]; int64(got) != s.Status429 {
		t.Errorf("leadsim rate-limited %d requests, Stats().Status429 = %d, want equal", got, s.Status429)
	}
}

func TestSimFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		opts         leadsim.Options
		wantFail     bool
		wantStatus   int
		wantRetries  bool
		wantAttempts int // of a failed call; 0 = not checked
	}{
		{name: "503 on 30% of calls: all succeed after retries", opts: leadsim.Options{Fail503: 0.3, Seed: 1}, wantRetries: true},
		{name: "permanent 500: fails after one attempt", opts: leadsim.Options{Fail500: 1}, wantFail: true, wantStatus: 500, wantAttempts: 1},
		{name: "permanent 503: fails after max attempts", opts: leadsim.Options{Fail503: 1}, wantFail: true, wantStatus: 503, wantRetries: true, wantAttempts: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := startSim(t, tc.opts, func(c *Config) {
				if tc.wantAttempts > 1 {
					c.MaxAttempts = tc.wantAttempts
				}
			})
			out := runLeads(t, env.c, 0, 60, 8, true)
			f := failures(out)
			if tc.wantFail != (len(f) == len(out)) || (!tc.wantFail && len(f) > 0) {
				t.Fatalf("%d of %d calls failed (%v), want all failed %v", len(f), len(out), f, tc.wantFail)
			}
			checkCodes(t, out)
			s := env.c.Stats()
			if (s.Retries > 0) != tc.wantRetries {
				t.Errorf("Stats().Retries = %d, want retries %v", s.Retries, tc.wantRetries)
			}
			for _, o := range out {
				var ce *CallError
				if o.err == nil {
					continue
				}
				if !errors.As(o.err, &ce) || ce.Status != tc.wantStatus || ce.Attempts != tc.wantAttempts || o.call.Attempts != tc.wantAttempts {
					t.Errorf("Create(%s) = %+v, %v, want CallError status %d after %d attempts", o.in.LeadID, o.call, o.err, tc.wantStatus, tc.wantAttempts)
				}
			}
			checkLogs(t, env, out)
		})
	}
}

func TestSimDroppedConnectionsAreAmbiguous(t *testing.T) {
	t.Parallel()
	env := startSim(t, leadsim.Options{DropAfter: 0.3, Seed: 7}, nil)
	out := runLeads(t, env.c, 0, 60, 8, true)
	if f := failures(out); len(f) > 0 {
		t.Fatalf("%d of %d calls failed, first: %s", len(f), len(out), f[0])
	}
	checkCodes(t, out)
	created := env.srv.Stats().CreateCalls
	ambiguous := 0
	for _, o := range out {
		if o.call.Ambiguous {
			ambiguous++
			if o.res.ResultCode != leadsim.CodeDuplicate || !strings.HasPrefix(o.res.Note, leadsim.NoteDuplicatePrefix) || o.call.Attempts < 2 {
				t.Errorf("Create(%s) after a dropped connection = %d %q in %d attempts, want the duplicate answer %d after 2+ attempts",
					o.in.LeadID, o.res.ResultCode, o.res.Note, o.call.Attempts, leadsim.CodeDuplicate)
			}
		}
		if got := created[o.in.LeadID]; got != o.call.Attempts {
			t.Errorf("leadsim saw %s %d times, Call.Attempts = %d, want equal", o.in.LeadID, got, o.call.Attempts)
		}
	}
	if ambiguous == 0 {
		t.Errorf("no ambiguous call with 30%% of connections dropped, want some")
	}
	checkLogs(t, env, out)
}

func TestSimTokenErrors(t *testing.T) {
	t.Parallel()
	notGranted := leadsim.DefaultClient()
	notGranted.Granted = false
	tests := []struct {
		name      string
		opts      leadsim.Options
		mod       func(*Config)
		wantCode  string
		wantCheck token.Check
	}{
		// leadsim counts token requests it routes; a wrong path is the
		// mux's 404, so "wrong token path" expects none.
		{"wrong secret", leadsim.Options{}, func(c *Config) { c.ClientSecret = "wrong-secret-xyz" }, "invalid_client", token.CheckClient},
		{"unknown client id", leadsim.Options{}, func(c *Config) { c.ClientID = "nobody" }, "invalid_client", token.CheckClient},
		{"wrong scope", leadsim.Options{}, func(c *Config) { c.Scope = "api://other/.default" }, "invalid_scope", token.CheckScope},
		{"not granted", leadsim.Options{Clients: []leadsim.Client{notGranted}}, nil, "unauthorized_client", ""},
		{"wrong tenant", leadsim.Options{}, func(c *Config) {
			c.TokenURL = strings.Replace(c.TokenURL, leadsim.DefaultTenantID, "other-tenant", 1)
		}, "invalid_request", token.CheckAll},
		{"wrong token path", leadsim.Options{}, func(c *Config) { c.TokenURL = strings.TrimSuffix(c.TokenURL, "/token") }, "http_404", token.CheckTokenURL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := startSim(t, tc.opts, tc.mod)
			ctx := context.Background()
			var errs []error
			_, err := env.c.CheckAuth(ctx)
			errs = append(errs, err)
			for i := 0; i < 3; i++ {
				_, _, err := env.c.Create(ctx, simLead(i, true), nil)
				errs = append(errs, err)
			}
			for i, err := range errs {
				var ae *token.AuthError
				if !errors.As(err, &ae) || !IsFatal(err) || ae.Code != tc.wantCode || ae.Check != tc.wantCheck || ae.Hint == "" {
					t.Fatalf("call %d = %v, want a fatal AuthError %s checking %q, with a hint", i, err, tc.wantCode, tc.wantCheck)
				}
				if strings.Contains(err.Error(), env.cfg.ClientSecret) {
					t.Errorf("error %q contains the secret", err)
				}
			}
			st := env.srv.Stats()
			wantTokenRequests := 1
			if tc.wantCode == "http_404" {
				wantTokenRequests = 0
			}
			if got := st.Requests[leadsim.OpToken]; sum(got) != wantTokenRequests {
				t.Errorf("token requests = %v, want %d (the refusal is remembered)", got, wantTokenRequests)
			}
			if st.Requests[leadsim.OpCreateLead] != nil {
				t.Errorf("createLead requests after refused credentials = %v, want none", st.Requests[leadsim.OpCreateLead])
			}
			checkLogs(t, env, nil)
		})
	}
}

func sum(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func TestSimTokenEndpoint503sAreRetried(t *testing.T) {
	t.Parallel()
	env := startSim(t, leadsim.Options{TokenFail503: 0.5, Seed: 3, TokenLifetime: time.Second}, func(c *Config) { c.TokenRetries = 20 })
	var out []simOutcome
	for i := 0; i < 5; i++ {
		out = append(out, runLeads(t, env.c, i*10, 10, 5, false)...)
		time.Sleep(300 * time.Millisecond)
	}
	if f := failures(out); len(f) > 0 {
		t.Fatalf("%d of %d calls failed, first: %s", len(f), len(out), f[0])
	}
	st := env.srv.Stats()
	if st.Rejections[leadsim.RejectTokenFault503] == 0 || st.TokensIssued < 2 {
		t.Errorf("leadsim stats = %+v, want token 503s and at least 2 tokens issued", st)
	}
}

func TestSimCheckAuth(t *testing.T) {
	t.Parallel()
	env := startSim(t, leadsim.Options{TokenLifetime: time.Hour}, nil)
	before := time.Now()
	info, err := env.c.CheckAuth(context.Background())
	if err != nil {
		t.Fatalf("CheckAuth() = %v", err)
	}
	if info.ClientID != leadsim.DefaultClientID || info.Audience != leadsim.DefaultAppID ||
		strings.Join(info.Roles, ",") != leadsim.RoleWrite+","+leadsim.RoleRead {
		t.Errorf("CheckAuth() = %+v, want client %s, audience %s, roles Lead.Write,Lead.Read", info, leadsim.DefaultClientID, leadsim.DefaultAppID)
	}
	if d := info.ExpiresAt.Sub(before); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("CheckAuth().ExpiresAt = %v, %v from now, want about an hour", info.ExpiresAt, d)
	}
	if s := fmt.Sprintf("%+v", info); strings.Contains(s, "eyJ") {
		t.Errorf("token.Info %s holds the token", s)
	}
}

func TestSimBodyCap(t *testing.T) {
	t.Parallel()
	env := startSim(t, leadsim.Options{}, func(c *Config) { c.MaxResponseBytes = 64 })
	_, call, err := env.c.Create(context.Background(), simLead(1, true), nil)
	var ce *CallError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "larger than 64 bytes") || call.Attempts != 1 {
		t.Errorf("Create() with a 64-byte cap = %+v, %v, want a body-cap CallError after 1 attempt", call, err)
	}
}

func TestSimNoSubmitWithAutoSubmitClient(t *testing.T) {
	t.Parallel()
	auto := leadsim.DefaultClient()
	auto.AutoSubmit = true
	env := startSim(t, leadsim.Options{Clients: []leadsim.Client{auto}}, nil)
	out := runLeads(t, env.c, 0, 20, 4, true)
	if f := failures(out); len(f) > 0 {
		t.Fatalf("%d calls failed, first: %s", len(f), f[0])
	}
	if st := env.srv.Stats(); st.AutoSubmissions != 20 || st.Requests[leadsim.OpSubmitLead] != nil {
		t.Errorf("leadsim stats = %+v, want 20 automatic submissions and no submitLead", st)
	}
}

func TestSimLeadRead(t *testing.T) {
	env := startSim(t, leadsim.Options{}, nil)
	ctx := context.Background()
	in := simLead(7, true)
	created, _, err := env.c.Create(ctx, in, nil)
	if err != nil {
		t.Fatalf("Create() = %v", err)
	}
	got, call, err := env.c.Lead(ctx, created.ID, redact.New(in))
	if err != nil {
		t.Fatalf("Lead(%s) = %v", created.ID, err)
	}
	if got.ID != created.ID || got.PartnerLeadID != in.LeadID || got.ResultCode != created.ResultCode || call.Attempts != 1 {
		t.Errorf("Lead(%s) = %+v after %d attempts, want the created lead %+v", created.ID, got, call.Attempts, created)
	}
	if _, _, err := env.c.Lead(ctx, "00000000-0000-0000-0000-000000000000", nil); err == nil {
		t.Error("Lead(unknown id) succeeded")
	}
}

// TestSimAutoRate: --rate auto sets no limit against a service whose limit
// the calls never reach, and finds the limit of one they pass, where every
// call still succeeds within MaxAttempts (429s do not use them up, and the
// rate comes down to what the service accepts).
func TestSimAutoRate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		limit    float64
		burst    int
		calls    int
		wantOpen bool
	}{
		{"limit far above the calls", 2000, 200, 150, true},
		{"limit below the calls", 8, 1, 24, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := startSim(t, leadsim.Options{RateLimit: tc.limit, RateBurst: tc.burst, RateLimitRetryAfter: "0.05"}, func(c *Config) {
				c.RateAuto = true
				c.MaxAttempts = 3
			})
			out := runLeads(t, env.c, 0, tc.calls, 8, false)
			if f := failures(out); len(f) > 0 {
				t.Fatalf("%d of %d calls failed, first: %s", len(f), len(out), f[0])
			}
			checkCodes(t, out)
			s := env.c.Stats()
			if !s.Auto {
				t.Fatalf("Stats().Auto = false, want true with RateAuto")
			}
			if tc.wantOpen && (s.CurrentRate != 0 || s.LimitFound || s.Status429 != 0) {
				t.Errorf("rate after %d calls under a limit of %v/s = %.1f (found %v, %d 429s), want none set (0) and no 429", tc.calls, tc.limit, s.CurrentRate, s.LimitFound, s.Status429)
			}
			if !tc.wantOpen && (s.CurrentRate <= 0 || s.CurrentRate > tc.limit || !s.LimitFound || s.SettledRate > tc.limit) {
				t.Errorf("Stats() after %d calls under a limit of %v/s = %+v, want a rate set at most the limit, a limit found and a settled rate at most the limit",
					tc.calls, tc.limit, s)
			}
			t.Logf("limit %v: rate %.1f, settled %.1f (found %v), %d attempts, %d answered 429", tc.limit, s.CurrentRate, s.SettledRate, s.LimitFound, s.Attempts, s.Status429)
		})
	}
}

// piiForms is in's SSN and date of birth written the ways leadsim's
// EchoPII writes them in messages and in codes.
func piiForms(in lead.Input) []string {
	d := in.SocialSecurityNumber
	var y, m, day int
	fmt.Sscanf(in.DateOfBirth, "%d-%d-%d", &y, &m, &day)
	month := time.Month(m).String()
	return []string{d, d[:3] + "-" + d[3:5] + "-" + d[5:], d[:3] + " " + d[3:5] + " " + d[5:],
		in.DateOfBirth, fmt.Sprintf("%02d/%02d/%04d", m, day, y), fmt.Sprintf("%d/%d/%02d", m, day, y%100),
		fmt.Sprintf("%04d%02d%02d", y, m, day), fmt.Sprintf("%s %d, %04d", month, day, y),
		fmt.Sprintf("%s_%d_%04d", month, day, y)} // in an extensions.code
}

// TestSimSubmitAndLeadRedact: Submit and Lead, given the lead's Redactor,
// cut its SSN and date of birth, which the service echoes in notes, bids,
// GraphQL errors and 503s, out of their results, their errors and the debug
// log (each retry logs its reason). The lead query is what leadsim does not
// fail: its answers are checked, its retries are not provoked.
func TestSimSubmitAndLeadRedact(t *testing.T) {
	t.Parallel()
	env := startSim(t, leadsim.Options{EchoPII: true, Fail503: 0.3, Seed: 5}, nil)
	ctx := context.Background()
	var texts []string // every result and error of Submit and Lead
	var leads []lead.Input
	for i := range 8 {
		in := simLead(200+i, true)
		created, _, err := env.c.Create(ctx, in, nil)
		if err != nil {
			t.Fatalf("Create(%s) = %v", in.LeadID, err)
		}
		leads = append(leads, in)
		red := redact.New(in)
		// Submitted, then refused as submitted already, then read.
		for range 2 {
			res, _, err := env.c.Submit(ctx, created.ID, red)
			texts = append(texts, fmt.Sprintf("%+v %v", res, err))
		}
		res, _, err := env.c.Lead(ctx, created.ID, red)
		texts = append(texts, fmt.Sprintf("%+v %s %v", res, deref(res.BidValue), err))
	}
	logs, all := env.logs.String(), strings.Join(texts, "\n")
	if !strings.Contains(logs, "retrying op=submitLead") {
		t.Fatalf("debug log has no retry of submitLead: the test does not test it\n%s", logs)
	}
	if !strings.Contains(all, "already submitted [SSN [REDACTED]") || !strings.Contains(all, "(SSN [REDACTED]") {
		t.Fatalf("no redacted echo in a submitLead error and a lead's note: the test does not test it\n%s", all)
	}
	for _, in := range leads {
		for _, v := range piiForms(in) {
			if strings.Contains(logs, v) {
				t.Errorf("debug log holds %q of %s", v, in.LeadID)
			}
			for _, s := range texts {
				if strings.Contains(s, v) {
					t.Errorf("a result or error holds %q of %s: %s", v, in.LeadID, s)
				}
			}
		}
	}
	// Control: without the lead's Redactor, the refusal keeps the date of
	// birth (not shaped like an SSN), so the checks above can fail.
	in := leads[0]
	created, _, _ := env.c.Create(ctx, in, nil) // a duplicate now; its id is the first's
	_, _, err := env.c.Submit(ctx, created.ID, nil)
	if err == nil || !strings.Contains(err.Error(), piiForms(in)[4]) {
		t.Errorf("Submit(%s) again without a Redactor = %v, want the echo of the date of birth %s kept", created.ID, err, piiForms(in)[4])
	}
}
