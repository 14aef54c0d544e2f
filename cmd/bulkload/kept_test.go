package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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

// editCell rewrites one cell of a CSV file: column of data row row (1-based).
func editCell(t *testing.T, path string, row int, column, value string) {
	t.Helper()
	recs := readCSVFile(t, path)
	i := slices.Index(recs[0], column)
	if i < 0 || row >= len(recs) {
		t.Fatalf("%s has no column %s or no row %d", path, column, row)
	}
	recs[row][i] = value
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--summary-json", summary, "--rate", "0", "--progress", "off", "--max-attempts", "1", "--max-consecutive-failures", "0")
	res := runCLI(t, secretEnv(), append(slices.Clone(args), input)...)
	if res.code != app.ExitRowsFailed {
		t.Fatalf("first run exit = %d, want %d\n%s", res.code, app.ExitRowsFailed, res.stderr)
	}
	for row, r := range finalByRow(t, results, n) {
		if r["status"] != "failed" || !strings.HasPrefix(r["note"], "[ambiguous:") {
			t.Fatalf("row %d ended %s, note %q; want failed and ambiguous", row, r["status"], r["note"])
		}
	}
	s.on.Store(false)
	editCell(t, input, edited, "zipCode", "3215")

	resume := append(slices.Clone(args), "--resume", input)
	res = runCLI(t, secretEnv(), resume...)
	if res.code != app.ExitRowsFailed {
		t.Errorf("--resume of the edited file exit = %d, want %d (a lead that may exist, unverified)\n%s", res.code, app.ExitRowsFailed, res.stderr)
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
	res = runCLI(t, secretEnv(), resume...)
	if res.code != app.ExitOK {
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
