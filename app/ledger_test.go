package app

import (
	"strings"
	"testing"
)

// TestLedgerLocationWithoutStateFolder: with neither XDG_STATE_HOME nor
// HOME (a container image without HOME), an upload that names no ledger
// stops before sending with a message that says what to set; a state
// folder or --ledger is used as given.
func TestLedgerLocationWithoutStateFolder(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	for _, tc := range []struct {
		name     string
		flag     string
		vars     map[string]string
		want     string   // the location; "" for an error
		wantText []string // in the error
	}{
		{"no state folder", "", nil, "", []string{"XDG_STATE_HOME", "HOME", "nothing was sent", "Set XDG_STATE_HOME to a folder", "--ledger PATH"}},
		{"relative HOME", "", map[string]string{"HOME": "home"}, "", []string{"Set XDG_STATE_HOME"}},
		{"state folder", "", map[string]string{"XDG_STATE_HOME": "/data/results"}, "/data/results/bulkload/ledger.sqlite", nil},
		{"HOME", "", map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/bulkload/ledger.sqlite", nil},
		{"flag", "/var/lib/b/ledger.sqlite", nil, "/var/lib/b/ledger.sqlite", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &LedgerOptions{Location: tc.flag}
			got, err := o.location(env(tc.vars))
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("location() = %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("location() = %q, nil; want an error", got)
			}
			if StatusOf(err) != ExitUsage {
				t.Errorf("location() error %v is not a usage error (exit 2)", err)
			}
			for _, w := range tc.wantText {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("location() error %q does not say %q", err, w)
				}
			}
		})
	}
}
