package app

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// What a validate reports of its input. Moved from cmd/bulkload's
// validate_test.go (argv turned into options); the command line's
// surface (usage, help, the settings' precedence, a FIFO and a signal)
// stays there.

func TestValidateCleanSample(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"leads.csv", "leads.jsonl"} {
		t.Run(name, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "r.csv")
			j := newValidateJob(filepath.Join(samples, name))
			j.In.Results = results
			res := runValidate(t, j)
			if res.code != ExitOK {
				t.Fatalf("validate %s exit = %d, want 0\n%s", name, res.code, res.stderr)
			}
			exp := readExpected(t)
			rows := finalByRowStatus(t, results, len(exp), "valid")
			for row, e := range exp {
				if rows[row]["leadId"] != e.LeadID {
					t.Errorf("row %d leadId = %q, want %q", row, rows[row]["leadId"], e.LeadID)
				}
			}
			if !strings.Contains(res.stderr, "OK") {
				t.Errorf("summary lacks the accounting check:\n%s", res.stderr)
			}
		})
	}
}

// TestUnknownColumnsReportedOnce checks the messy sample's unknown column
// is named on stderr exactly once, however many rows carry it.
func TestUnknownColumnsReportedOnce(t *testing.T) {
	t.Parallel()
	j := newValidateJob(filepath.Join(samples, "messy.csv"))
	j.In.Results = filepath.Join(t.TempDir(), "r.csv")
	res := runValidate(t, j)
	if res.code != ExitRowsFailed {
		t.Fatalf("exit = %d\n%s", res.code, res.stderr)
	}
	// Once in a warning, once in the summary's column list.
	if n := strings.Count(res.stderr, "Sales Rep"); n != 2 {
		t.Errorf("unknown column \"Sales Rep\" named %d times on stderr, want once in a warning and once in the summary:\n%s", n, res.stderr)
	}
	if !regexp.MustCompile(`(?m)^  unknown columns +.*Sales Rep`).MatchString(res.stderr) {
		t.Errorf("the summary does not list the unknown column:\n%s", res.stderr)
	}
	if !strings.Contains(res.stderr, "level=WARN") {
		t.Errorf("unknown columns are not a warning:\n%s", res.stderr)
	}
}

// TestValidateRejectsFeedBack proves a rejects file is a valid input with
// the same settings: every row in it is read again and fails again.
func TestValidateRejectsFeedBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rejects := filepath.Join(dir, "rejects.csv")
	j := newValidateJob(filepath.Join(samples, "messy.csv"))
	j.In.Results = filepath.Join(dir, "r1.csv")
	j.In.Rejects = rejects
	res := runValidate(t, j)
	if res.code != ExitRowsFailed {
		t.Fatalf("validate messy exit = %d, want 1\n%s", res.code, res.stderr)
	}
	first := readResults(t, filepath.Join(dir, "r1.csv"))
	invalid := 0
	for _, r := range first {
		if r["status"] == "invalid" {
			invalid++
		}
	}
	j = newValidateJob(rejects)
	j.In.Results = filepath.Join(dir, "r2.csv")
	res = runValidate(t, j)
	if res.code != ExitRowsFailed {
		t.Fatalf("validate rejects exit = %d, want 1\n%s", res.code, res.stderr)
	}
	again := readResults(t, filepath.Join(dir, "r2.csv"))
	if len(again) != invalid {
		t.Errorf("rejects file has %d rows, want the %d invalid rows", len(again), invalid)
	}
}
