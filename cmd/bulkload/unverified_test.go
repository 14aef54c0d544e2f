package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

// qualifyingInput writes the rows of samples/leads.csv that qualify (30 of
// 50) to a file of their own, and returns its path.
func qualifyingInput(t *testing.T, dir string) string {
	t.Helper()
	recs := readCSVFile(t, filepath.Join(samples, "leads.csv"))
	exp := readExpected(t)
	out := [][]string{recs[0]}
	for i, rec := range recs[1:] {
		if exp[i+1].submitted {
			out = append(out, rec)
		}
	}
	path := filepath.Join(dir, "qualified.csv")
	w, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := csv.NewWriter(w).WriteAll(out); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestUploadResumeChecksLostAnswers is issue 7's repro: with half the
// answers lost and one attempt per call, rows end failed; --resume sends
// them again, the service answers a duplicate of the lead the first attempt
// created, and bulkload must recognise it as the row's own and submit it,
// rather than record "processed, duplicate" and leave a qualified lead
// unsubmitted.
func TestUploadResumeChecksLostAnswers(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{DropAfter: 0.5, Seed: 5})
	dir := t.TempDir()
	input := qualifyingInput(t, dir)
	results := filepath.Join(dir, "results.csv")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--rate", "0", "--progress", "off", "--max-attempts", "1", input)

	res := runCLI(t, secretEnv(), args...)
	if res.code != app.ExitRowsFailed {
		t.Fatalf("first run exit = %d, want %d (rows failed)\n%s", res.code, app.ExitRowsFailed, res.stderr)
	}
	ambiguous := 0
	for _, r := range finalByRow(t, results, 30) {
		if r["status"] == "failed" && strings.HasPrefix(r["note"], "[ambiguous:") {
			ambiguous++
		}
	}
	if ambiguous == 0 {
		t.Fatal("no row failed after a lost answer: the test tests nothing")
	}

	checked := 0
	resumeUntilSubmitted(t, s, args, results, "", func(rows map[int]resultRow) {
		for _, r := range rows {
			if strings.Contains(r["note"], "an earlier run's createLead for this row may have reached the service") {
				checked++
			}
		}
	})
	if checked == 0 {
		t.Error("no resumed row went through the own-lead check: the test tests nothing")
	}
}

// resumeUntilSubmitted reruns the upload args (its last one the input)
// with --resume, up to 10 times until it exits 0, calling seen with each
// run's final rows, and then wants the last run's exit 0, each of the 30
// qualified rows submitted and 30 submissions at the service. when says in
// the messages after what.
func resumeUntilSubmitted(t *testing.T, s *sim, args []string, results, when string, seen func(map[int]resultRow)) {
	t.Helper()
	input := args[len(args)-1]
	var (
		res  cliResult
		rows map[int]resultRow
	)
	for try := 1; ; try++ {
		res = runCLI(t, secretEnv(), append(args[:len(args)-1:len(args)-1], "--resume", input)...)
		rows = finalByRow(t, results, 30)
		if seen != nil {
			seen(rows)
		}
		if res.code == app.ExitOK || try == 10 {
			break
		}
	}
	if res.code != app.ExitOK {
		t.Errorf("last --resume%s exit = %d, want 0\n%s", when, res.code, res.stderr)
	}
	for row, r := range rows {
		if r["status"] != "submitted" {
			t.Errorf("row %d (qualified) ended %s%s: note %q error %q; want its own lead submitted", row, r["status"], when, r["note"], r["error"])
		}
	}
	if got := s.Stats().Submissions; got != 30 {
		t.Errorf("the service holds %d submissions, want 30 (one per row)", got)
	}
}

// TestUploadUnverified: a lost answer, retried and answered as a duplicate,
// cannot be checked without Lead.Read: the row is unverified (not
// processed), counted in the summary and its JSON, and the run exits 1.
func TestUploadUnverified(t *testing.T) {
	t.Parallel()
	client := leadsim.DefaultClient()
	client.Roles = []string{leadsim.RoleWrite}
	s := startTestSim(t, leadsim.Options{DropAfter: 0.3, Seed: 7, Clients: []leadsim.Client{client}})
	dir := t.TempDir()
	input := qualifyingInput(t, dir)
	results := filepath.Join(dir, "results.csv")
	summary := filepath.Join(dir, "summary.json")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--summary-json", summary, "--rate", "0", "--progress", "off", "--max-attempts", "20", input)

	res := runCLI(t, secretEnv(), args...)
	if res.code != app.ExitRowsFailed {
		t.Errorf("exit = %d, want %d (unverified rows)\n%s", res.code, app.ExitRowsFailed, res.stderr)
	}
	unverified := 0
	for row, r := range finalByRow(t, results, 30) {
		switch r["status"] {
		case "unverified":
			unverified++
			if !strings.Contains(r["note"], "reconcile by leadId") {
				t.Errorf("row %d unverified, but its note does not say what to do: %q", row, r["note"])
			}
		case "processed":
			if r["attempts"] != "1" {
				t.Errorf("row %d was sent %s times and ended processed: %q; want unverified", row, r["attempts"], r["note"])
			}
		}
	}
	if unverified == 0 {
		t.Fatal("no row is unverified: the test tests nothing")
	}
	if got := readSummaryJSON(t, summary)["unverified"]; got != float64(unverified) {
		t.Errorf("summary JSON unverified = %v, want %d", got, unverified)
	}
	if !strings.Contains(res.stderr, "unverified") || !strings.Contains(res.stderr, "by leadId") {
		t.Errorf("summary does not show the unverified rows and what to do:\n%s", res.stderr)
	}

	// The operator grants Lead.Read; --resume reads each unverified row's
	// lead by the id its note names (or sends the row again when it names
	// none) and settles every row: its own lead, submitted once.
	if err := s.GrantRoles(leadsim.DefaultClientID, leadsim.RoleWrite, leadsim.RoleRead); err != nil {
		t.Fatal(err)
	}
	resumeUntilSubmitted(t, s, args, results, " with Lead.Read granted", nil)
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
