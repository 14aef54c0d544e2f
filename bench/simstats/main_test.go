package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	const body = `{"requests":{"token":{"200":2},"createLead":{"200":10,"429":3},"submitLead":{"200":4}},
		"tokensIssued":2,"createCalls":{"A-1":1,"A-2":2},"leadsCreated":10,"submissions":4,"rejections":{"rate_limited":3}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/_sim/stats" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	defer srv.Close()
	tests := []struct {
		name string
		url  string
		code int
		want string
	}{
		{"stats", srv.URL, 0, "graphql_calls=17 create_calls=13 submit_calls=4 status_429=3 tokens_issued=2 leads_created=10 submissions=4 max_create_per_lead=2\n"},
		{"not found", srv.URL + "/nope", 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), []string{"-url", tc.url}, &out, &errb)
			if code != tc.code || out.String() != tc.want {
				t.Errorf("run(-url %s) = %d, %q, want %d, %q (stderr %s)", tc.url, code, out.String(), tc.code, tc.want, strings.TrimSpace(errb.String()))
			}
		})
	}
}
