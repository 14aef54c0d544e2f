package leadsim

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/internal/fakeclock"
)

// sim is a simulator behind an httptest server, with a movable clock.
type sim struct {
	*Server
	URL string
	hs  *httptest.Server

	*fakeclock.Clock // the simulator's clock (Options.Now), moved by the test
}

func newSim(t *testing.T, opts Options) *sim {
	t.Helper()
	sm := &sim{Clock: fakeclock.New(time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC))}
	if opts.Now == nil {
		opts.Now = sm.Now
	}
	if opts.SigningKey == nil {
		opts.SigningKey = testKey(t)
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	sm.Server = srv
	sm.hs = httptest.NewServer(srv.Handler())
	sm.URL = sm.hs.URL
	t.Cleanup(func() {
		sm.hs.Close()
		srv.Close()
	})
	return sm
}

// testKey returns the committed test signing key: parsing it is fast where
// making a key takes seconds under -race on a busy machine.
func testKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	b, err := os.ReadFile("testdata/signing-key.pem")
	if err != nil {
		t.Fatalf("read test key: %v", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatal("testdata/signing-key.pem holds no PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatalf("parse test key: %v", err)
	}
	return k.(*rsa.PrivateKey)
}

func (s *sim) tokenURL() string { return tokenURL(s.URL, s.opts.TenantID) }

// tokenURL is the simulator's token endpoint at base for tenant (the route
// it serves: base/tenant/oauth2/v2.0/token).
func tokenURL(base, tenant string) string {
	return base + "/" + url.PathEscape(tenant) + "/oauth2/v2.0/token"
}

func (s *sim) scope() string { return "api://" + s.opts.AppID + "/.default" }

// tokenForm posts a token request and returns the status and decoded body.
func (s *sim) tokenForm(t *testing.T, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(s.tokenURL(), form)
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("decode token answer (status %d): %v", resp.StatusCode, err)
	}
	return resp.StatusCode, body
}

// token gets an access token for the client.
func (s *sim) token(t *testing.T, id, secret string) string {
	t.Helper()
	status, body := s.tokenForm(t, url.Values{
		"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {s.scope()},
	})
	tok, _ := body["access_token"].(string)
	if status != http.StatusOK || tok == "" {
		t.Fatalf("token for %s: status %d, body %v", id, status, body)
	}
	return tok
}

func (s *sim) defaultToken(t *testing.T) string {
	t.Helper()
	return s.token(t, DefaultClientID, DefaultClientSecret)
}

// gqlResult is a decoded GraphQL answer.
type gqlResult struct {
	status int
	header http.Header
	raw    string
	Data   map[string]json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

func (r gqlResult) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// post sends a GraphQL request to path with token (none if "").
func (s *sim) post(t *testing.T, path, token, query string, vars map[string]any) gqlResult {
	t.Helper()
	b, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		t.Fatalf("encode request: %v", err)
	}
	return s.postRaw(t, path, token, b)
}

func (s *sim) postJSON(t *testing.T, path, token string, body map[string]any) gqlResult {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatalf("encode request: %v", err)
	}
	return s.postRaw(t, path, token, b)
}

func (s *sim) postRaw(t *testing.T, path, token string, body []byte) gqlResult {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read answer of %s: %v", path, err)
	}
	r := gqlResult{status: resp.StatusCode, header: resp.Header, raw: strings.TrimSpace(string(raw))}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("decode answer of %s (status %d): %v: %s", path, resp.StatusCode, err, raw)
	}
	return r
}

const createDoc = `mutation CreateLead($input: LeadInput!) { createLead(input: $input) { id resultCode note partnerLeadId bidValue } }`

type wireLead struct {
	ID            string  `json:"id"`
	ResultCode    int     `json:"resultCode"`
	Note          string  `json:"note"`
	PartnerLeadID *string `json:"partnerLeadId"`
	BidValue      *string `json:"bidValue"`
}

// create runs createLead and returns the lead, failing on any error.
func (s *sim) create(t *testing.T, token string, input map[string]any) wireLead {
	t.Helper()
	r := s.post(t, "/graphql", token, createDoc, map[string]any{"input": input})
	if r.status != http.StatusOK || len(r.Errors) > 0 {
		t.Fatalf("createLead: status %d: %s", r.status, r.raw)
	}
	var l wireLead
	if err := json.Unmarshal(r.Data["createLead"], &l); err != nil {
		t.Fatalf("decode createLead: %v", err)
	}
	return l
}

// applicant returns a valid consenting input with the given SSN and leadId;
// ssn "" leaves socialSecurityNumber out, as a client does for a lead
// without one ("" itself breaks the 9-digit rule).
func applicant(leadID, ssn string) map[string]any {
	in := map[string]any{
		"firstName": "Ada", "lastName": "Lovelace", "dateOfBirth": "1990-01-02",
		"email": leadID + "@example.com", "homePhone": "5550000000",
		"zipCode": "12345", "state": "NY", "loanAmount": 5000,
		"leadId": leadID, "socialSecurityNumber": ssn, "termsConsent": true,
	}
	if ssn == "" {
		delete(in, "socialSecurityNumber")
	}
	return in
}
