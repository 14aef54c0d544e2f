package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/token"
)

func TestAuthCheck(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	authArgs := s.args()[2:] // without --endpoint
	cases := []struct {
		name   string
		secret string
		args   []string
		code   int
		want   string
	}{
		{"good", simSecret, authArgs, app.ExitOK, "Lead.Write"},
		{"wrong secret", "wrong-secret-42", authArgs, app.ExitAuth, "invalid_client"},
		{"wrong scope", simSecret, []string{"--auth-url", s.url, "--tenant-id", leadsim.DefaultTenantID, "--client-id", leadsim.DefaultClientID, "--app-id", "other-app"}, app.ExitAuth, "--app-id"},
		{"unknown client", simSecret, []string{"--auth-url", s.url, "--tenant-id", leadsim.DefaultTenantID, "--client-id", "nobody", "--app-id", leadsim.DefaultAppID}, app.ExitAuth, "--client-id"},
		{"missing settings", simSecret, nil, app.ExitUsage, "--client-id"},
		{"simulate", "", []string{"--simulate"}, app.ExitOK, "expires at"},
		// --endpoint runs upload's preflight, with upload's exit statuses.
		{"endpoint answers", simSecret, s.args(), app.ExitOK, "answered the preflight query"},
		{"dead endpoint", simSecret, append(slices.Clone(authArgs), "--endpoint", "http://127.0.0.1:1/graphql", "--timeout", "5s"), app.ExitUnreachable, "127.0.0.1:1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"BULKLOAD_CLIENT_SECRET": tc.secret}
			res := runCLI(t, env, append([]string{"auth", "check"}, tc.args...)...)
			out := res.stdout + res.stderr
			if res.code != tc.code {
				t.Fatalf("auth check exit = %d, want %d\n%s", res.code, tc.code, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("auth check output lacks %q:\n%s", tc.want, out)
			}
			if tc.secret != "" && tc.code != app.ExitOK && strings.Contains(out, tc.secret) {
				t.Error("the secret appears in the output")
			}
			if strings.Contains(out, "eyJ") {
				t.Error("the output contains what looks like a JWT")
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one poller.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSimCommandServesWhatItPrints starts `bulkload sim`, takes the upload
// command line it prints and runs it.
func TestSimCommandServesWhatItPrints(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"sim", "--addr", "127.0.0.1:0"}, func(string) string { return "" }, nil, &out, &errb)
	}()
	var cmdline string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && cmdline == ""; time.Sleep(10 * time.Millisecond) {
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "bulkload upload ") {
				cmdline = strings.TrimSpace(l)
			}
		}
	}
	if cmdline == "" {
		cancel()
		t.Fatalf("sim printed no upload command line:\n%s\n%s", out.String(), errb.String())
	}
	args := strings.Fields(cmdline)[1:]
	args[len(args)-1] = filepath.Join(samples, "leads.csv")
	args = append(args[:len(args)-1], "--results", filepath.Join(t.TempDir(), "r.csv"), "--rate", "0", args[len(args)-1])
	res := runCLI(t, nil, args...)
	if res.code != app.ExitOK {
		t.Errorf("the printed upload command exit = %d\n%s", res.code, res.stderr)
	}
	// The secret file is in a private directory of its own, not at a
	// fixed path another user could plant, and goes when sim stops.
	secretFile, _ := argValueOf(args, "--client-secret-file")
	if st, err := os.Stat(filepath.Dir(secretFile)); err != nil || st.Mode().Perm() != 0o700 || filepath.Dir(secretFile) == os.TempDir() {
		t.Errorf("the secret file %s is not in a private directory of its own (%v, %v)", secretFile, st, err)
	}
	cancel()
	select {
	case code := <-done:
		if code != app.ExitOK {
			t.Errorf("sim exit after cancel = %d, want 0\n%s", code, errb.String())
		}
		if _, err := os.Stat(secretFile); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the secret file %s is left after sim stopped (%v)", secretFile, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("sim did not stop after its context ended")
	}
}

