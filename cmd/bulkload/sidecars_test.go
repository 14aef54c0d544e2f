package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/summary"
)

// TestOutputsOverSidecarsRefused: every file a run keeps beside its
// results file (the meta file --resume checks, the lock, the summary
// bulkload report reads, the temporary names of the results file, its
// compaction and its sidecars) is refused as any other output's path,
// with exit 2 naming the flag, before anything is sent: upload, validate,
// bulkload report -o and bulkload summary --summary-json alike. Before,
// --report r.csv.meta replaced the input's record, and night 2's export
// was then resumed as night 1's.
func TestOutputsOverSidecarsRefused(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := copySample(t, dir, "leads.csv")
	results := filepath.Join(dir, "r.csv")
	up := func(extra ...string) cliResult {
		args := append([]string{"upload"}, s.args()...)
		args = append(append(args, "--results", results, "--rate", "0", "--progress", "off"), extra...)
		return runCLI(t, secretEnv(), append(args, input)...)
	}
	if res := up(); res.code != app.ExitOK && res.code != app.ExitRowsFailed {
		t.Fatalf("first upload exit = %d\n%s", res.code, res.stderr)
	}
	meta, err := os.ReadFile(outfile.MetaPath(results))
	if err != nil {
		t.Fatal(err)
	}
	sidecars := []string{
		outfile.MetaPath(results), outfile.LockPath(results), summary.Path(results),
		filepath.Join(dir, ".r.csv.tmp-123"), filepath.Join(dir, ".r.csv.compact-77"),
		filepath.Join(dir, ".r.csv.meta.tmp-5"), filepath.Join(dir, ".r.csv.summary.json.tmp-9"),
	}
	flags := []string{"--report", "--rejects", "--summary-json", "--refusals", "--metrics-file"}
	for _, flag := range flags {
		for _, side := range sidecars {
			if flag == "--summary-json" && side == summary.Path(results) {
				continue // the run's own summary: written there either way
			}
			before := len(s.Stats().Requests[leadsim.OpCreateLead])
			res := up("--resume", flag, side)
			if res.code != app.ExitUsage || !strings.Contains(res.stderr, flag) {
				t.Errorf("upload %s %s: exit %d, want %d naming %s\n%s", flag, filepath.Base(side), res.code, app.ExitUsage, flag, res.stderr)
			}
			if n := len(s.Stats().Requests[leadsim.OpCreateLead]) - before; n != 0 {
				t.Errorf("upload %s %s: %d createLead calls, want none", flag, filepath.Base(side), n)
			}
		}
	}
	if b, _ := os.ReadFile(outfile.MetaPath(results)); string(b) != string(meta) {
		t.Errorf("the meta file changed:\n%s", b)
	}
	for _, side := range sidecars {
		if side == outfile.MetaPath(results) || side == summary.Path(results) {
			continue
		}
		if _, err := os.Lstat(side); err == nil {
			t.Errorf("%s was written", filepath.Base(side))
		}
	}
	// validate's results file has its lock and summary too.
	vres := filepath.Join(dir, "v.csv")
	for _, side := range []string{outfile.LockPath(vres), summary.Path(vres), filepath.Join(dir, ".v.csv.tmp-1")} {
		if res := runCLI(t, nil, "validate", "--results", vres, "--report", side, input); res.code != app.ExitUsage || !strings.Contains(res.stderr, "--report") {
			t.Errorf("validate --report %s: exit %d, want %d\n%s", filepath.Base(side), res.code, app.ExitUsage, res.stderr)
		}
	}
	// Another run's files: the sidecars of an existing results file are
	// refused as outputs of a run on another results file too.
	other := filepath.Join(dir, "other.csv")
	for _, side := range []string{outfile.MetaPath(results), summary.Path(results), outfile.LockPath(results)} {
		args := append([]string{"upload"}, s.args()...)
		args = append(args, "--results", other, "--overwrite", "--rate", "0", "--progress", "off", "--report", side, input)
		if res := runCLI(t, secretEnv(), args...); res.code != app.ExitUsage || !strings.Contains(res.stderr, "--report") {
			t.Errorf("upload --results other.csv --report %s: exit %d, want %d\n%s", filepath.Base(side), res.code, app.ExitUsage, res.stderr)
		}
	}
	// After the fact: report and summary never write over what they read
	// or its sidecars, whether there or not.
	for _, side := range []string{outfile.MetaPath(results), outfile.LockPath(results), filepath.Join(dir, ".r.csv.tmp-4")} {
		if res := runCLI(t, nil, "report", "-o", side, results); res.code != app.ExitUsage {
			t.Errorf("bulkload report -o %s: exit %d, want %d\n%s", filepath.Base(side), res.code, app.ExitUsage, res.stderr)
		}
		if res := runCLI(t, nil, "summary", "--summary-json", side, results); res.code != app.ExitUsage {
			t.Errorf("bulkload summary --summary-json %s: exit %d, want %d\n%s", filepath.Base(side), res.code, app.ExitUsage, res.stderr)
		}
	}
	if res := runCLI(t, nil, "summary", "--summary-json", summary.Path(results), results); res.code != app.ExitUsage {
		t.Errorf("bulkload summary --summary-json over the run's own summary: exit %d, want %d\n%s", res.code, app.ExitUsage, res.stderr)
	}
	if b, _ := os.ReadFile(outfile.MetaPath(results)); string(b) != string(meta) {
		t.Errorf("the meta file changed:\n%s", b)
	}
}
