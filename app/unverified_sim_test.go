package app

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/internal/resultstest"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/leadsim/simtest"
)

// Lost answers: a row whose createLead may have reached the service is
// checked against its own lead on --resume, or left unverified without
// Lead.Read. Moved from cmd/bulkload's unverified_test.go (argv turned
// into options; resumeUntilSubmitted reruns a job, not an argv); the
// killed run's test stays there.

// qualifyingInput writes the rows of samples/leads.csv that qualify (30 of
// 50) to a file of their own, and returns its path
// (resultstest.WriteQualifying).
func qualifyingInput(t *testing.T, dir string) string {
	return resultstest.WriteQualifying(t, samples, dir, -1)
}

// TestUploadResumeChecksLostAnswers is issue 7's repro: with half the
// answers lost and one attempt per call, rows end failed; --resume sends
// them again, the service answers a duplicate of the lead the first attempt
// created, and bulkload must recognise it as the row's own and submit it,
// rather than record "processed, duplicate" and leave a qualified lead
// unsubmitted.
func TestUploadResumeChecksLostAnswers(t *testing.T) {
	t.Parallel()
	s := startSim(t, leadsim.Options{DropAfter: 0.5, Seed: 5})
	dir := t.TempDir()
	input := qualifyingInput(t, dir)
	results := filepath.Join(dir, "results.csv")
	job := func(resume bool) *UploadJob {
		return uploadJob(input, results, func(j *UploadJob) {
			j.Up.MaxAttempts = 1
			j.Up.Resume = resume
		})
	}

	res := runUpload(t, s, job(false))
	if res.code != ExitRowsFailed {
		t.Fatalf("first run exit = %d, want %d (rows failed)\n%s", res.code, ExitRowsFailed, res.stderr)
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
	resumeUntilSubmitted(t, s, job, results, "", func(rows map[int]resultRow) {
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

// resumeUntilSubmitted reruns the upload job with --resume (job(true)), up to 10 times until it exits 0, calling seen with each
// run's final rows, and then wants the last run's exit 0, each of the 30
// qualified rows submitted and 30 submissions at the service. when says in
// the messages after what.
func resumeUntilSubmitted(t *testing.T, s *simtest.Server, job func(resume bool) *UploadJob, results, when string, seen func(map[int]resultRow)) {
	t.Helper()
	var (
		res  runResult
		rows map[int]resultRow
	)
	for try := 1; ; try++ {
		res = runUpload(t, s, job(true))
		rows = finalByRow(t, results, 30)
		if seen != nil {
			seen(rows)
		}
		if res.code == ExitOK || try == 10 {
			break
		}
	}
	if res.code != ExitOK {
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
	s := startSim(t, leadsim.Options{DropAfter: 0.3, Seed: 7, Clients: []leadsim.Client{client}})
	dir := t.TempDir()
	input := qualifyingInput(t, dir)
	results := filepath.Join(dir, "results.csv")
	summary := filepath.Join(dir, "summary.json")
	job := func(resume bool) *UploadJob {
		return uploadJob(input, results, func(j *UploadJob) {
			j.In.SummaryJSON = summary
			j.Up.MaxAttempts = 20
			j.Up.Resume = resume
		})
	}

	res := runUpload(t, s, job(false))
	if res.code != ExitRowsFailed {
		t.Errorf("exit = %d, want %d (unverified rows)\n%s", res.code, ExitRowsFailed, res.stderr)
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
	resumeUntilSubmitted(t, s, job, results, " with Lead.Read granted", nil)
}
