package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/token"
)

// TestInsecureHTTPRefused: plain http:// to a host that is not loopback is
// refused before anything is sent, unless --allow-insecure-http. The
// simulator listens on 127.0.0.1; 0.0.0.0 reaches it on Linux but is not a
// loopback address, so it stands for a remote host here.
func TestInsecureHTTPRefused(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	remote := strings.Replace(s.url, "127.0.0.1", "0.0.0.0", 1)
	tokenURL := token.URL(remote, leadsim.DefaultTenantID)
	auth := []string{"--token-url", tokenURL, "--client-id", leadsim.DefaultClientID, "--app-id", leadsim.DefaultAppID}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"auth check, http token URL refused", append([]string{"auth", "check"}, auth...), app.ExitUsage, "--allow-insecure-http"},
		{"auth check, --allow-insecure-http", append([]string{"auth", "check", "--allow-insecure-http"}, auth...), app.ExitOK, "token OK"},
		{"upload, http endpoint refused", append(append([]string{"upload", "--endpoint", remote + "/graphql"}, auth...),
			"--results", filepath.Join(t.TempDir(), "r.csv"), filepath.Join(samples, "leads.csv")), app.ExitUsage, "unencrypted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := s.Stats().TokensIssued
			res := runCLI(t, secretEnv(), tc.args...)
			out := res.stdout + res.stderr
			if res.code != tc.code || !strings.Contains(out, tc.want) {
				t.Fatalf("exit = %d, want %d and %q in:\n%s", res.code, tc.code, tc.want, out)
			}
			if issued := s.Stats().TokensIssued - before; tc.code != app.ExitOK && issued != 0 {
				t.Errorf("%d tokens issued, want none: the secret went over plain http", issued)
			}
			if strings.Contains(out, simSecret) {
				t.Error("the secret appears in the output")
			}
		})
	}
}
