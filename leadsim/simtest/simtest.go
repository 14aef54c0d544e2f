// Package simtest starts a leadsim simulator for a test, the way cli/cli's
// httpmock gives a test its fake server: one call, cleaned up with the test.
package simtest

import (
	"crypto/rsa"
	"crypto/x509"
	_ "embed"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/bulkload/bulkload/leadsim"
)

// Server is a simulator behind an httptest server on 127.0.0.1, port 0.
type Server struct {
	*leadsim.Server
	URL  string           // base URL, without a trailing slash
	HTTP *httptest.Server // the HTTP server in front of it

	// What a client needs to talk to it: the tenant and app id the
	// simulator runs with and its first registered client.
	TenantID     string
	AppID        string
	ClientID     string
	ClientSecret string
}

// Start starts a simulator with opts and serves it until the test ends;
// t.Cleanup closes both the HTTP server and the simulator.
func Start(t testing.TB, opts leadsim.Options) *Server {
	t.Helper()
	return StartHandler(t, opts, nil)
}

// StartHandler is Start with the simulator's handler wrapped by wrap (nil
// serves it as it is): for tests that count, refuse or delay requests in
// front of the simulator. Without opts.SigningKey the simulator signs with
// SigningKey's.
func StartHandler(t testing.TB, opts leadsim.Options, wrap func(*leadsim.Server) http.Handler) *Server {
	t.Helper()
	if opts.SigningKey == nil {
		opts.SigningKey = SigningKey(t)
	}
	srv, err := leadsim.New(opts)
	if err != nil {
		t.Fatalf("leadsim.New: %v", err)
	}
	h := srv.Handler()
	if wrap != nil {
		h = wrap(srv)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	s := &Server{Server: srv, URL: hs.URL, HTTP: hs}
	var c leadsim.Client
	s.TenantID, s.AppID, c = srv.Identity()
	s.ClientID, s.ClientSecret = c.ID, c.Secret
	return s
}

// Endpoint is the GraphQL endpoint of the lead API.
func (s *Server) Endpoint() string { return s.URL + "/graphql" }

// TokenURL is the simulator's token endpoint for its tenant:
// URL/TENANT/oauth2/v2.0/token, the route leadsim serves.
func (s *Server) TokenURL() string {
	return s.URL + "/" + url.PathEscape(s.TenantID) + "/oauth2/v2.0/token"
}

// Scope is the OAuth2 scope a client asks for: api://APP_ID/.default.
func (s *Server) Scope() string { return "api://" + s.AppID + "/.default" }

// signingKeyPEM is a 2048-bit RSA key for the simulators of tests, public
// like the simulator's credentials (the same key as leadsim's testdata).
//
//go:embed testdata/signing-key.pem
var signingKeyPEM string // a string: read-only

// SigningKey returns the tests' token signing key: a simulator given it
// starts without generating one (about a tenth of a second of CPU each, in
// a suite that starts a hundred). A key rotation still makes a new key.
func SigningKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	blk, _ := pem.Decode([]byte(signingKeyPEM))
	if blk == nil {
		t.Fatal("simtest: testdata/signing-key.pem holds no PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatalf("simtest: parse the test signing key: %v", err)
	}
	return k.(*rsa.PrivateKey)
}
