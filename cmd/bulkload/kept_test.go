package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

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
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := csv.NewWriter(f).WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// keptSetup runs a first upload of n qualifying rows whose submissions
// the service refuses (each ends submit_failed with its lead's id), then
// edits every row's zip code to one that is invalid now. It returns the
// simulator, the input, the results file, the common arguments (the input
// not among them) and the leads' ids by row.
func keptSetup(t *testing.T, n int, extra ...string) (s *alteringSim, input, results string, args []string, ids map[int]string) {
	t.Helper()
	s = startAlteringSim(t, leadsim.Options{}, nil)
	s.on.Store(false)
	dir := t.TempDir()
	input = qualifyingRows(t, dir, n)
	results = filepath.Join(dir, "results.csv")
	args = append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--rate", "0", "--progress", "off", "--max-attempts", "1", "--max-consecutive-failures", "0")
	args = append(args, extra...)

	s.refuseSubmit.Store(true)
	res := runCLI(t, secretEnv(), append(slices.Clone(args), input)...)
	s.refuseSubmit.Store(false)
	if res.code != app.ExitRowsFailed {
		t.Fatalf("first run exit = %d, want %d\n%s", res.code, app.ExitRowsFailed, res.stderr)
	}
	ids = map[int]string{}
	for row, r := range finalByRow(t, results, n) {
		if r["status"] != "submit_failed" || r["id"] == "" {
			t.Fatalf("row %d ended %s (id %q); want submit_failed with its lead's id", row, r["status"], r["id"])
		}
		ids[row] = r["id"]
	}
	editColumn(t, input, "zipCode", "1912")
	return s, input, results, args, ids
}

// TestUploadEditedCellKeepsLead is issue 18 item 3: rows whose leads an
// earlier run created (submit_failed here) keep their ids and are submitted
// on --resume although an edit (zip 01912 saved as 1912) makes their cells
// invalid now (they do not count against --max-invalid: 3 of 3 rows); the
// summary names them. A later --resume of the same edited
// file keeps them submitted; none is written invalid, none created again.
func TestUploadEditedCellKeepsLead(t *testing.T) {
	const n = 3
	summary := filepath.Join(t.TempDir(), "summary.json")
	s, input, results, args, ids := keptSetup(t, n, "--summary-json", summary)
	resume := append(slices.Clone(args), "--resume", input)
	var res cliResult
	for run := 2; run <= 3; run++ {
		res = runCLI(t, secretEnv(), resume...)
		if res.code != app.ExitOK {
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
	if got := createsAtService(s); got != n {
		t.Errorf("the service processed %d createLead calls, want %d (none again)", got, n)
	}
	if got := s.Stats().Submissions; got != n {
		t.Errorf("the service holds %d submissions, want %d", got, n)
	}
}

// TestSummaryOfValidateOutput is issue 18 item 7: `bulkload summary` of a
// file that holds no upload (validate's output, every row valid) must not
// pass it off as settled: its rows show as only validated, not sent, and
// the exit status is 1, alone or beside an upload's results.
func TestSummaryOfValidateOutput(t *testing.T) {
	dir := t.TempDir()
	validated := filepath.Join(dir, "v.results.csv")
	if res := runCLI(t, nil, "validate", "--results", validated, filepath.Join(samples, "leads.csv")); res.code != app.ExitOK {
		t.Fatalf("validate exit = %d\n%s", res.code, res.stderr)
	}
	uploaded := filepath.Join(dir, "u.results.csv")
	if res := runCLI(t, nil, "upload", "--simulate", "--progress", "off", "--results", uploaded, filepath.Join(samples, "leads.csv")); res.code != app.ExitOK {
		t.Fatalf("upload exit = %d\n%s", res.code, res.stderr)
	}
	for _, tc := range []struct {
		name  string
		files []string
	}{
		{"validate's output alone", []string{validated}},
		{"beside an upload's results", []string{uploaded, validated}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, nil, append([]string{"summary"}, tc.files...)...)
			if res.code != app.ExitRowsFailed {
				t.Errorf("summary exit = %d, want %d: validated rows were never uploaded\n%s", res.code, app.ExitRowsFailed, res.stderr)
			}
			if !strings.Contains(res.stderr, "only validated, never uploaded") {
				t.Errorf("the summary does not show the rows as only validated, not sent:\n%s", res.stderr)
			}
		})
	}
	if res := runCLI(t, nil, "summary", uploaded); res.code != app.ExitOK {
		t.Errorf("summary of the upload alone: exit %d, want 0\n%s", res.code, res.stderr)
	}
}

// TestUploadEditedCellKeepsLeadFromStdin is the same resume read from
// standard input: the rows read ahead go through the same resume policy
// (upload.MatchPrior) as a file's, so rows kept by their earlier lead do
// not count against --max-invalid there either (3 of 3 rows invalid now,
// against the default 20%).
func TestUploadEditedCellKeepsLeadFromStdin(t *testing.T) {
	const n = 3
	s, input, results, common, ids := keptSetup(t, n)
	edited, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	res := runStdin(t, edited, append(slices.Clone(common), "--resume", "--format", "csv", "-")...)
	if res.code != app.ExitOK {
		t.Fatalf("--resume of the edited input from standard input: exit %d, want 0\n%s", res.code, res.stderr)
	}
	for row, r := range finalByRow(t, results, n) {
		if r["status"] != "submitted" || r["id"] != ids[row] {
			t.Errorf("row %d ended %s with id %q, error %q; want submitted with its lead %s", row, r["status"], r["id"], r["error"], ids[row])
		}
	}
	if got := createsAtService(s); got != n {
		t.Errorf("the service processed %d createLead calls, want %d (none again)", got, n)
	}
}
