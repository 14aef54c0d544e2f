package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{"simulator", []string{"-n", "40", "-c", "4"}, 0, "HTTP 200: 40\n"},
		{"bare baseline", []string{"-n", "40", "-c", "4", "-bare"}, 0, "HTTP 200: 40\n"},
		{"wrong secret", []string{"-n", "1", "-client-secret", "nope"}, 1, ""},
		{"bad count", []string{"-n", "0"}, 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tc.args, &out, &errOut)
			if code != tc.wantCode || !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("run(%q) = %d, output %q (stderr %q), want %d with %q", tc.args, code, out.String(), errOut.String(), tc.wantCode, tc.wantOut)
			}
			if strings.Contains(errOut.String(), "nope") {
				t.Errorf("stderr shows the secret: %q", errOut.String())
			}
		})
	}
}

func TestLeadBodyIsDistinct(t *testing.T) {
	a, b := string(leadBody(nil, 1)), string(leadBody(nil, 2))
	if a == b || !strings.Contains(a, `"leadId":"load-1"`) || !strings.Contains(a, `"socialSecurityNumber":"100000001"`) {
		t.Errorf("leadBody(1) = %s, leadBody(2) = %s, want distinct leads with leadId load-N and SSN 1000000NN", a, b)
	}
}
