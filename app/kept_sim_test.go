package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/leadsim"
)

// A row edited after its lead was created keeps that lead on --resume.
// Moved from cmd/bulkload's kept_test.go (argv turned into options;
// keptSetup returns the job to run again, not an argv);
// TestSummaryOfValidateOutput, of the summary command, stays there.

// editColumn rewrites one column of every row of a CSV file.
func editColumn(t *testing.T, path, column, value string) {
	t.Helper()
	recs := readCSVFile(t, path)
	i := slices.Index(recs[0], column)
	if i < 0 {
		t.Fatalf("%s has no column %s", path, column)
	}
	for _, rec := range recs[1:] {
		rec[i] = value
	}
	writeCSV(t, path, recs)
}

// editCell rewrites one cell of a CSV file: column of data row row (1-based).
func editCell(t *testing.T, path string, row int, column, value string) {
	t.Helper()
	recs := readCSVFile(t, path)
	i := slices.Index(recs[0], column)
	if i < 0 || row >= len(recs) {
		t.Fatalf("%s has no column %s or no row %d", path, column, row)
	}
	recs[row][i] = value
	writeCSV(t, path, recs)
}

// keptSetup runs a first upload of n qualifying rows whose submissions
// the service refuses (each ends submit_failed with its lead's id), then
// edits every row's zip code to one that is invalid now. It returns the
// simulator, the input, the results file, the common arguments (the input
// not among them) and the leads' ids by row.
func keptSetup(t *testing.T, n int, summary string) (s *alteringSim, input, results string, job func(input string, resume bool) *UploadJob, ids map[int]string) {
	t.Helper()
	s = startAlteringSim(t, leadsim.Options{}, nil)
	s.On.Store(false)
	dir := t.TempDir()
	input = qualifyingRows(t, dir, n)
	results = filepath.Join(dir, "results.csv")
	job = func(input string, resume bool) *UploadJob {
		return uploadJob(input, results, func(j *UploadJob) {
			j.Up.MaxAttempts = 1
			j.Up.MaxConsecutiveFailures = 0
			j.In.SummaryJSON = summary
			j.Up.Resume = resume
			if input == "-" {
				j.In.Format = "csv"
			}
		})
	}

	s.RefuseSubmit.Store(true)
	res := runUpload(t, s.Server, job(input, false))
	s.RefuseSubmit.Store(false)
	if res.code != ExitRowsFailed {
		t.Fatalf("first run exit = %d, want %d\n%s", res.code, ExitRowsFailed, res.stderr)
	}
	ids = map[int]string{}
	for row, r := range finalByRow(t, results, n) {
		if r["status"] != "submit_failed" || r["id"] == "" {
			t.Fatalf("row %d ended %s (id %q); want submit_failed with its lead's id", row, r["status"], r["id"])
		}
		ids[row] = r["id"]
	}
	editColumn(t, input, "zipCode", "1912")
	return s, input, results, job, ids
}

// TestUploadEditedCellKeepsLead is issue 18 item 3: rows whose leads an
// earlier run created (submit_failed here) keep their ids and are submitted
// on --resume although an edit (zip 01912 saved as 1912) makes their cells
// invalid now (they do not count against --max-invalid: 3 of 3 rows); the
// summary names them. A later --resume of the same edited
// file keeps them submitted; none is written invalid, none created again.
func TestUploadEditedCellKeepsLead(t *testing.T) {
	t.Parallel()
	const n = 3
	summary := filepath.Join(t.TempDir(), "summary.json")
	s, input, results, job, ids := keptSetup(t, n, summary)
	var res runResult
	for run := 2; run <= 3; run++ {
		res = runUpload(t, s.Server, job(input, true))
		if res.code != ExitOK {
			t.Errorf("run %d (--resume of the edited file) exit = %d, want 0\n%s", run, res.code, res.stderr)
		}
		for row, r := range finalByRow(t, results, n) {
			if r["status"] != "submitted" || r["id"] != ids[row] {
				t.Errorf("run %d: row %d ended %s with id %q, error %q; want submitted with its lead %s", run, row, r["status"], r["id"], r["error"], ids[row])
			}
		}
		if !strings.Contains(res.stderr, "kept leads") || !strings.Contains(res.stderr, "rows 1, 2, 3") {
			t.Errorf("run %d: the summary does not name the rows kept despite their edit:\n%s", run, res.stderr)
		}
		sum := readSummaryJSON(t, summary)
		if got, _ := sum["keptLeads"].(map[string]any); got == nil || got["count"] != float64(n) {
			t.Errorf("run %d: summary JSON keptLeads = %v, want count %d", run, sum["keptLeads"], n)
		}
		os.Remove(summary)
	}
	if got := s.Stats().CreatesAnswered(); got != n {
		t.Errorf("the service processed %d createLead calls, want %d (none again)", got, n)
	}
	if got := s.Stats().Submissions; got != n {
		t.Errorf("the service holds %d submissions, want %d", got, n)
	}
}

