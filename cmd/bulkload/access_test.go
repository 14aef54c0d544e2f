package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/leadsim"
)

// TestAccessRefusedMidRun: the service refuses the application's access
// in the middle of a run, in both shapes: Lead.Write revoked (with the
// tokens issued before: a 401, then FORBIDDEN to every fresh token), and
// an identity provider that keeps issuing tokens the API answers 401. The
// run stops as a refusal of its credentials does before the first call:
// exit 3, no new row taken, no row failed or filed in --refusals for it,
// the rest not sent (left for --resume), a few token requests and 401s,
// not hundreds. Once Lead.Write is granted again, --resume sends the rest
// and creates no lead twice. Before: 238 of 300 rows failed, each written
// to --refusals with its SSN, 61 token requests and 434 401s, exit 1.
func TestAccessRefusedMidRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts leadsim.Options
	}{
		{"Lead.Write revoked", leadsim.Options{RevokeWriteAfter: 20}},
		{"tokens rejected", leadsim.Options{RejectTokensAfter: 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a simulator and a folder of its own
			s := startTestSim(t, tc.opts)
			dir := t.TempDir()
			input := filepath.Join(dir, "in.csv")
			if err := synth.WriteCSVFile(input, synth.Defaults(), 300); err != nil {
				t.Fatal(err)
			}
			results, refusals := filepath.Join(dir, "r.csv"), filepath.Join(dir, "refused.csv")
			args := append([]string{"upload"}, s.args()...)
			args = append(args, "--results", results, "--refusals", refusals, "--concurrency", "4", "--rate", "0",
				"--progress", "off", "--max-invalid", "100%", input)
			res := runCLI(t, secretEnv(), args...)
			if res.code != app.ExitAuth || !strings.Contains(res.stderr, "refused the application's access") {
				t.Fatalf("exit = %d, want %d saying the access was refused\n%s", res.code, app.ExitAuth, res.stderr)
			}
			st := s.Stats()
			if n := len(st.Requests[leadsim.OpToken]); n > 0 {
				tokens := 0
				for _, c := range st.Requests[leadsim.OpToken] {
					tokens += c
				}
				if tokens > 6 {
					t.Errorf("%d token requests, want a few", tokens)
				}
			}
			if n := st.Rejections[leadsim.RejectUnauthenticated] + st.Rejections[leadsim.RejectForbidden]; n > 16 {
				t.Errorf("%d 401 and FORBIDDEN answers, want a few (the calls in flight)", n)
			}
			if b, err := os.ReadFile(refusals); err == nil && strings.Count(string(b), "\n") > 1 {
				t.Errorf("--refusals holds rows refused for the access, not for their data:\n%s", b)
			}
			counts := map[string]int{}
			for _, r := range readResults(t, results) {
				counts[r["status"]]++
				if strings.Contains(r["error"], "FORBIDDEN") || strings.Contains(r["error"], "401") {
					t.Errorf("row %s %s: %s", r["row"], r["status"], r["error"])
				}
			}
			sum := readSummaryJSON(t, results+".summary.json")
			if sum["notSent"].(float64)+sum["notReached"].(float64) < 200 {
				t.Errorf("summary: %v not sent, %v not reached; want the rest left for --resume (results: %v)", sum["notSent"], sum["notReached"], counts)
			}
			if tc.opts.RevokeWriteAfter == 0 {
				return
			}
			if err := s.GrantRoles(leadsim.DefaultClientID, leadsim.RoleWrite, leadsim.RoleRead); err != nil {
				t.Fatal(err)
			}
			res = runCLI(t, secretEnv(), append(args[:len(args)-1], "--resume", input)...)
			if res.code != app.ExitOK {
				t.Fatalf("--resume after the grant: exit %d\n%s", res.code, res.stderr)
			}
			leads := 0
			for _, r := range readResults(t, results) {
				if r["status"] == "processed" || r["status"] == "submitted" {
					leads++
				}
			}
			if got := s.Stats().LeadsCreated; got != leads {
				t.Errorf("the service created %d leads for %d rows with one: some row was created twice", got, leads)
			}
		})
	}
}
