package leadsim

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSchemaValidation(t *testing.T) {
	s := newSim(t, Options{})
	tok := s.defaultToken(t)
	with := func(k string, v any) map[string]any {
		in := applicant("v-"+k, "666660400")
		if v == nil {
			delete(in, k)
		} else {
			in[k] = v
		}
		return in
	}
	tests := []struct {
		name    string
		query   string
		vars    map[string]any
		wantMsg string
	}{
		{"unknown input field", createDoc, map[string]any{"input": with("middleName", "Q")}, "middleName"},
		{"leadSourceId sent", createDoc, map[string]any{"input": with("leadSourceId", 7)}, "leadSourceId"},
		{"string loanAmount", createDoc, map[string]any{"input": with("loanAmount", "5000")}, "loanAmount"},
		{"missing dateOfBirth", createDoc, map[string]any{"input": with("dateOfBirth", nil)}, "dateOfBirth"},
		{"null dateOfBirth", createDoc, map[string]any{"input": with("dateOfBirth", json.RawMessage("null"))}, "dateOfBirth"},
		{"string termsConsent", createDoc, map[string]any{"input": with("termsConsent", "true")}, "termsConsent"},
		{"wrong result field", `mutation($input: LeadInput!) { createLead(input: $input) { id leadStatus } }`, map[string]any{"input": with("x", nil)}, "leadStatus"},
		{"inline unknown field", `mutation { createLead(input: {dateOfBirth: "1990-01-01", nickname: "x"}) { id } }`, nil, "nickname"},
		{"inline string loanAmount", `mutation { createLead(input: {dateOfBirth: "1990-01-01", loanAmount: "5000"}) { id } }`, nil, "Int"},
		{"syntax error", `mutation { createLead(`, nil, ""},
		{"number homePhone", createDoc, map[string]any{"input": with("homePhone", 5551234567)}, "String cannot represent"},
		{"fractional loanAmount", createDoc, map[string]any{"input": with("loanAmount", 5000.5)}, "Int cannot represent"},
		{"loanAmount over 32 bits", createDoc, map[string]any{"input": with("loanAmount", int64(1)<<40)}, "32-bit"},
		{"input missing", createDoc, nil, "was not provided"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.post(t, "/graphql", tok, tc.query, tc.vars)
			code := r.code()
			if r.status != http.StatusUnprocessableEntity || (code != "GRAPHQL_VALIDATION_FAILED" && code != "GRAPHQL_PARSE_FAILED") {
				t.Fatalf("%s = %d %s, want 422 GRAPHQL_VALIDATION_FAILED", tc.name, r.status, r.raw)
			}
			if !strings.Contains(r.raw, tc.wantMsg) {
				t.Errorf("%s message %q does not name %q", tc.name, r.Errors[0].Message, tc.wantMsg)
			}
			if len(r.Data) > 0 {
				t.Errorf("%s returned data %s", tc.name, r.raw)
			}
		})
	}
	// Validation messages go back to clients, which log them: no value of
	// the request may appear in them.
	leaks := []struct {
		name  string
		input map[string]any
	}{
		{"SSN as a number", with("socialSecurityNumber", 987654321)},
		{"SSN under a wrong name", with("ssn", "987654321")},
		{"missing dateOfBirth beside an SSN", func() map[string]any {
			in := with("dateOfBirth", nil)
			in["socialSecurityNumber"] = "987654321"
			return in
		}()},
		{"dateOfBirth as a number", with("dateOfBirth", 19870605)},
	}
	for _, tc := range leaks {
		t.Run(tc.name, func(t *testing.T) {
			r := s.post(t, "/graphql", tok, createDoc, map[string]any{"input": tc.input})
			if r.status != http.StatusUnprocessableEntity {
				t.Fatalf("%s = %d %s, want 422", tc.name, r.status, r.raw)
			}
			for _, secret := range []string{"987654321", "19870605", "1990-01-02", "666660400"} {
				if strings.Contains(r.raw, secret) {
					t.Errorf("%s: answer quotes a value of the request: %s", tc.name, r.raw)
				}
			}
		})
	}
	st := s.Stats()
	if st.LeadsCreated != 0 || st.Rejections[RejectGraphQLValidation] != len(tests)+len(leaks) {
		t.Errorf("Stats: created %d, validation rejections %d; want 0, %d", st.LeadsCreated, st.Rejections[RejectGraphQLValidation], len(tests)+len(leaks))
	}
}

