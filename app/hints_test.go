package app

import (
	"fmt"
	"testing"

	"github.com/bulkload/bulkload/submitter"
)

// TestFlagHintConfigErrors: submitter.New names the Config fields at fault;
// flagHint puts back the flags that set them, right after each problem,
// so that the command line says what it always said.
func TestFlagHintConfigErrors(t *testing.T) {
	valid := func() submitter.Config {
		return submitter.Config{Endpoint: "https://svc.example/graphql", TokenURL: "https://login.example/t/oauth2/v2.0/token",
			ClientID: "cid", ClientSecret: "secret", Scope: "api://a/.default"}
	}
	tests := []struct {
		name string
		mod  func(*submitter.Config)
		want string
	}{
		{"nothing set", func(c *submitter.Config) { *c = submitter.Config{} },
			"submitter config: endpoint is required (set --endpoint); token URL is required (set --token-url or --auth-url with --tenant-id); " +
				"client id is required (set --client-id); client secret is required (set BULKLOAD_CLIENT_SECRET or --client-secret-file); " +
				"scope is required (set --app-id or --scope)"},
		{"not a URL", func(c *submitter.Config) { c.Endpoint = "ftp://svc.example/graphql" },
			`submitter config: endpoint "ftp://svc.example/graphql" is not an http(s) URL (check --endpoint)`},
		{"plain http endpoint", func(c *submitter.Config) { c.Endpoint = "http://svc.example/graphql" },
			`submitter config: endpoint "http://svc.example/graphql" is plain http to a host that is not this machine: the client secret, the token and the leads would cross the network unencrypted; use https (check --endpoint), or --allow-insecure-http to accept it`},
		{"plain http token URL", func(c *submitter.Config) { c.TokenURL = "http://login.example/token" },
			`submitter config: token URL "http://login.example/token" is plain http to a host that is not this machine: the client secret, the token and the leads would cross the network unencrypted; use https (check --token-url or --auth-url with --tenant-id), or --allow-insecure-http to accept it`},
		{"negative numbers", func(c *submitter.Config) {
			c.Rate, c.StartRate, c.Concurrency, c.MaxAttempts, c.CallTimeout, c.TokenRetries = -1, -2, -3, -4, -5, -6
		}, "submitter config: rate -1 is negative (check --rate); start rate -2 or max rate 0 is negative (check --max-rate); " +
			"concurrency -3, start 0 or max 0 is negative (check --concurrency, --max-concurrency); max attempts -4 is negative (check --max-attempts); " +
			"timeouts and backoff must not be negative (check --timeout); token retries and the response size cap must not be negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := valid()
			tc.mod(&cfg)
			_, err := submitter.New(t.Context(), cfg)
			if err == nil {
				t.Fatal("submitter.New() = nil error")
			}
			if got := flagHint(err).Error(); got != tc.want {
				t.Errorf("flagHint(%q) =\n%s\nwant\n%s", err, got, tc.want)
			}
			// Wrapped, the advice stays right after the library's text.
			wrapped := fmt.Errorf("upload: %w; nothing was sent", err)
			if got, want := flagHint(wrapped).Error(), "upload: "+tc.want+"; nothing was sent"; got != want {
				t.Errorf("flagHint(wrapped) =\n%s\nwant\n%s", got, want)
			}
		})
	}
}
