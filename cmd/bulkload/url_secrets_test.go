package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/token"
)

// TestURLSecretsNeverPrinted is issue 18 item 10: user info and query
// values of --endpoint, the token URL and --pushgateway are credentials.
// None of them reaches stderr (text or JSON log, the summary record
// included), the --summary-json file or auth check's output: not in the
// settings, not in the warning of a failed push, not in the error of a
// token endpoint that cannot be reached.
func TestURLSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	const (
		endpointPass  = "EndpointPassw0rd"
		endpointQuery = "EndpointQueryKey"
		pushPass      = "PushPassw0rd"
		pushQuery     = "PushQueryToken"
		tokenQuery    = "TokenQuerySecret"
	)
	secrets := []string{endpointPass, endpointQuery, pushPass, pushQuery, tokenQuery}
	host := strings.TrimPrefix(s.url, "http://")
	endpoint := "http://partner:" + endpointPass + "@" + host + "/graphql?api_key=" + endpointQuery
	push := "http://ops:" + pushPass + "@127.0.0.1:1/?token=" + pushQuery
	tokenURL := token.URL(s.url, leadsim.DefaultTenantID) + "?code=" + tokenQuery
	check := func(t *testing.T, what, text string) {
		t.Helper()
		for _, sec := range secrets {
			if strings.Contains(text, sec) {
				t.Errorf("%s shows a URL's credential %q:\n%s", what, sec, text)
			}
		}
	}
	input := filepath.Join(samples, "leads.csv")
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			summary := filepath.Join(dir, "summary.json")
			res := runCLI(t, secretEnv(), "upload", "--endpoint", endpoint, "--token-url", tokenURL,
				"--client-id", leadsim.DefaultClientID, "--scope", "api://"+leadsim.DefaultAppID+"/.default",
				"--pushgateway", push, "--log-format", format, "--summary-json", summary,
				"--results", filepath.Join(dir, "r.csv"), "--progress", "off", "--rate", "0", input)
			if res.code != app.ExitOK {
				t.Fatalf("upload: exit %d, want 0\n%s", res.code, res.stderr)
			}
			if !strings.Contains(res.stderr, "pushgateway") {
				t.Errorf("no warning about the failed push:\n%s", res.stderr)
			}
			check(t, "stderr", res.stderr)
			b, err := os.ReadFile(summary)
			if err != nil {
				t.Fatal(err)
			}
			check(t, "--summary-json", string(b))
			if !strings.Contains(string(b), "REDACTED@"+host) {
				t.Errorf("--summary-json does not show the endpoint redacted:\n%s", b)
			}
		})
	}
	t.Run("token endpoint unreachable", func(t *testing.T) {
		dead := "http://127.0.0.1:1/token?code=" + tokenQuery
		res := runCLI(t, secretEnv(), "upload", "--endpoint", endpoint, "--token-url", dead,
			"--client-id", leadsim.DefaultClientID, "--scope", "api://"+leadsim.DefaultAppID+"/.default",
			"--timeout", "1s", "--results", filepath.Join(t.TempDir(), "r.csv"), "--progress", "off", input)
		if res.code != app.ExitUnreachable {
			t.Fatalf("upload: exit %d, want %d\n%s", res.code, app.ExitUnreachable, res.stderr)
		}
		check(t, "stderr", res.stderr)
		res = runCLI(t, secretEnv(), "auth", "check", "--token-url", dead, "--client-id", leadsim.DefaultClientID,
			"--scope", "api://"+leadsim.DefaultAppID+"/.default", "--timeout", "1s")
		check(t, "auth check", res.stdout+res.stderr)
	})
	t.Run("auth check", func(t *testing.T) {
		res := runCLI(t, secretEnv(), "auth", "check", "--token-url", tokenURL, "--client-id", leadsim.DefaultClientID,
			"--scope", "api://"+leadsim.DefaultAppID+"/.default")
		if res.code != app.ExitOK {
			t.Fatalf("auth check: exit %d\n%s", res.code, res.stderr)
		}
		check(t, "auth check", res.stdout+res.stderr)
	})
}