// TestAlternativeSettingsPrecedence checks that a flag beats an alternative
// setting from the environment or the config file: --auth-url/--tenant-id
// over BULKLOAD_TOKEN_URL, --app-id over a scope in the config file.
func TestAlternativeSettingsPrecedence(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bulkload.yaml")
	wrongScope := "api://not-this-app/.default"
	// One config file for every command: upload's and sim's settings in
	// it must not stop auth check or validate.
	if err := os.WriteFile(cfg, []byte("scope: "+wrongScope+"\nconcurrency: 4\nrate: 10\nrate-limit: 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"BULKLOAD_CLIENT_SECRET": simSecret,
		"BULKLOAD_TOKEN_URL":     token.URL(s.url, "wrong-tenant"),
	}
	args := []string{"auth", "check", "--config", cfg, "--auth-url", s.url, "--tenant-id", leadsim.DefaultTenantID,
		"--client-id", leadsim.DefaultClientID, "--app-id", leadsim.DefaultAppID}
	res := runCLI(t, env, args...)
	if res.code != app.ExitOK {
		t.Fatalf("auth check exit = %d, want 0 (flags must beat the environment's token URL and the file's scope)\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "/"+leadsim.DefaultTenantID+"/oauth2") {
		t.Errorf("token URL not derived from the flags:\n%s", res.stdout)
	}

	// Without the flags, the environment's token URL is used (and fails).
	res = runCLI(t, env, "auth", "check", "--config", cfg, "--client-id", leadsim.DefaultClientID)
	if res.code != app.ExitAuth {
		t.Errorf("auth check with the environment's wrong token URL exit = %d, want %d\n%s", res.code, app.ExitAuth, res.stderr)
	}

	// The same file serves validate; a key no command takes is refused.
	if res := runCLI(t, nil, "validate", "--config", cfg, "--results", filepath.Join(dir, "r.csv"), filepath.Join(samples, "leads.csv")); res.code != app.ExitOK {
		t.Errorf("validate with a shared config file exit = %d\n%s", res.code, res.stderr)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("concurency: 4\n"), 0o600)
	if res := runCLI(t, nil, "validate", "--config", bad, filepath.Join(samples, "leads.csv")); res.code != app.ExitUsage || !strings.Contains(res.stderr, "concurency") {
		t.Errorf("a misspelt key: exit %d, stderr:\n%s", res.code, res.stderr)
	}
}

// TestSecretSettings: the environment's secret beats a secret file named in
// the config file; --auth-url needs --tenant-id; and `bulkload sim` never
// takes (and prints) the real BULKLOAD_CLIENT_SECRET as its fake one.
func TestSecretSettings(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bulkload.yaml")
	if err := os.WriteFile(cfg, []byte("client-secret-file: "+filepath.Join(dir, "missing-secret")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	authArgs := append([]string{"auth", "check", "--config", cfg}, s.args()[2:]...)
	if res := runCLI(t, secretEnv(), authArgs...); res.code != app.ExitOK {
		t.Errorf("BULKLOAD_CLIENT_SECRET with a secret file in the config file: exit %d, want 0\n%s", res.code, res.stderr)
	}
	res := runCLI(t, secretEnv(), "auth", "check", "--auth-url", s.url, "--client-id", leadsim.DefaultClientID, "--app-id", leadsim.DefaultAppID)
	if res.code != app.ExitUsage || !strings.Contains(res.stderr, "--tenant-id") {
		t.Errorf("--auth-url without --tenant-id: exit %d, want %d and a hint\n%s", res.code, app.ExitUsage, res.stderr)
	}

	const real = "PROD-SECRET-do-not-print-8472"
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"sim", "--addr", "127.0.0.1:0"}, func(k string) string {
			if k == "BULKLOAD_CLIENT_SECRET" {
				return real
			}
			return ""
		}, nil, &out, &errb)
	}()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !strings.Contains(out.String(), "bulkload upload"); {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if !strings.Contains(out.String(), leadsim.DefaultClientSecret) || strings.Contains(out.String()+errb.String(), real) {
		t.Errorf("sim took its secret from BULKLOAD_CLIENT_SECRET or printed it:\n%s", out.String())
	}
}

// argValueOf returns the value after flag in args.
func argValueOf(args []string, flag string) (string, bool) {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// TestAuthCheckOpaqueToken: an identity provider that issues opaque access
// tokens (not JWTs) gets no claim about roles it cannot read: auth check
// says so and points to --endpoint, which asks the service.
func TestAuthCheckOpaqueToken(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"opaque-7f3a9c","token_type":"Bearer","expires_in":3600}`)
	}))
	defer idp.Close()
	args := []string{"auth", "check", "--token-url", idp.URL + "/token", "--client-id", "c", "--scope", "s"}
	res := runCLI(t, map[string]string{"BULKLOAD_CLIENT_SECRET": "x"}, args...)
	if res.code != app.ExitOK || !strings.Contains(res.stdout, "opaque") || !strings.Contains(res.stdout, "--endpoint") || strings.Contains(res.stdout, "lacks Lead.Write") {
		t.Errorf("auth check with an opaque token: exit %d, want 0, roles unknown and a pointer to --endpoint, no claim about Lead.Write\n%s%s", res.code, res.stdout, res.stderr)
	}
	// With --endpoint the service answers (the simulator refuses a token
	// it did not issue: exit 3, as upload's preflight would).
	res = runCLI(t, map[string]string{"BULKLOAD_CLIENT_SECRET": "x"}, append(args, "--endpoint", s.url+"/graphql")...)
	if res.code != app.ExitAuth || !strings.Contains(res.stderr, "refused the access token") {
		t.Errorf("auth check --endpoint with a token the service refuses: exit %d, want %d\n%s%s", res.code, app.ExitAuth, res.stdout, res.stderr)
	}
}
