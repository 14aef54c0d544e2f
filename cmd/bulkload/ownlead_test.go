package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

// TestOwnLeadCheckWithoutPartnerLeadID is issue 28 item 2: the own-lead
// check reads the lead a retry's duplicate answer names, and that lead
// comes back without a partnerLeadId (a --lead-document that does not
// select it, or a service answering null or ""). Whose lead it is cannot
// be told: the row is unverified (exit 1), never "a genuine duplicate"
// processed with its qualified lead unsubmitted, exit 0. A --resume that
// can read partnerLeadId then settles it: submitted once.
func TestOwnLeadCheckWithoutPartnerLeadID(t *testing.T) {
	t.Parallel()
	const n = 4
	noPartnerLeadID := `query Lead($id: String!) { lead(id: $id) { id resultCode note bidValue } }`
	partnerField := regexp.MustCompile(`"partnerLeadId":"[^"]*"`)
	tests := []struct {
		name    string
		args    []string
		rewrite string // the partnerLeadId the service's lead reads answer, "" none
	}{
		{"lead document without partnerLeadId", []string{"--lead-document", noPartnerLeadID}, ""},
		{"partnerLeadId null", nil, `"partnerLeadId":null`},
		{"partnerLeadId empty", nil, `"partnerLeadId":""`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a simulator and a folder of its own
			var rewrite atomic.Bool
			rewrite.Store(tc.rewrite != "")
			s := startTestSimHandler(t, leadsim.Options{ProxyReset: 0.5, Seed: 1}, func(s *leadsim.Server) http.Handler {
				h := s.Handler()
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(body))
					if !rewrite.Load() || r.URL.Path != "/graphql" || !bytes.Contains(body, []byte("lead(id:")) {
						h.ServeHTTP(w, r)
						return
					}
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, r)
					for k, v := range rec.Header() {
						w.Header()[k] = v
					}
					w.Header().Del("Content-Length")
					w.WriteHeader(rec.Code)
					w.Write(partnerField.ReplaceAll(rec.Body.Bytes(), []byte(tc.rewrite)))
				})
			})
			dir := t.TempDir()
			input := qualifyingRows(t, dir, n)
			results := filepath.Join(dir, "results.csv")
			args := append([]string{"upload"}, s.args()...)
			args = append(args, "--results", results, "--rate", "0", "--concurrency", "1", "--progress", "off",
				"--max-attempts", "10", "--max-consecutive-failures", "0")
			res := runCLI(t, secretEnv(), append(append(args[:len(args):len(args)], tc.args...), input)...)
			if s.Stats().ResultCodes[1002] == 0 {
				t.Fatal("no retry was answered as a duplicate: the test tests nothing")
			}
			if res.code != app.ExitRowsFailed {
				t.Errorf("exit = %d, want %d (rows unverified)\n%s", res.code, app.ExitRowsFailed, res.stderr)
			}
			if warned := strings.Contains(res.stderr, "selects no partnerLeadId"); warned != (tc.args != nil) {
				t.Errorf("warned of a lead document without partnerLeadId: %v, want %v\n%s", warned, tc.args != nil, res.stderr)
			}
			unverified := 0
			for row, r := range finalByRow(t, results, n) {
				switch {
				case r["status"] == "unverified" && strings.Contains(r["note"], "without a partnerLeadId") && strings.Contains(r["note"], "cannot be told"):
					unverified++
				case r["status"] == "submitted":
				default:
					t.Errorf("row %d ended %s: note %q; want unverified (cannot tell whose lead its duplicate is) or submitted", row, r["status"], r["note"])
				}
				if strings.Contains(r["note"], "genuine duplicate") {
					t.Errorf("row %d: %q; a lead without partnerLeadId is nobody's known lead, not a genuine duplicate", row, r["note"])
				}
			}
			if unverified == 0 {
				t.Fatal("no row was unverified: the test tests nothing")
			}

			// partnerLeadId readable again: --resume reads the lead the
			// duplicate named, finds it the row's own and submits it.
			rewrite.Store(false)
			res = runCLI(t, secretEnv(), append(args[:len(args):len(args)], "--resume", input)...)
			if res.code != app.ExitOK {
				t.Errorf("--resume exit = %d, want 0\n%s", res.code, res.stderr)
			}
			for row, r := range finalByRow(t, results, n) {
				if r["status"] != "submitted" {
					t.Errorf("after --resume, row %d ended %s: note %q; want submitted", row, r["status"], r["note"])
				}
			}
			if got := s.Stats().Submissions; got != n {
				t.Errorf("the service holds %d submissions, want %d (one per row)", got, n)
			}
		})
	}
}