func TestRateLimit(t *testing.T) {
	s := newSim(t, Options{RateLimit: 0.5, RateBurst: 2})
	tok := s.defaultToken(t)
	const doc = `query { lead(id: "x") { id } }`
	for i := range 2 {
		if r := s.post(t, "/graphql", tok, doc, nil); r.status != http.StatusOK {
			t.Fatalf("request %d within the burst = %d, want 200", i, r.status)
		}
	}
	r := s.post(t, "/graphql", tok, doc, nil)
	if r.status != http.StatusTooManyRequests || r.code() != "RATE_LIMITED" {
		t.Fatalf("request past the burst = %d %s, want 429 RATE_LIMITED", r.status, r.raw)
	}
	if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra != 2 {
		t.Errorf("Retry-After = %q, want 2 (1/rate)", r.header.Get("Retry-After"))
	}
	if r := s.post(t, "/debt-core/graphql", tok, `query { creditReport(id: "x") { id } }`, nil); r.status != http.StatusTooManyRequests {
		t.Errorf("debt core past the shared limit = %d, want 429", r.status)
	}
	st := s.Stats()
	if st.Rejections[RejectRateLimited] != 2 || st.Requests[OpLead][429] != 1 || st.Requests[OpCreditReport][429] != 1 {
		t.Errorf("Stats: rate_limited %d, lead 429 %d, creditReport 429 %d; want 2, 1, 1", st.Rejections[RejectRateLimited], st.Requests[OpLead][429], st.Requests[OpCreditReport][429])
	}
}

// TestRateLimitRetryAfter: RateLimitRetryAfter is the Retry-After of the
// 429s, in each form, in place of the whole seconds until the bucket holds
// a token; New refuses what is no form.
func TestRateLimitRetryAfter(t *testing.T) {
	tests := []struct{ form, want string }{
		{"", "2"}, // 1/rate
		{"0.05", "0.05"},
		{"3", "3"},
		{"date+2s", "Sun, 22 Nov 2026 05:00:02 GMT"}, // the test clock's start plus 2 s
	}
	for _, tc := range tests {
		t.Run(tc.form, func(t *testing.T) {
			s := newSim(t, Options{RateLimit: 0.5, RateBurst: 1, RateLimitRetryAfter: tc.form})
			tok := s.defaultToken(t)
			const doc = `query { lead(id: "x") { id } }`
			if r := s.post(t, "/graphql", tok, doc, nil); r.status != http.StatusOK {
				t.Fatalf("request within the burst = %d, want 200", r.status)
			}
			r := s.post(t, "/graphql", tok, doc, nil)
			if r.status != http.StatusTooManyRequests || r.code() != "RATE_LIMITED" {
				t.Fatalf("request past the burst = %d %s, want 429 RATE_LIMITED", r.status, r.raw)
			}
			if got := r.header.Get("Retry-After"); got != tc.want {
				t.Errorf("Retry-After = %q, want %q", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"-1", "50ms", "date+x"} {
		if s, err := New(Options{RateLimit: 1, RateLimitRetryAfter: bad, SigningKey: testKey(t)}); err == nil {
			s.Close()
			t.Errorf("New(RateLimitRetryAfter %q) succeeded, want an error", bad)
		}
	}
}

// TestRateLimitChange: the limit changes at the times of RateChanges, on
// the Now clock: none at first, 0.5/s after 30 s, none again after 60 s.
func TestRateLimitChange(t *testing.T) {
	s := newSim(t, Options{RateChanges: []RateChange{{30 * time.Second, 0.5}, {time.Minute, 0}}})
	tok := s.defaultToken(t)
	const doc = `query { lead(id: "x") { id } }`
	statuses := func() []int {
		var out []int
		for range 4 {
			out = append(out, s.post(t, "/graphql", tok, doc, nil).status)
		}
		return out
	}
	if got := statuses(); !slices.Equal(got, []int{200, 200, 200, 200}) {
		t.Errorf("statuses before the first change = %v, want all 200 (unlimited)", got)
	}
	s.Advance(30 * time.Second)
	if got := statuses(); !slices.Equal(got, []int{200, 429, 429, 429}) {
		t.Errorf("statuses after the limit became 0.5/s (burst 1) = %v, want 200 then 429s", got)
	}
	if r := s.post(t, "/graphql", tok, doc, nil); r.header.Get("Retry-After") != "2" {
		t.Errorf("Retry-After at 0.5/s = %q, want 2", r.header.Get("Retry-After"))
	}
	s.Advance(30 * time.Second)
	if got := statuses(); !slices.Equal(got, []int{200, 200, 200, 200}) {
		t.Errorf("statuses after the limit was lifted = %v, want all 200", got)
	}
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name       string
		opts       Options
		wantStatus int // 0: connection dropped
		wantCalls  int
		wantReject string
	}{
		{"503", Options{Fail503: 1}, 503, 0, RejectFault503},
		{"500", Options{Fail500: 1}, 500, 0, RejectFault500},
		{"drop after processing", Options{DropAfter: 1}, 0, 1, RejectDropped},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, tc.opts)
			tok := s.defaultToken(t)
			b, _ := json.Marshal(map[string]any{"query": createDoc, "variables": map[string]any{"input": applicant("f-1", "777770400")}})
			req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(b))
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := http.DefaultClient.Do(req)
			status := 0
			if err == nil {
				status = resp.StatusCode
				resp.Body.Close()
			} else if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "EOF") {
				t.Fatalf("request error %v, want a dropped connection (EOF)", err)
			}
			if status != tc.wantStatus {
				t.Fatalf("createLead with %s = status %d (err %v), want %d", tc.name, status, err, tc.wantStatus)
			}
			st := s.Stats()
			if st.CreateCalls["f-1"] != tc.wantCalls || st.Rejections[tc.wantReject] != 1 || st.Requests[OpCreateLead][tc.wantStatus] != 1 {
				t.Errorf("Stats: calls[f-1] %d, %s %d, requests %v; want %d, 1", st.CreateCalls["f-1"], tc.wantReject, st.Rejections[tc.wantReject], st.Requests, tc.wantCalls)
			}
			// Faults hit only createLead and submitLead.
			if r := s.post(t, "/graphql", tok, `query { lead(id: "x") { id } }`, nil); r.status != http.StatusOK {
				t.Errorf("lead query under %s faults = %d, want 200", tc.name, r.status)
			}
		})
	}
}

