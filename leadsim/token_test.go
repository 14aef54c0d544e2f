package leadsim

import (
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestTokenErrors(t *testing.T) {
	s := newSim(t, Options{Clients: []Client{
		DefaultClient(),
		{ID: "ungranted", Secret: "s2", Roles: []string{RoleWrite}},
	}})
	good := func() url.Values {
		return url.Values{"grant_type": {"client_credentials"}, "client_id": {DefaultClientID}, "client_secret": {DefaultClientSecret}, "scope": {s.scope()}}
	}
	with := func(k, v string) url.Values {
		f := good()
		if v == "" {
			f.Del(k)
		} else {
			f.Set(k, v)
		}
		return f
	}
	tests := []struct {
		name       string
		form       url.Values
		wantStatus int
		wantError  string
		wantCode   float64
	}{
		{"wrong secret", with("client_secret", "nope"), 401, "invalid_client", 7000215},
		{"unknown client", with("client_id", "who"), 401, "invalid_client", 700016},
		{"wrong scope", with("scope", "api://other/.default"), 400, "invalid_scope", 1002012},
		{"not granted", url.Values{"grant_type": {"client_credentials"}, "client_id": {"ungranted"}, "client_secret": {"s2"}, "scope": {s.scope()}}, 400, "unauthorized_client", 700016},
		{"password grant", with("grant_type", "password"), 400, "unsupported_grant_type", 70003},
		{"no grant type", with("grant_type", ""), 400, "invalid_request", 900144},
		{"no client id", with("client_id", ""), 400, "invalid_request", 900144},
		{"no secret", with("client_secret", ""), 400, "invalid_request", 7000216},
		{"no scope", with("scope", ""), 400, "invalid_request", 900144},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := s.tokenForm(t, tc.form)
			if status != tc.wantStatus || body["error"] != tc.wantError {
				t.Fatalf("token(%v) = %d %v, want %d %s", tc.form, status, body["error"], tc.wantStatus, tc.wantError)
			}
			codes, _ := body["error_codes"].([]any)
			if len(codes) != 1 || codes[0] != tc.wantCode {
				t.Errorf("error_codes = %v, want [%v]", body["error_codes"], tc.wantCode)
			}
			for _, k := range []string{"error_description", "timestamp", "trace_id", "correlation_id"} {
				if v, _ := body[k].(string); v == "" {
					t.Errorf("field %s missing in %v", k, body)
				}
			}
			if d, _ := body["error_description"].(string); strings.Contains(d, DefaultClientSecret) || strings.Contains(d, "nope") {
				t.Errorf("error_description leaks the secret: %q", d)
			}
		})
	}
	st := s.Stats()
	for kind, want := range map[string]int{"invalid_client": 2, "invalid_scope": 1, "unauthorized_client": 1, "unsupported_grant_type": 1, "invalid_request": 4} {
		if got := st.Rejections[kind]; got != want {
			t.Errorf("Rejections[%q] = %d, want %d", kind, got, want)
		}
	}
	if got := st.Requests[OpToken][401]; got != 2 {
		t.Errorf("Requests[token][401] = %d, want 2", got)
	}
}

func TestTokenSuccessAndClaims(t *testing.T) {
	s := newSim(t, Options{TokenLifetime: 5 * time.Second})
	status, body := s.tokenForm(t, url.Values{"grant_type": {"client_credentials"}, "client_id": {DefaultClientID}, "client_secret": {DefaultClientSecret}, "scope": {s.scope()}})
	if status != 200 || body["token_type"] != "Bearer" || body["expires_in"] != float64(5) || body["ext_expires_in"] != float64(5) {
		t.Fatalf("token = %d %v, want 200 Bearer expires_in 5", status, body)
	}
	raw, _ := body["access_token"].(string)
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(raw, claims); err != nil {
		t.Fatalf("parse token: %v", err)
	}
	now := s.Now().Unix()
	want := map[string]any{"iss": "https://sts.leadsim.local/sim-tenant/", "aud": DefaultAppID, "tid": DefaultTenantID, "azp": DefaultClientID, "appid": DefaultClientID,
		"iat": float64(now), "nbf": float64(now), "exp": float64(now + 5)}
	for k, v := range want {
		if claims[k] != v {
			t.Errorf("claim %s = %v, want %v", k, claims[k], v)
		}
	}
	if roles, _ := claims["roles"].([]any); len(roles) != 2 || roles[0] != RoleWrite || roles[1] != RoleRead {
		t.Errorf("claim roles = %v, want [Lead.Write Lead.Read]", claims["roles"])
	}
	if got := s.Stats().TokensIssued; got != 1 {
		t.Errorf("TokensIssued = %d, want 1", got)
	}
}

