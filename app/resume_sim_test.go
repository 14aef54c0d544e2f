package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/leadsim"
)

// A resume of JSONL results, a second day's leads answered as duplicates
// of the first's, and a resume's count of invalid rows by field. Moved
// from cmd/bulkload's upload_test.go (argv turned into options).

// TestUploadJSONLResultsAndResume uploads the JSONL sample with a JSONL
// results file, then resumes over it: nothing is sent again.
func TestUploadJSONLResultsAndResume(t *testing.T) {
	t.Parallel()
	s := startSim(t, leadsim.Options{})
	results := filepath.Join(t.TempDir(), "results.jsonl")
	input := filepath.Join(samples, "leads.jsonl")
	if res := runUpload(t, s, uploadJob(input, results, nil)); res.code != ExitOK {
		t.Fatalf("upload exit = %d\n%s", res.code, res.stderr)
	}
	created := s.Stats().LeadsCreated
	if res := runUpload(t, s, uploadJob(input, results, func(j *UploadJob) { j.Up.Resume = true })); res.code != ExitOK {
		t.Fatalf("resume exit = %d\n%s", res.code, res.stderr)
	}
	if got := s.Stats().LeadsCreated; got != created || created != 50 {
		t.Errorf("leads created: %d by the upload, %d more by the resume; want 50 and 0", created, got-created)
	}
	b, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 50 || !strings.Contains(lines[0], `"row":1,`) || !strings.Contains(lines[49], `"row":50,`) {
		t.Errorf("JSONL results: %d lines, first %q", len(lines), lines[0])
	}
}

// TestUploadLostAnswerNeverClaimsAnotherLead: day 2 sends the same people
// under new leadIds while connections drop. A retried createLead answered as
// a duplicate of day 1's lead must not take that lead as its own.
func TestUploadLostAnswerNeverClaimsAnotherLead(t *testing.T) {
	t.Parallel()
	s := startSim(t, leadsim.Options{DropAfter: 0.25, Seed: 9})
	dir := t.TempDir()
	day1 := filepath.Join(dir, "day1.results.csv")
	job := func(input, results string) *UploadJob {
		return uploadJob(input, results, func(j *UploadJob) {
			j.Up.Concurrency = Concurrency{N: 8}
			j.Up.MaxAttempts = 20
		})
	}
	if res := runUpload(t, s, job(filepath.Join(samples, "leads.csv"), day1)); res.code != ExitOK {
		t.Fatalf("day 1 exit = %d\n%s", res.code, res.stderr)
	}
	day1IDs := map[string]bool{}
	for _, r := range finalByRow(t, day1, 50) {
		day1IDs[r["id"]] = true
	}
	submitted := s.Stats().Submissions

	b, err := os.ReadFile(filepath.Join(samples, "leads.csv"))
	if err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(dir, "day2.csv")
	if err := os.WriteFile(input, []byte(strings.ReplaceAll(string(b), "ACME-", "DAY2-")), 0o600); err != nil {
		t.Fatal(err)
	}
	day2 := filepath.Join(dir, "day2.results.csv")
	if res := runUpload(t, s, job(input, day2)); res.code != ExitOK {
		t.Fatalf("day 2 exit = %d\n%s", res.code, res.stderr)
	}
	retried := 0
	for row, r := range finalByRow(t, day2, 50) {
		if r["status"] != "processed" || day1IDs[r["id"]] {
			t.Errorf("day 2 row %d = %s with id %s (a day 1 lead: %v), want processed as a duplicate", row, r["status"], r["id"], day1IDs[r["id"]])
		}
		if r["attempts"] != "1" {
			retried++
			if !strings.Contains(r["note"], "genuine duplicate") {
				t.Errorf("day 2 row %d was retried but its note does not say it is a genuine duplicate: %q", row, r["note"])
			}
		}
	}
	if retried == 0 {
		t.Fatal("no day 2 answer was lost: the test tests nothing")
	}
	if got := s.Stats().Submissions; got != submitted {
		t.Errorf("day 2 submitted %d leads, want none", got-submitted)
	}
}

// TestUploadResumeCountsReasonsByField checks that a resumed run counts the
// invalid rows of the earlier run by their fields' reasons (the results
// file holds only the joined text), as the first run did.
func TestUploadResumeCountsReasonsByField(t *testing.T) {
	t.Parallel()
	s := startSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := filepath.Join(dir, "in.csv")
	csv := "firstName,dateOfBirth,zipCode,state,termsConsent,leadId\n" +
		"Ann,1980-01-02,02134,MA,yes,T-1\n" +
		"Bob,1980-01-02,1234,Calif.,yes,T-2\n" +
		"Cy,1980-01-02,123,Xx,yes,T-3\n"
	if err := os.WriteFile(input, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	summary := filepath.Join(dir, "summary.json")
	// 2 rows of 3 are invalid: --max-invalid 100% lets the run go on to
	// count them.
	for _, extra := range [][]string{nil, {"--resume"}} {
		res := runUpload(t, s, uploadJob(input, filepath.Join(dir, "results.csv"), func(j *UploadJob) {
			j.In.SummaryJSON = summary
			j.Checks.MaxInvalid = "100%"
			j.Checks.AllowNoSSN = true
			j.Up.Resume = len(extra) > 0 // extra: the flags it was run with
		}))
		// Invalid rows within --max-invalid do not fail the run.
		if res.code != ExitOK {
			t.Fatalf("upload %v exit = %d, want %d\n%s", extra, res.code, ExitOK, res.stderr)
		}
		top, _ := readSummaryJSON(t, summary)["topReasons"].([]any)
		var got []string
		for _, r := range top {
			m, _ := r.(map[string]any)
			got = append(got, fmt.Sprintf("%v x%v", m["reason"], m["count"]))
		}
		want := []string{`column "state": must be a two-letter USPS state code or a state name x2`, `column "zipCode": must be 5 digits x1`, `column "zipCode": must be 5 digits (a spreadsheet may have dropped a leading zero) x1`}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("upload %v topReasons =\n%s\nwant\n%s", extra, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
