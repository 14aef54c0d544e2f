package simtest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/leadsim"
)

func TestStart(t *testing.T) {
	tests := []struct {
		name string
		opts leadsim.Options
		want string // token URL path
	}{
		{"defaults", leadsim.Options{}, "/" + leadsim.DefaultTenantID + "/oauth2/v2.0/token"},
		{"own tenant and client", leadsim.Options{TenantID: "t1", AppID: "a1", Clients: []leadsim.Client{{ID: "c1", Secret: "s1", Granted: true}}}, "/t1/oauth2/v2.0/token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Start(t, tc.opts)
			if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
				t.Errorf("URL = %q, want http://127.0.0.1:port", s.URL)
			}
			if got := s.TokenURL(); got != s.URL+tc.want {
				t.Errorf("TokenURL() = %q, want %q", got, s.URL+tc.want)
			}
			resp, err := http.PostForm(s.TokenURL(), url.Values{
				"grant_type": {"client_credentials"}, "client_id": {s.ClientID},
				"client_secret": {s.ClientSecret}, "scope": {s.Scope()},
			})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("token request: status %d, want 200", resp.StatusCode)
			}
		})
	}
}
