package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
)

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