func TestTokenBasicAuth(t *testing.T) {
	s := newSim(t, Options{})
	req, err := http.NewRequest(http.MethodPost, s.tokenURL(), strings.NewReader(url.Values{"grant_type": {"client_credentials"}, "scope": {s.scope()}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(DefaultClientID, DefaultClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token with Basic auth: status %d, want 200", resp.StatusCode)
	}
}

func TestTokenWrongTenant(t *testing.T) {
	s := newSim(t, Options{})
	resp, err := http.PostForm(tokenURL(s.URL, "other-tenant"), url.Values{"grant_type": {"client_credentials"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("token of unknown tenant: status %d, want 400", resp.StatusCode)
	}
}

func TestUnauthenticated(t *testing.T) {
	// Parallel: a simulator of its own.
	t.Parallel()
	s := newSim(t, Options{TokenLifetime: 10 * time.Second})
	valid := s.defaultToken(t)
	expired := s.defaultToken(t)

	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := s.Now()
	forged, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"iss": issuer(DefaultTenantID), "aud": DefaultAppID, "azp": DefaultClientID, "roles": []string{RoleWrite, RoleRead},
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}).SignedString(otherKey)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"errors":[{"message":"Unauthorized","extensions":{"code":"UNAUTHENTICATED"}}]}`
	// The valid token works before the clock moves, and is cached.
	if l := s.create(t, valid, applicant("u-1", "123450001")); l.ResultCode != CodeComplete {
		t.Fatalf("createLead with a valid token = %d, want %d", l.ResultCode, CodeComplete)
	}
	tests := []struct {
		name    string
		token   string
		prepare func()
	}{
		{"missing", "", func() {}},
		{"garbage", "not-a-jwt", func() {}},
		{"forged", forged, func() {}},
		{"expired", expired, func() { s.Advance(11 * time.Second) }},
		{"rotated key", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok := tc.token
			if tc.prepare == nil {
				tok = s.defaultToken(t)
				s.RotateKey()
			} else {
				tc.prepare()
			}
			r := s.post(t, "/graphql", tok, createDoc, map[string]any{"input": applicant("u-2", "")})
			if r.status != http.StatusUnauthorized || r.raw != want {
				t.Errorf("createLead with %s token = %d %s, want 401 %s", tc.name, r.status, r.raw, want)
			}
		})
	}
	if got := s.Stats().Rejections[RejectUnauthenticated]; got != len(tests) {
		t.Errorf("Rejections[unauthenticated] = %d, want %d", got, len(tests))
	}
	if got := s.Stats().CreateCalls["u-2"]; got != 0 {
		t.Errorf("CreateCalls[u-2] = %d, want 0", got)
	}
}

func TestRotateKeyRoute(t *testing.T) {
	// Parallel: a simulator of its own.
	t.Parallel()
	s := newSim(t, Options{})
	tok := s.defaultToken(t)
	resp, err := http.Post(s.URL+"/_sim/rotate-key", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if r := s.post(t, "/graphql", tok, createDoc, map[string]any{"input": applicant("r-1", "")}); r.status != http.StatusUnauthorized {
		t.Errorf("createLead after POST /_sim/rotate-key = %d, want 401", r.status)
	}
	if l := s.create(t, s.defaultToken(t), applicant("r-1", "")); l.ResultCode != CodeComplete {
		t.Errorf("createLead with a new token = %d, want %d", l.ResultCode, CodeComplete)
	}
}

func TestRotateKeyEvery(t *testing.T) {
	// Parallel: a simulator of its own.
	t.Parallel()
	s := newSim(t, Options{RotateKeyEvery: 50 * time.Millisecond})
	tok := s.defaultToken(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := s.post(t, "/graphql", tok, `query { lead(id: "x") { id } }`, nil)
		if r.status == http.StatusUnauthorized {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("token still accepted 5s after a 50ms rotation interval: status %d", r.status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTokenLivesItsLifetime: a token issued mid-second must not expire
// before expires_in seconds have passed, or a client that caches it for
// expires_in gets 401s.
func TestTokenLivesItsLifetime(t *testing.T) {
	s := newSim(t, Options{TokenLifetime: 2 * time.Second})
	s.Advance(900 * time.Millisecond)
	tok := s.defaultToken(t)
	const doc = `query { lead(id: "x") { id } }`
	tests := []struct {
		name       string
		advance    time.Duration
		wantStatus int
	}{
		{"just issued", 0, http.StatusOK},
		{"1.95s later", 1950 * time.Millisecond, http.StatusOK},
		{"3.2s later", 1250 * time.Millisecond, http.StatusUnauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s.Advance(tc.advance)
			if r := s.post(t, "/graphql", tok, doc, nil); r.status != tc.wantStatus {
				t.Errorf("lead query %s = %d, want %d", tc.name, r.status, tc.wantStatus)
			}
		})
	}
}

// TestTokenClaimsChecked proves the audience and issuer checks: a token
// signed by the simulator's own key is refused when either claim is wrong,
// and accepted when both are right (so the refusals come from the claims,
// not from the way the test signs).
func TestTokenClaimsChecked(t *testing.T) {
	s := newSim(t, Options{})
	now := s.Now()
	mint := func(t *testing.T, iss, aud string) string {
		t.Helper()
		tok, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
			"iss": iss, "aud": aud, "azp": DefaultClientID, "roles": []string{RoleWrite, RoleRead},
			"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		}).SignedString(s.opts.SigningKey)
		if err != nil {
			t.Fatalf("sign test token: %v", err)
		}
		return tok
	}
	const unauthorized = `{"errors":[{"message":"Unauthorized","extensions":{"code":"UNAUTHENTICATED"}}]}`
	tests := []struct {
		name, iss, aud string
		wantStatus     int
	}{
		{"right issuer and audience", issuer(DefaultTenantID), DefaultAppID, http.StatusOK},
		{"wrong audience", issuer(DefaultTenantID), "other-app", http.StatusUnauthorized},
		{"wrong issuer", issuer("other-tenant"), DefaultAppID, http.StatusUnauthorized},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("claims-%d", i)
			r := s.post(t, "/graphql", mint(t, tc.iss, tc.aud), createDoc, map[string]any{"input": applicant(id, "")})
			if r.status != tc.wantStatus {
				t.Fatalf("createLead with iss %q aud %q = %d %s, want %d", tc.iss, tc.aud, r.status, r.raw, tc.wantStatus)
			}
			if tc.wantStatus == http.StatusUnauthorized && r.raw != unauthorized {
				t.Errorf("createLead with iss %q aud %q body = %s, want %s", tc.iss, tc.aud, r.raw, unauthorized)
			}
			wantCalls := 0
			if tc.wantStatus == http.StatusOK {
				wantCalls = 1
			}
			if got := s.Stats().CreateCalls[id]; got != wantCalls {
				t.Errorf("CreateCalls[%s] = %d, want %d", id, got, wantCalls)
			}
		})
	}
}

// TestGrantRoles: roles granted or revoked (by the method or POST
// /_sim/grant) are in the tokens issued after, not in those issued before.
func TestGrantRoles(t *testing.T) {
	s := newSim(t, Options{})
	roles := func(raw string) []any {
		t.Helper()
		claims := jwt.MapClaims{}
		if _, _, err := jwt.NewParser().ParseUnverified(raw, claims); err != nil {
			t.Fatalf("parse token: %v", err)
		}
		r, _ := claims["roles"].([]any)
		return r
	}
	before := s.defaultToken(t)
	if err := s.GrantRoles(DefaultClientID, RoleWrite); err != nil {
		t.Fatal(err)
	}
	if got := roles(s.defaultToken(t)); len(got) != 1 || got[0] != RoleWrite {
		t.Errorf("roles after GrantRoles(Write) = %v, want [%s]", got, RoleWrite)
	}
	if got := roles(before); len(got) != 2 {
		t.Errorf("a token issued before keeps its roles: %v, want both", got)
	}
	resp, err := http.Post(s.URL+"/_sim/grant?client="+DefaultClientID+"&role="+RoleWrite+"&role="+RoleRead, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("POST /_sim/grant = %d, want 204", resp.StatusCode)
	}
	if got := roles(s.defaultToken(t)); len(got) != 2 || got[1] != RoleRead {
		t.Errorf("roles after POST /_sim/grant = %v, want [%s %s]", got, RoleWrite, RoleRead)
	}
	if err := s.GrantRoles("nobody", RoleRead); err == nil {
		t.Error("GrantRoles of an unknown client did not fail")
	}
}
