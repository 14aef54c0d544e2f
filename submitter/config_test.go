package submitter

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// validConfig is a Config that New accepts.
func validConfig() Config {
	return Config{Endpoint: "https://svc.example/graphql", TokenURL: "https://login.example/t/oauth2/v2.0/token",
		ClientID: "cid", ClientSecret: testSecret, Scope: "api://a/.default"}
}

// TestConfigErrors: New refuses a bad Config with a *ConfigError that
// names each setting at fault by its Config field and what is wrong, in
// words that name no command-line flag.
func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		want []string // "Fields problem: text" of each SettingError
	}{
		{"nothing set", func(c *Config) { *c = Config{} }, []string{
			"Endpoint missing: endpoint is required",
			"TokenURL missing: token URL is required",
			"ClientID missing: client id is required",
			"ClientSecret missing: client secret is required",
			"Scope missing: scope is required",
		}},
		{"not a URL", func(c *Config) { c.Endpoint = "ftp://svc.example/graphql" }, []string{
			`Endpoint not-url: endpoint "ftp://svc.example/graphql" is not an http(s) URL`,
		}},
		{"plain http to another machine", func(c *Config) { c.TokenURL = "http://login.example/token" }, []string{
			`TokenURL insecure: token URL "http://login.example/token" is plain http to a host that is not this machine: the client secret, the token and the leads would cross the network unencrypted; use https, or set AllowInsecureHTTP to accept it`,
		}},
		{"negative numbers", func(c *Config) {
			c.Rate, c.MaxRate, c.Concurrency, c.MaxAttempts, c.BackoffMax, c.MaxResponseBytes = -1, -2, -3, -4, -5, -6
		}, []string{
			"Rate negative: rate -1 is negative",
			"StartRate,MaxRate negative: start rate 0 or max rate -2 is negative",
			"Concurrency,StartConcurrency,MaxConcurrency negative: concurrency -3, start 0 or max 0 is negative",
			"MaxAttempts negative: max attempts -4 is negative",
			"CallTimeout,BackoffBase,BackoffMax negative: timeouts and backoff must not be negative",
			"TokenRetries,MaxResponseBytes negative: token retries and the response size cap must not be negative",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := validConfig()
			tc.mod(&cfg)
			_, err := New(t.Context(), cfg)
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("New() = %v, want a *ConfigError", err)
			}
			var got []string
			for _, p := range ce.Problems {
				got = append(got, fmt.Sprintf("%s %s: %s", strings.Join(p.Fields, ","), p.Problem, p.Error()))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("New() problems =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("New() = %q, names a flag", err)
			}
			var se *SettingError
			if !errors.As(err, &se) || se != ce.Problems[0] {
				t.Errorf("errors.As(*SettingError) = %v, want the first problem", se)
			}
		})
	}
	if _, err := New(t.Context(), validConfig()); err != nil {
		t.Errorf("New(valid) = %v", err)
	}
}
