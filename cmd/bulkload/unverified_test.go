package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/internal/resultstest"
	"github.com/bulkload/bulkload/leadsim"
)

// qualifyingInput writes the rows of samples/leads.csv that qualify (30 of
// 50) to a file of their own, and returns its path
// (resultstest.WriteQualifying).
func qualifyingInput(t *testing.T, dir string) string {
	return resultstest.WriteQualifying(t, samples, dir, -1)
}

// TestUploadKilledMidRetryThenResumed: half the answers are lost, and the
// process is killed while rows are in their retries: their leads may exist
// but they have no line. --resume sends them again; a duplicate answer
// (even a clean one, no answer lost in this run) gets the own-lead check, and
// every qualified row ends with its own lead submitted.
func TestUploadKilledMidRetryThenResumed(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{DropAfter: 0.5, Seed: 3})
	dir := t.TempDir()
	input := qualifyingInput(t, dir)
	results := filepath.Join(dir, "results.csv")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--rate", "0", "--progress", "off", "--concurrency", "16", "--max-attempts", "50", input)
	cmd, out := subprocess(t, args...)
	waitForLines(t, results, 3, 60*time.Second)
	cmd.Process.Kill()
	cmd.Wait()
	before, _ := journalRows(t, results)
	if len(before) >= 30 {
		t.Fatalf("the kill left every row finished: the test tests nothing\n%s", out)
	}

	var rows map[int]resultRow
	for try := 1; ; try++ {
		res := runCLI(t, secretEnv(), append(args[:len(args)-1], "--resume", input)...)
		rows = finalByRow(t, results, 30)
		if res.code == app.ExitOK || try == 5 {
			if res.code != app.ExitOK {
				t.Errorf("last --resume exit = %d, want 0\n%s", res.code, res.stderr)
			}
			break
		}
	}
	for row, r := range rows {
		if r["status"] != "submitted" {
			t.Errorf("row %d (qualified) ended %s: note %q; want its own lead submitted", row, r["status"], r["note"])
		}
	}
	if got := s.Stats().Submissions; got != 30 {
		t.Errorf("the service holds %d submissions, want 30 (one per row)", got)
	}
}