// TestUploadEditedCellKeepsLeadFromStdin is the same resume read from
// standard input: the rows read ahead go through the same resume policy
// (upload.MatchPrior) as a file's, so rows kept by their earlier lead do
// not count against --max-invalid there either (3 of 3 rows invalid now,
// against the default 20%).
func TestUploadEditedCellKeepsLeadFromStdin(t *testing.T) {
	t.Parallel()
	const n = 3
	s, input, results, job, ids := keptSetup(t, n, "")
	edited, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	res := runUpload(t, s.Server, job("-", true), runOpts{stdin: edited})
	if res.code != ExitOK {
		t.Fatalf("--resume of the edited input from standard input: exit %d, want 0\n%s", res.code, res.stderr)
	}
	for row, r := range finalByRow(t, results, n) {
		if r["status"] != "submitted" || r["id"] != ids[row] {
			t.Errorf("row %d ended %s with id %q, error %q; want submitted with its lead %s", row, r["status"], r["id"], r["error"], ids[row])
		}
	}
	if got := s.Stats().CreatesAnswered(); got != n {
		t.Errorf("the service processed %d createLead calls, want %d (none again)", got, n)
	}
}

// TestUploadEditedAmbiguousRowKeepsLead is issue 28 item 3: run 1 leaves
// rows failed and ambiguous (the service created their leads, a 500 came
// back); one row's zip code is then edited into an invalid one (03215
// saved as 3215). Its lead may exist, perhaps qualified: --resume must not
// write it invalid within --max-invalid (1 of 5 rows) and exit 0. It is
// kept: unverified (it cannot be sent again to check), named in the
// summary, exit 1; the other rows' own leads are found and submitted. Once
// the cell is fixed, a --resume sends the row with the own-lead check and
// submits its own lead, once.
func TestUploadEditedAmbiguousRowKeepsLead(t *testing.T) {
	t.Parallel()
	const n, edited = 5, 2
	s := startAlteringSim(t, leadsim.Options{}, func(_ string, r reply) (reply, time.Duration) {
		return jsonReply(500, `{"errors":[{"message":"Internal server error","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]}`), 0
	})
	dir := t.TempDir()
	input := qualifyingRows(t, dir, n)
	original, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	results, summary := filepath.Join(dir, "results.csv"), filepath.Join(dir, "summary.json")
	job := func(resume bool) *UploadJob {
		return uploadJob(input, results, func(j *UploadJob) {
			j.In.SummaryJSON = summary
			j.Up.MaxAttempts = 1
			j.Up.MaxConsecutiveFailures = 0
			j.Up.Resume = resume
		})
	}
	res := runUpload(t, s.Server, job(false))
	if res.code != ExitRowsFailed {
		t.Fatalf("first run exit = %d, want %d\n%s", res.code, ExitRowsFailed, res.stderr)
	}
	for row, r := range finalByRow(t, results, n) {
		if r["status"] != "failed" || !strings.HasPrefix(r["note"], "[ambiguous:") {
			t.Fatalf("row %d ended %s, note %q; want failed and ambiguous", row, r["status"], r["note"])
		}
	}
	s.On.Store(false)
	editCell(t, input, edited, "zipCode", "3215")

	res = runUpload(t, s.Server, job(true))
	if res.code != ExitRowsFailed {
		t.Errorf("--resume of the edited file exit = %d, want %d (a lead that may exist, unverified)\n%s", res.code, ExitRowsFailed, res.stderr)
	}
	for row, r := range finalByRow(t, results, n) {
		switch {
		case row == edited && (r["status"] != "unverified" || !strings.Contains(r["error"], "may have made its lead") || !strings.Contains(r["error"], "zipCode")):
			t.Errorf("row %d ended %s, error %q; want unverified: its lead may exist and its cells cannot be sent", row, r["status"], r["error"])
		case row != edited && r["status"] != "submitted":
			t.Errorf("row %d ended %s, note %q; want its own lead found and submitted", row, r["status"], r["note"])
		}
	}
	if !strings.Contains(res.stderr, "kept leads") || !strings.Contains(res.stderr, fmt.Sprintf("rows %d:", edited)) {
		t.Errorf("the summary does not name the row kept despite its edit:\n%s", res.stderr)
	}
	if sum := readSummaryJSON(t, summary); sum["invalid"] != float64(0) || sum["unverified"] != float64(1) {
		t.Errorf("summary JSON invalid %v, unverified %v; want 0 and 1", sum["invalid"], sum["unverified"])
	}

	if err := os.WriteFile(input, original, 0o600); err != nil {
		t.Fatal(err)
	}
	res = runUpload(t, s.Server, job(true))
	if res.code != ExitOK {
		t.Errorf("--resume of the fixed file exit = %d, want 0\n%s", res.code, res.stderr)
	}
	for row, r := range finalByRow(t, results, n) {
		if r["status"] != "submitted" {
			t.Errorf("after the fix, row %d ended %s, note %q; want its own lead found and submitted", row, r["status"], r["note"])
		}
	}
	if got := s.Stats().Submissions; got != n {
		t.Errorf("the service holds %d submissions, want %d (one per row)", got, n)
	}
}
