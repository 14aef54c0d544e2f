package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/summary"
)

// TestErrorsHideOwnValuesInEveryForm: a row whose own date of birth or
// SSN stands in another of its cells (a shifted column), written in a
// form the error check did not know (the month's name, underscores, the
// other order), is invalid there; the error names the column and rule
// but never shows the value: not in the results file's error column, the
// summary JSON's invalidColumns examples, the summary beside the results
// file, --report's page or bulkload report's. Each form failed before.
func TestErrorsHideOwnValuesInEveryForm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recs := readCSVFile(t, filepath.Join(samples, "leads.csv"))
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	type edit struct{ dob, ssn, field, value string }
	edits := []edit{
		{"01/02/1980", "231-45-6789", "state", "Jan 2 1980"},
		{"01/02/1980", "231-45-6789", "state", "January 2, 1980"},
		{"1980-01-02", "231-45-6789", "state", "2 January 1980"},
		{"1980-01-02", "231-45-6789", "zipCode", "231_45_6789"},
		{"1980-01-02", "231 45 6789", "state", "SSN231_45_6789"},
		{"1980-01-02", "231456789", "state", "Jan_02_80"},
		// The date of birth's own cell in a form the mapper does not
		// read (invalid itself, never shown), and another cell holding
		// it written another way.
		{"Jan 2 1980", "231-45-6789", "state", "2 January 1980"},
		{"1980-01-02", "231-45-6789", "state", "02-JAN-1980"},
	}
	leaks := []string{"Jan 2 1980", "January 2, 1980", "2 January 1980", "231_45_6789", "Jan_02_80", "02-JAN-1980"}
	rows := [][]string{recs[0]}
	for i, e := range edits {
		r := append([]string(nil), recs[1+i]...)
		r[col["dateOfBirth"]], r[col["socialSecurityNumber"]], r[col[e.field]] = e.dob, e.ssn, e.value
		rows = append(rows, r)
	}
	input := filepath.Join(dir, "shifted.csv")
	f, err := os.Create(input)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	f.Close()

	results, sumJSON, page := filepath.Join(dir, "r.csv"), filepath.Join(dir, "s.json"), filepath.Join(dir, "run.html")
	res := runCLI(t, nil, "validate", "--results", results, "--summary-json", sumJSON, "--report", page, input)
	if res.code != app.ExitRowsFailed {
		t.Fatalf("validate exit = %d, want %d\n%s", res.code, app.ExitRowsFailed, res.stderr)
	}
	later := filepath.Join(dir, "later.html")
	if r := runCLI(t, nil, "report", "-o", later, results); r.code != app.ExitOK && r.code != app.ExitRowsFailed {
		t.Fatalf("bulkload report exit = %d\n%s", r.code, r.stderr)
	}
	// Every edited row is invalid in the edited column: the test tests
	// what it says.
	got := readResults(t, results)
	for i, e := range edits {
		if got[i]["status"] != "invalid" || !strings.Contains(got[i]["error"], e.field) {
			t.Errorf("row %d: status %q, error %q; want invalid in %s", i+1, got[i]["status"], got[i]["error"], e.field)
		}
	}
	for _, path := range []string{results, sumJSON, summary.Path(results), page, later} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, leak := range leaks {
			if i := strings.Index(string(b), leak); i >= 0 {
				t.Errorf("%s shows %q: %q", filepath.Base(path), leak, string(b)[max(0, i-60):min(len(b), i+len(leak)+20)])
			}
		}
	}
	for _, text := range []string{res.stderr, res.stdout} {
		for _, leak := range leaks {
			if strings.Contains(text, leak) {
				t.Errorf("validate's output shows %q", leak)
			}
		}
	}
}