// TestProxyReset: a createLead under ProxyReset is processed (its lead
// exists, and a second send is its duplicate) and answered by the proxy
// with the status and body asked for, never GraphQL.
func TestProxyReset(t *testing.T) {
	tests := []struct {
		status                       int
		body, retryAfter             string
		wantType, wantHas, wantRetry string
	}{
		{0, "", "", "text/plain", "upstream connect error or disconnect/reset before headers", ""},
		{503, ProxyBodyHTML, "", "text/html", "<title>503 Service Unavailable</title>", ""},
		{503, ProxyBodyEmpty, "", "", "", ""},
		{502, ProxyBodyHTML, "", "text/html", "<title>502 Bad Gateway</title>", ""},
		{504, ProxyBodyText, "", "text/plain", "reset reason", ""},
		{503, ProxyBodyText, "300", "text/plain", "reset reason", "300"},
		{503, ProxyBodyText, "date+2s", "text/plain", "reset reason", "Sun, 22 Nov 2026 05:00:02 GMT"}, // the test clock's start plus 2 s
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d %s %s", tc.status, tc.body, tc.retryAfter), func(t *testing.T) {
			s := newSim(t, Options{ProxyReset: 1, ProxyResetStatus: tc.status, ProxyResetBody: tc.body, ProxyResetRetryAfter: tc.retryAfter})
			tok := s.defaultToken(t)
			b, _ := json.Marshal(map[string]any{"query": createDoc, "variables": map[string]any{"input": applicant("r-1", "777770400")}})
			send := func() (int, http.Header, string) {
				req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(b))
				req.Header.Set("Authorization", "Bearer "+tok)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatalf("createLead under ProxyReset: %v", err)
				}
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, resp.Header, string(raw)
			}
			status, header, body := send()
			want := cmp.Or(tc.status, 503)
			if status != want || header.Get("Content-Type") != tc.wantType || !strings.Contains(body, tc.wantHas) || tc.wantHas == "" && body != "" {
				t.Errorf("createLead = %d %q %q, want %d %q with %q", status, header.Get("Content-Type"), body, want, tc.wantType, tc.wantHas)
			}
			if json.Valid([]byte(body)) {
				t.Errorf("proxy body %q is JSON, want a proxy's page", body)
			}
			if got := header.Get("Retry-After"); got != tc.wantRetry {
				t.Errorf("Retry-After = %q, want %q", got, tc.wantRetry)
			}
			st := s.Stats()
			if st.LeadsCreated != 1 || st.Rejections[RejectProxyReset] != 1 || st.Requests[OpCreateLead][want] != 1 {
				t.Errorf("Stats: leads %d, %s %d, requests %v; want 1 lead created and 1 reset answered %d", st.LeadsCreated, RejectProxyReset, st.Rejections[RejectProxyReset], st.Requests, want)
			}
			send()
			if st := s.Stats(); st.LeadsCreated != 2 || st.ResultCodes[1002] != 1 {
				t.Errorf("second send: leads %d, result codes %v; want the first lead's duplicate (1002)", st.LeadsCreated, st.ResultCodes)
			}
		})
	}
}

