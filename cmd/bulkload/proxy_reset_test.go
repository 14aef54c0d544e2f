package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

// TestUploadProxyResetAfterCommit is issue 28 item 1: a proxy in front of
// the service (Envoy, Istio) answers a createLead the service committed
// with a 503 (or 502, 504) whose body is its own page, not the service's
// GraphQL answer. The retry is answered "Duplicate of lead X": it must get
// the own-lead check, find X is the row's own and submit it, for every
// such body, instead of ending the row processed (1002) with its
// qualified lead never submitted and exit 0. One worker and a seeded
// simulator keep the draws, and so the test, the same on every run.
func TestUploadProxyResetAfterCommit(t *testing.T) {
	t.Parallel()
	const n = 4
	tests := []struct {
		status int
		body   string
	}{
		{503, leadsim.ProxyBodyText},
		{503, leadsim.ProxyBodyHTML},
		{503, leadsim.ProxyBodyEmpty},
		{502, leadsim.ProxyBodyHTML},
		{504, leadsim.ProxyBodyEmpty},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d %s", tc.status, tc.body), func(t *testing.T) {
			t.Parallel() // a simulator and a folder of its own
			s := startTestSim(t, leadsim.Options{ProxyReset: 0.5, ProxyResetStatus: tc.status, ProxyResetBody: tc.body, Seed: 1})
			dir := t.TempDir()
			input := qualifyingRows(t, dir, n)
			results := filepath.Join(dir, "results.csv")
			args := append([]string{"upload"}, s.args()...)
			args = append(args, "--results", results, "--rate", "0", "--concurrency", "1", "--progress", "off",
				"--max-attempts", "10", "--max-consecutive-failures", "0", input)
			res := runCLI(t, secretEnv(), args...)
			st := s.Stats()
			if st.Rejections[leadsim.RejectProxyReset] == 0 || st.ResultCodes[1002] == 0 {
				t.Fatalf("the proxy reset no committed createLead (%v, result codes %v): the test tests nothing", st.Rejections, st.ResultCodes)
			}
			if res.code != app.ExitOK {
				t.Errorf("exit = %d, want 0\n%s", res.code, res.stderr)
			}
			for row, r := range finalByRow(t, results, n) {
				if r["status"] != "submitted" {
					t.Errorf("row %d ended %s %s: note %q; want its own lead found by the own-lead check and submitted", row, r["status"], r["resultCode"], r["note"])
				}
				if r["resultCode"] == "1002" || strings.Contains(r["note"], "Duplicate of lead") && !strings.Contains(r["note"], "earlier attempt created") {
					t.Errorf("row %d ended as a duplicate of its own lead: %q", row, r["note"])
				}
			}
			if st.Submissions != n {
				t.Errorf("the service holds %d submissions, want %d (one per row)", st.Submissions, n)
			}
		})
	}
}
