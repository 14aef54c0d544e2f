package main

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bulkload/bulkload/leadsim"
)

// partnerFileWithInvalid writes the sample with rows bad made invalid
// (a zip code of three digits) to dir/name and returns its path and row
// count.
func partnerFileWithInvalid(t *testing.T, dir, name string, bad ...int) (string, int) {
	t.Helper()
	recs := sampleRecords(t)
	zip := slices.Index(recs[0], "zipCode")
	out := slices.Clone(recs)
	for _, r := range bad {
		out[r] = slices.Clone(recs[r])
		out[r][zip] = "123"
	}
	path := filepath.Join(dir, name)
	writeCSV(t, path, out)
	return path, len(out) - 1
}

// TestInvalidRowsWithinLimitAreNotAFailedRun: invalid rows within
// --max-invalid are the partner's to fix: the upload exits 0 once every
// valid row is settled, and reports them in the summary, its JSON, the
// metrics (count and share) and the rejects file. --strict makes them fail
// the run; validate always does.
func TestInvalidRowsWithinLimitAreNotAFailedRun(t *testing.T) {
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	input, rows := partnerFileWithInvalid(t, dir, "acme.csv", 3, 7, 11)
	cases := []struct {
		name        string
		extra       []string
		wantCode    int
		wantSuccess float64
	}{
		{"default", nil, exitOK, 1},
		{"--strict", []string{"--strict"}, exitRowsFailed, 0},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, string(rune('a'+i)))
			summary, rejects, prom := out+".summary.json", out+".rejects.csv", out+".prom"
			args := checkUploadArgs(s, append(tc.extra, "--results", out+".results.csv", "--rejects", rejects, "--summary-json", summary, "--metrics-file", prom, input)...)
			res := runCLI(t, secretEnv(), args...)
			if res.code != tc.wantCode {
				t.Fatalf("upload %v with 3 of %d rows invalid: exit %d, want %d\n%s", tc.extra, rows, res.code, tc.wantCode, res.stderr)
			}
			sum := readSummaryJSON(t, summary)
			share := 3.0 / float64(rows)
			if sum["invalid"] != 3.0 || sum["exitCode"] != float64(tc.wantCode) || math.Abs(sum["invalidShare"].(float64)-share) > 1e-9 {
				t.Errorf("summary JSON invalid = %v, invalidShare = %v, exitCode = %v; want 3, %v, %d", sum["invalid"], sum["invalidShare"], sum["exitCode"], share, tc.wantCode)
			}
			if got := sum["processed"].(float64) + sum["submitted"].(float64); got != float64(rows-3) {
				t.Errorf("rows sent and settled = %v, want %d", got, rows-3)
			}
			vals, _ := parseMetrics(t, prom)
			for key, want := range map[string]float64{
				"bulkload_rows_total{status=invalid}": 3,
				"bulkload_invalid_ratio":              share,
				"bulkload_last_run_success":           tc.wantSuccess,
				"bulkload_last_run_exit_code":         float64(tc.wantCode),
			} {
				if got, ok := vals[key]; !ok || math.Abs(got-want) > 1e-9 {
					t.Errorf("%s = %v (present %v), want %v", key, got, ok, want)
				}
			}
			if recs := readCSVFile(t, rejects); len(recs) != 1+3 {
				t.Errorf("rejects file has %d data rows, want 3", len(recs)-1)
			}
		})
	}

	// validate's job is to find invalid rows: any one exits 1.
	res := runCLI(t, nil, "validate", "--results", filepath.Join(dir, "v.csv"), input)
	if res.code != exitRowsFailed {
		t.Errorf("validate with 3 invalid rows: exit %d, want %d\n%s", res.code, exitRowsFailed, res.stderr)
	}
	// Over --max-invalid nothing is sent, exit 1.
	before := totalCreates(s)
	res = runCLI(t, secretEnv(), checkUploadArgs(s, "--max-invalid", "2", "--results", filepath.Join(dir, "over.csv"), input)...)
	if res.code != exitRowsFailed || totalCreates(s) != before {
		t.Errorf("over --max-invalid: exit %d, %d sent; want 1, none\n%s", res.code, totalCreates(s)-before, res.stderr)
	}
}