func TestFaultsFollowSeed(t *testing.T) {
	run := func(seed int64) string {
		s := newSim(t, Options{Fail503: 0.3, Fail500: 0.2, Seed: seed})
		tok := s.defaultToken(t)
		var got strings.Builder
		for i := range 40 {
			r := s.post(t, "/graphql", tok, createDoc, map[string]any{"input": applicant("seed-"+strconv.Itoa(i), "")})
			fmt.Fprintf(&got, "%d ", r.status)
		}
		return got.String()
	}
	a, b, c := run(3), run(3), run(4)
	if a != b {
		t.Errorf("statuses with seed 3 differ between runs:\n%s\n%s", a, b)
	}
	if a == c {
		t.Errorf("statuses with seeds 3 and 4 are the same: %s", a)
	}
	for _, want := range []string{"200", "500", "503"} {
		if !strings.Contains(a, want) {
			t.Errorf("40 requests at 30%% 503 and 20%% 500 never answered %s: %s", want, a)
		}
	}
}

func TestTokenFault503(t *testing.T) {
	s := newSim(t, Options{TokenFail503: 1})
	status, body := s.tokenForm(t, map[string][]string{"grant_type": {"client_credentials"}})
	if status != http.StatusServiceUnavailable || body["error"] != "temporarily_unavailable" {
		t.Errorf("token under TokenFail503 = %d %v, want 503 temporarily_unavailable", status, body["error"])
	}
}

func TestBodyTooLarge(t *testing.T) {
	// Parallel: a simulator of its own.
	t.Parallel()
	s := newSim(t, Options{MaxBodyBytes: 512})
	tok := s.defaultToken(t)
	in := applicant("big", "")
	in["address2"] = strings.Repeat("x", 600)
	r := s.post(t, "/graphql", tok, createDoc, map[string]any{"input": in})
	if r.status != http.StatusRequestEntityTooLarge || r.code() != "PAYLOAD_TOO_LARGE" {
		t.Errorf("oversized createLead = %d %s, want 413", r.status, r.raw)
	}
	status, body := s.tokenForm(t, url.Values{"grant_type": {"client_credentials"}, "client_assertion": {strings.Repeat("x", 600)}})
	if status != http.StatusRequestEntityTooLarge || body["error"] != "invalid_request" {
		t.Errorf("oversized token request = %d %v, want 413 invalid_request", status, body["error"])
	}
	if got := s.Stats().Rejections[RejectBodyTooLarge]; got != 1 {
		t.Errorf("Rejections[body_too_large] = %d, want 1", got)
	}
}

func TestBadRequests(t *testing.T) {
	s := newSim(t, Options{})
	tok := s.defaultToken(t)
	if r := s.postRaw(t, "/graphql", tok, []byte("not json")); r.status != http.StatusBadRequest {
		t.Errorf("non-JSON body = %d, want 400", r.status)
	}
	resp, err := http.Get(s.URL + "/graphql")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /graphql = %d, want 405", resp.StatusCode)
	}
	if got := s.Stats().Requests[OpInvalid]; got[400] != 1 || got[405] != 1 {
		t.Errorf("Requests[invalid] = %v, want one 400 and one 405", got)
	}
}

func TestLatencyHonoursContext(t *testing.T) {
	s := newSim(t, Options{CreateLatency: Latency{Fixed: time.Hour}})
	tok := s.defaultToken(t)
	b, _ := json.Marshal(map[string]any{"query": createDoc, "variables": map[string]any{"input": applicant("slow", "")}})
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+tok)
	client := &http.Client{Timeout: 200 * time.Millisecond}
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("createLead with 1h latency answered %d, want a client timeout", resp.StatusCode)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().Requests[OpCreateLead][499] != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("handler did not give up when the client went away: %v", s.Stats().Requests)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := s.Stats().CreateCalls["slow"]; got != 0 {
		t.Errorf("CreateCalls[slow] = %d, want 0 (abandoned before processing)", got)
	}
}

