package token_test

import (
	"context"
	"testing"

	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/leadsim/simtest"
	"github.com/bulkload/bulkload/token"
)

func TestURL(t *testing.T) {
	tests := []struct{ base, tenant, want string }{
		{"http://h", "t", "http://h/t/oauth2/v2.0/token"},
		{"http://h/", "t", "http://h/t/oauth2/v2.0/token"},
		{"http://h/idp", "a b/c", "http://h/idp/a%20b%2Fc/oauth2/v2.0/token"},
	}
	for _, tc := range tests {
		if got := token.URL(tc.base, tc.tenant); got != tc.want {
			t.Errorf("URL(%q, %q) = %q, want %q", tc.base, tc.tenant, got, tc.want)
		}
	}
}

// TestURLIsTheSimulators fetches a token from the simulator at the URL that
// URL makes of its base and tenant.
func TestURLIsTheSimulators(t *testing.T) {
	s := simtest.Start(t, leadsim.Options{})
	if got, want := token.URL(s.URL+"/", s.TenantID), s.TokenURL(); got != want {
		t.Errorf("URL(%q, %q) = %q, the simulator's is %q", s.URL+"/", s.TenantID, got, want)
	}
	c := token.New(t.Context(), token.Config{TokenURL: token.URL(s.URL, s.TenantID), ClientID: s.ClientID,
		ClientSecret: s.ClientSecret, Scope: s.Scope()})
	info, err := c.Fetch(context.Background())
	if err != nil {
		t.Fatalf("Fetch() = %v", err)
	}
	if info.Opaque || len(info.Roles) == 0 {
		t.Errorf("Fetch() = %+v, want the simulator's JWT with its roles", info)
	}
}
