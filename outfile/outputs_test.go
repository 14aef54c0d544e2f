package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckOutputs: each refusal of CheckOutputs, and the outputs it lets
// through, with outcomes standing in for report.Outcomes.
func TestCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	sent := filepath.Join(dir, "sent.csv")   // holds outcomes
	plain := filepath.Join(dir, "plain.csv") // holds none
	link := filepath.Join(dir, "link.csv")   // a symbolic link
	sub := filepath.Join(dir, "sub")         // a directory
	for _, p := range []string{in, sent, plain} {
		must(t, os.WriteFile(p, []byte("x\n"), 0o600))
	}
	must(t, os.Symlink(plain, link))
	must(t, os.Mkdir(sub, 0o700))
	outcomes := func(path string) int {
		if path == sent {
			return 3
		}
		return 0
	}
	tests := []struct {
		name      string
		outs      []Output
		overwrite bool
		want      string // in the error; "" for none
	}{
		{"new and plain files", []Output{{Flag: "--results", Path: filepath.Join(dir, "new.csv")}, {Flag: "--rejects", Path: plain}}, false, ""},
		{"empty path skipped", []Output{{Flag: "--rejects"}}, false, ""},
		{"the input", []Output{{Flag: "--results", Path: in}}, false, "is the input file"},
		{"two outputs one file", []Output{{Flag: "--results", Path: plain}, {Flag: "--rejects", Path: plain}}, false, "both name"},
		{"not a regular file", []Output{{Flag: "--results", Path: sub}}, false, "not a regular file"},
		{"a symbolic link", []Output{{Flag: "--results", Path: link}}, false, "cannot be written"},
		{"holds outcomes", []Output{{Flag: "--rejects", Path: sent}}, false, "holds the outcomes of an upload (3 rows sent)"},
		{"holds outcomes, overwrite", []Output{{Flag: "--rejects", Path: sent}}, true, ""},
		{"holds outcomes, continued", []Output{{Flag: "--results", Path: sent, Continues: true}}, false, ""},
		{"the results file's meta", []Output{{Flag: "--results", Path: plain, Results: true}, {Flag: "--report", Path: MetaPath(plain)}}, false, "is the meta file"},
		{"the results file's lock", []Output{{Flag: "--results", Path: plain, Results: true}, {Flag: "--rejects", Path: LockPath(plain)}}, false, "is the lock file"},
		{"the results file's summary", []Output{{Flag: "--results", Path: plain, Results: true}, {Flag: "--report", Path: SummaryPath(plain)}}, false, "is the summary"},
		{"the summary JSON on the run's own summary", []Output{{Flag: "--results", Path: plain, Results: true}, {Flag: "--summary-json", Path: SummaryPath(plain), Summary: true}}, false, ""},
		{"the results file's meta, results listed last", []Output{{Flag: "--report", Path: MetaPath(plain)}, {Flag: "--results", Path: plain, Results: true}}, false, "is the meta file"},
		{"a temporary name of the results file", []Output{{Flag: "--results", Path: plain, Results: true}, {Flag: "--report", Path: filepath.Join(dir, ".plain.csv.tmp-42")}}, false, "a temporary name of --results"},
		{"a compaction's name", []Output{{Flag: "--results", Path: plain, Results: true}, {Flag: "--report", Path: filepath.Join(dir, ".plain.csv.compact-1")}}, false, "a temporary name of --results"},
		{"a temporary name of the meta file", []Output{{Flag: "--results", Path: plain, Results: true}, {Flag: "--report", Path: filepath.Join(dir, ".plain.csv.meta.tmp-7")}}, false, "temporary name of the meta file"},
		{"a temporary name of another output", []Output{{Flag: "--rejects", Path: filepath.Join(dir, "rej.csv")}, {Flag: "--report", Path: filepath.Join(dir, ".rej.csv.tmp-3")}}, false, "a temporary name of --rejects"},
		{"another results file's meta", []Output{{Flag: "--results", Path: filepath.Join(dir, "new.csv"), Results: true}, {Flag: "--report", Path: MetaPath(sent)}}, false, "meta file (the identity of its input, which --resume checks) of the results file " + sent},
		{"the input's name with .meta", []Output{{Flag: "--report", Path: MetaPath(in)}}, false, ""},
		{"a name like a temporary in another directory", []Output{{Flag: "--results", Path: plain, Results: true}, {Flag: "--report", Path: filepath.Join(sub, ".plain.csv.tmp-1")}}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckOutputs(in, tc.outs, tc.overwrite, outcomes)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckOutputs = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("CheckOutputs = %v, want an error with %q", err, tc.want)
			}
			var oe *OutcomesError
			if got := errors.As(err, &oe); got != errors.Is(err, ErrHoldsOutcomes) || got != (tc.name == "holds outcomes") {
				t.Errorf("CheckOutputs = %v: OutcomesError %v, want it only for a file holding outcomes", err, got)
			}
		})
	}
	assertNoTemp(t, dir)
}