func TestStatsJSON(t *testing.T) {
	s := newSim(t, Options{})
	tok := s.defaultToken(t)
	s.create(t, tok, applicant("j-1", "888880400"))
	s.create(t, tok, applicant("j-1", "888880400"))
	resp, err := http.Get(s.URL + "/_sim/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got Stats
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatalf("decode /_sim/stats: %v", err)
	}
	tests := []struct {
		name      string
		got, want int
	}{
		{"tokensIssued", got.TokensIssued, 1},
		{"leadsCreated", got.LeadsCreated, 2},
		{"createCalls[j-1]", got.CreateCalls["j-1"], 2},
		{"requests[createLead][200]", got.Requests[OpCreateLead][200], 2},
		{"requests[token][200]", got.Requests[OpToken][200], 1},
		{"resultCodes[1015]", got.ResultCodes[1015], 1},
		{"resultCodes[1002]", got.ResultCodes[1002], 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("stats %s = %d, want %d", tc.name, tc.got, tc.want)
			}
		})
	}
	// Stats is a copy: changing it does not change the server's counters.
	snap := s.Stats()
	snap.CreateCalls["j-1"] = 99
	if s.Stats().CreateCalls["j-1"] != 2 {
		t.Error("Stats() shares its maps with the server")
	}
}

func TestLogsLeakNoSecrets(t *testing.T) {
	var logs bytes.Buffer
	s := newSim(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	tok := s.defaultToken(t)
	s.tokenForm(t, map[string][]string{"grant_type": {"client_credentials"}, "client_id": {DefaultClientID}, "client_secret": {"wrong-secret-value"}, "scope": {s.scope()}})
	in := applicant("leak-1", "987650400")
	s.create(t, tok, in)
	s.create(t, tok, in)
	for _, secret := range []string{"987650400", "1990-01-02", DefaultClientSecret, "wrong-secret-value", tok} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("logs contain %q:\n%s", secret[:min(len(secret), 12)], logs.String())
		}
	}
	if !strings.Contains(logs.String(), "leak-1") {
		t.Errorf("logs do not name the lead: %s", logs.String())
	}
}

// TestStatsJSONRequestsOnly: ?requests gives the requests by operation and
// status and nothing else, for pollers (bench/ratebench).
func TestStatsJSONRequestsOnly(t *testing.T) {
	s := newSim(t, Options{})
	tok := s.defaultToken(t)
	s.create(t, tok, applicant("q-1", "888880400"))
	resp, err := http.Get(s.URL + "/_sim/stats?requests")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got Stats
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatalf("decode /_sim/stats?requests: %v", err)
	}
	if got.Requests[OpCreateLead][200] != 1 || got.Requests[OpToken][200] != 1 || len(got.CreateCalls) != 0 || got.LeadsCreated != 0 {
		t.Errorf("/_sim/stats?requests = %+v, want createLead and token 200 once each, and no other counter", got)
	}
}

