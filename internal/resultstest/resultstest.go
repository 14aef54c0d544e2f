// Package resultstest reads what an upload wrote, for the end-to-end tests
// of app and cmd/bulkload: a CSV results file line by line (independently
// of report, so that a fault in report's reader cannot hide one in its
// writer), its final line per row, the summary JSON, a --metrics-file
// (and whether a text holds an input's SSNs or dates of birth),
// and the expected outcomes of samples/leads.csv; and it writes the rows
// of the sample that qualify, an input of the tests of lost and altered
// answers. Both test packages had a copy of each.
package resultstest

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Row is one line of a results file, read independently of report.
type Row map[string]string

// ReadResults reads every line of a CSV results file.
func ReadResults(t *testing.T, path string) []Row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open results: %v", err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("read results %s: %v", path, err)
	}
	if len(recs) == 0 {
		t.Fatalf("results %s is empty", path)
	}
	want := "row,leadId,ref,status,id,resultCode,note,bidValue,attempts,error"
	if got := strings.Join(recs[0], ","); got != want {
		t.Fatalf("results header = %q, want %q", got, want)
	}
	var rows []Row
	for _, rec := range recs[1:] {
		r := Row{}
		for i, h := range recs[0] {
			r[h] = rec[i]
		}
		rows = append(rows, r)
	}
	return rows
}

// FinalByRow checks that a compacted results file has exactly one line per
// row 1..n, in order, with a final status, and returns them by row.
func FinalByRow(t *testing.T, path string, n int) map[int]Row {
	t.Helper()
	rows := ReadResults(t, path)
	if len(rows) != n {
		t.Fatalf("results has %d lines, want one per input row (%d)", len(rows), n)
	}
	out := map[int]Row{}
	for i, r := range rows {
		row, _ := strconv.Atoi(r["row"])
		if row != i+1 {
			t.Fatalf("results line %d is row %q, want row %d (input order)", i+1, r["row"], i+1)
		}
		switch r["status"] {
		case "invalid", "processed", "submitted", "submit_failed", "failed", "unverified", "already_sent", "conflict":
		default:
			t.Errorf("row %d has status %q, want a final status", row, r["status"])
		}
		out[row] = r
	}
	return out
}

// Expectation is one line of samples/leads.expected.csv.
type Expectation struct {
	LeadID     string
	ResultCode int
	BidValue   string
	Submitted  bool
}

// ReadCSVFile reads a whole CSV file as records, header first.
func ReadCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// ReadExpected reads samples/leads.expected.csv at path, by row.
func ReadExpected(t *testing.T, path string) map[int]Expectation {
	t.Helper()
	recs := ReadCSVFile(t, path)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	out := map[int]Expectation{}
	for _, rec := range recs[1:] {
		row, _ := strconv.Atoi(rec[col["row"]])
		code, _ := strconv.Atoi(rec[col["resultCode"]])
		out[row] = Expectation{
			LeadID:     rec[col["leadId"]],
			ResultCode: code,
			BidValue:   rec[col["bidValue"]],
			Submitted:  rec[col["submitted"]] == "true",
		}
	}
	if len(out) == 0 {
		t.Fatal("leads.expected.csv has no rows")
	}
	return out
}

// CountStatus counts final statuses.
func CountStatus(rows map[int]Row) map[string]int {
	c := map[string]int{}
	for _, r := range rows {
		c[r["status"]]++
	}
	return c
}

// ReadSummaryJSON decodes a --summary-json file into a generic map.
func ReadSummaryJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("summary json: %v", err)
	}
	return m
}

// ReadMetrics reads a --metrics-file as node_exporter's textfile
// collector does and returns each series' value by name and labels
// ("bulkload_rows_total{status=submitted}"), job_name left out, and the
// job names it carried.
func ReadMetrics(t *testing.T, path string) (map[string]float64, map[string]bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	vals, jobs := map[string]float64{}, map[string]bool{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				if l.GetName() == "job_name" {
					jobs[l.GetValue()] = true
					continue
				}
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				vals[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				vals[key] = m.GetGauge().GetValue()
			}
		}
	}
	return vals, jobs
}

// WriteQualifying writes the rows of samples/leads.csv (in the folder
// samples) that qualify, the first n of them or every one (30 of 50) when
// n < 0, to dir/qualified.csv, and returns its path.
func WriteQualifying(t *testing.T, samples, dir string, n int) string {
	t.Helper()
	recs := ReadCSVFile(t, filepath.Join(samples, "leads.csv"))
	exp := ReadExpected(t, filepath.Join(samples, "leads.expected.csv"))
	out := [][]string{recs[0]}
	for i, rec := range recs[1:] {
		if exp[i+1].Submitted && (n < 0 || len(out) <= n) {
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

// SensitiveValues returns every SSN and date of birth of a CSV input, as
// written and in the normalised forms the mapper sends.
func SensitiveValues(t *testing.T, path string) []string {
	t.Helper()
	recs := ReadCSVFile(t, path)
	var vals []string
	for i, h := range recs[0] {
		if h != "socialSecurityNumber" && h != "dateOfBirth" {
			continue
		}
		for _, rec := range recs[1:] {
			v := strings.TrimSpace(rec[i])
			if v == "" {
				continue
			}
			vals = append(vals, v, strings.ReplaceAll(v, "-", ""))
		}
	}
	if len(vals) == 0 {
		t.Fatalf("%s has no SSN or dateOfBirth values to look for", path)
	}
	return vals
}

// AssertNoSensitive fails t when text (what names it) holds one of
// values.
func AssertNoSensitive(t *testing.T, what, text string, values []string) {
	t.Helper()
	for _, v := range values {
		if strings.Contains(text, v) {
			t.Errorf("%s contains a sensitive input value (SSN or date of birth)", what)
			return
		}
	}
}

// WriteCSV writes records to path, a test's input.
func WriteCSV(t *testing.T, path string, recs [][]string) {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// SHA12 is the {sha} of the file at path that the results names and
// summaries use: the first 12 hex digits of its SHA-256.
func SHA12(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:12]
}
