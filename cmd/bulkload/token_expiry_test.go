package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

// startExpiresInSim starts a leadsim whose token answers carry expiresIn
// (JSON text) as expires_in.
func startExpiresInSim(t *testing.T, expiresIn string) *sim {
	t.Helper()
	return startTestSimHandler(t, leadsim.Options{}, func(s *leadsim.Server) http.Handler {
		return withExpiresIn(s.Handler(), expiresIn)
	})
}

// withExpiresIn serves h, with expires (JSON text) as every token answer's
// expires_in.
func withExpiresIn(h http.Handler, expires string) http.Handler {
	field := regexp.MustCompile(`"expires_in":\s*[0-9]+`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if strings.HasSuffix(r.URL.Path, "/token") {
			body = field.ReplaceAll(body, []byte(`"expires_in":`+expires))
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(bytes.Clone(body))
	})
}

// TestTokenExpiresInMalformed is issue 18 item 13: a token answer whose
// expires_in is not a whole number of seconds used to give exit 4 "token
// Endpoint unreachable" after every retry. The run now says what was wrong
// with the answer (exit 4: the endpoint is not what it should be), at once,
// and sends nothing; a lifetime as a string of digits or a very large one
// is used.
func TestTokenExpiresInMalformed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, value string
		ok          bool
		reason      string
	}{
		{"text", `"abc"`, false, "is not a number"},
		{"fraction", `1.5`, false, "is not a whole number of seconds"},
		{"exponent", `1e12`, false, "is in exponent notation"},
		{"negative: no lifetime, as before", `-5`, true, ""},
		{"boolean", `true`, false, "is not a number"},
		{"digits as a string", `"3600"`, true, ""},
		{"very large", `99999999999`, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a simulator and a folder of its own
			s := startExpiresInSim(t, tc.value)
			args := slices.Concat([]string{"upload"}, s.args(), []string{"--results", filepath.Join(t.TempDir(), "r.csv"),
				"--progress", "off", "--rate", "0", filepath.Join(samples, "leads.csv")})
			res := runCLI(t, secretEnv(), args...)
			if tc.ok {
				if res.code != app.ExitOK {
					t.Fatalf("expires_in %s: exit %d, want 0\n%s", tc.value, res.code, res.stderr)
				}
				return
			}
			if res.code != app.ExitUnreachable {
				t.Errorf("expires_in %s: exit %d, want %d\n%s", tc.value, res.code, app.ExitUnreachable, res.stderr)
			}
			if !strings.Contains(res.stderr, "expires_in "+tc.value+" "+tc.reason) || strings.Contains(res.stderr, "unreachable") {
				t.Errorf("expires_in %s: the error does not say what is wrong with the answer (want %q, not \"unreachable\"):\n%s", tc.value, "expires_in "+tc.value+" "+tc.reason, res.stderr)
			}
			if n := s.Stats().TokensIssued; n != 1 {
				t.Errorf("expires_in %s: %d tokens requested, want 1 (a malformed answer is not retried)", tc.value, n)
			}
			if n := len(s.Stats().CreateCalls); n > 0 {
				t.Errorf("%d leads sent without a usable token", n)
			}
			res = runCLI(t, secretEnv(), "auth", "check", "--auth-url", s.url, "--tenant-id", leadsim.DefaultTenantID,
				"--client-id", leadsim.DefaultClientID, "--app-id", leadsim.DefaultAppID)
			if res.code != app.ExitUnreachable || !strings.Contains(res.stderr, "expires_in "+tc.value) {
				t.Errorf("auth check, expires_in %s: exit %d, want %d naming expires_in\n%s", tc.value, res.code, app.ExitUnreachable, res.stderr)
			}
		})
	}
}