func TestRegisterFlags(t *testing.T) {
	var o Options
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	o.RegisterFlags(fs)
	err := fs.Parse([]string{
		"--tenant-id", "t1", "--app-id", "a1", "--client-id", "c1", "--client-secret", "s1", "--auto-submit",
		"--token-lifetime", "5s", "--create-latency", "2s", "--create-jitter", "1s", "--submit-latency", "300ms",
		"--rate-limit", "50", "--fail-503", "0.1", "--fail-500", "0.05", "--drop-after", "0.01",
		"--rotate-key-every", "1m", "--max-body", "2048", "--seed", "7", "--rate-limit-change", "150@30s, 0@1m",
		"--echo-pii", "--create-latency-dist", "bimodal:50ms,2s,0.1", "--fail-503-retry-after", "date+2s",
		"--proxy-reset", "0.2", "--proxy-reset-status", "504", "--proxy-reset-body", "html", "--proxy-reset-retry-after", "1.5",
		"--rate-limit-retry-after", "0.05",
		"--fault-op", "submitLead",
	})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	c := o.Clients[0]
	tests := []struct {
		name      string
		got, want any
	}{
		{"tenant", o.TenantID, "t1"}, {"app", o.AppID, "a1"}, {"client id", c.ID, "c1"}, {"secret", c.Secret, "s1"},
		{"auto submit", c.AutoSubmit, true}, {"granted", c.Granted, true}, {"lifetime", o.TokenLifetime, 5 * time.Second},
		{"create latency", o.CreateLatency, Latency{Fixed: 2 * time.Second, Jitter: time.Second, Dist: LatencyDist{Kind: DistBimodal, Fast: 50 * time.Millisecond, Slow: 2 * time.Second, Share: 0.1}}}, {"503 retry-after", o.Fail503RetryAfter, "date+2s"}, {"proxy retry-after", o.ProxyResetRetryAfter, "1.5"}, {"429 retry-after", o.RateLimitRetryAfter, "0.05"}, {"submit latency", o.SubmitLatency.Fixed, 300 * time.Millisecond},
		{"rate", o.RateLimit, 50.0}, {"503", o.Fail503, 0.1}, {"500", o.Fail500, 0.05}, {"drop", o.DropAfter, 0.01},
		{"rotate", o.RotateKeyEvery, time.Minute}, {"max body", o.MaxBodyBytes, int64(2048)}, {"seed", o.Seed, int64(7)},
		{"rate changes", fmt.Sprint(o.RateChanges), fmt.Sprint([]RateChange{{30 * time.Second, 150}, {time.Minute, 0}})},
		{"echo pii", o.EchoPII, true},
		{"proxy reset", o.ProxyReset, 0.2}, {"proxy reset status", o.ProxyResetStatus, 504}, {"proxy reset body", o.ProxyResetBody, ProxyBodyHTML},
		{"fault op", o.FaultOp, OpSubmitLead},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("flag %s = %v, want %v", tc.name, tc.got, tc.want)
			}
		})
	}
	if err := fs.Parse([]string{"--fail-503", "x"}); err == nil {
		t.Error("Parse(--fail-503 x) succeeded, want an error")
	}
	for _, bad := range []string{"150", "150@", "x@30s", "150@30"} {
		if err := fs.Parse([]string{"--rate-limit-change", bad}); err == nil {
			t.Errorf("Parse(--rate-limit-change %s) succeeded, want an error", bad)
		}
	}
}

func smallKey(t *testing.T) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"fraction above 1", Options{Fail503: 1.5}},
		{"lognormal without sigma", Options{CreateLatency: Latency{Dist: LatencyDist{Kind: DistLognormal, Scale: time.Second}}}},
		{"unknown distribution", Options{SubmitLatency: Latency{Dist: LatencyDist{Kind: "uniform"}}}},
		{"proxy reset fraction above 1", Options{ProxyReset: 2}},
		{"proxy reset status 500", Options{ProxyReset: 1, ProxyResetStatus: 500}},
		{"proxy reset body json", Options{ProxyReset: 1, ProxyResetBody: "json"}},
		{"negative rate", Options{RateLimit: -1}},
		{"negative rate change", Options{RateChanges: []RateChange{{time.Second, -1}}}},
		{"rate change at the start", Options{RateChanges: []RateChange{{0, 10}}}},
		{"rate changes out of order", Options{RateChanges: []RateChange{{time.Minute, 10}, {time.Second, 20}}}},
		{"client without id", Options{Clients: []Client{{Secret: "x"}}}},
		{"duplicate client", Options{Clients: []Client{DefaultClient(), DefaultClient()}}},
		{"sub-second token", Options{TokenLifetime: time.Millisecond}},
		{"small signing key", Options{SigningKey: smallKey(t)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if s, err := New(tc.opts); err == nil {
				s.Close()
				t.Errorf("New(%s) succeeded, want an error", tc.name)
			}
		})
	}
}

// TestNoBodyLimitByDefault: every realism knob is off by default, the body
// limit too, in Options and in the flags of `bulkload sim`.
func TestNoBodyLimitByDefault(t *testing.T) {
	s := newSim(t, Options{})
	tok := s.defaultToken(t)
	in := applicant("huge", "")
	in["address2"] = strings.Repeat("x", 3<<19) // 1.5 MiB, over the old 1 MiB default
	if l := s.create(t, tok, in); l.ResultCode != CodeComplete {
		t.Errorf("createLead of a 1.5 MiB body = %d %q, want %d", l.ResultCode, l.Note, CodeComplete)
	}
	if got := s.Stats().Rejections[RejectBodyTooLarge]; got != 0 {
		t.Errorf("Rejections[body_too_large] = %d, want 0", got)
	}
	var o Options
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	o.RegisterFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if o.MaxBodyBytes != 0 {
		t.Errorf("--max-body default = %d, want 0 (no limit)", o.MaxBodyBytes)
	}
}
