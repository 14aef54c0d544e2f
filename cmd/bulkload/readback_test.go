package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/summary"
)

// uploadedTwice uploads the sample file into dir/a.csv and copies that
// results file, its meta file and its summary to dir/b.csv: two results
// files of one input, each with a fresh summary beside it.
func uploadedTwice(t *testing.T, dir string) (a, b string) {
	t.Helper()
	s := startTestSim(t, leadsim.Options{})
	a, b = filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", a, "--rate", "0", "--progress", "off", filepath.Join(samples, "leads.csv"))
	if res := runCLI(t, secretEnv(), args...); res.code != app.ExitOK && res.code != app.ExitRowsFailed {
		t.Fatalf("upload exit = %d\n%s", res.code, res.stderr)
	}
	for _, f := range []func(string) string{func(p string) string { return p }, outfile.MetaPath, summary.Path} {
		data, err := os.ReadFile(f(a))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f(b), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

// editSidecar rewrites the summary beside results with edit applied to
// its JSON object.
func editSidecar(t *testing.T, results string, edit func(m map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(summary.Path(results))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	data, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(summary.Path(results), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestReportRefusesCraftedSidecar: a summary beside a results file whose
// timeline or counts no run writes (a sample before the timeline's start
// or past any run's end, a negative count, an exit status no process
// returns) is refused by bulkload report and bulkload summary with exit 2
// naming it, instead of crashing them or being counted.
func TestReportRefusesCraftedSidecar(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := uploadedTwice(t, dir)
	orig, err := os.ReadFile(summary.Path(b))
	if err != nil {
		t.Fatal(err)
	}
	sample := func(key string, v any) func(m map[string]any) {
		return func(m map[string]any) {
			// A run of 50 rows may end within its first second, before
			// its first sample: the file gets two.
			first := map[string]any{"t": 0.0, "seconds": 1.0, "answered": 5.0}
			second := map[string]any{"t": 1.0, "seconds": 1.0, "answered": 5.0}
			first[key] = v
			m["timeline"].(map[string]any)["samples"] = []any{first, second}
		}
	}
	for name, edit := range map[string]func(m map[string]any){
		"sample before the start": sample("t", -5.0),
		"sample past any end":     sample("t", 1e300),
		"negative seconds":        sample("seconds", -1.0),
		"negative answered":       sample("answered", -3.0),
		"zero interval":           func(m map[string]any) { m["timeline"].(map[string]any)["intervalSeconds"] = 0.0 },
		"mark at 1e300": func(m map[string]any) {
			m["timeline"].(map[string]any)["marks"] = []any{map[string]any{"t": 1e300, "kind": "signal"}}
		},
		"negative count":  func(m map[string]any) { m["processed"] = -60.0 },
		"exit status 300": func(m map[string]any) { m["exitCode"] = 300.0 },
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(summary.Path(b), orig, 0o600); err != nil {
				t.Fatal(err)
			}
			editSidecar(t, b, edit)
			page := filepath.Join(dir, "page.html")
			res := runCLI(t, nil, "report", "-o", page, a, b)
			if res.code != app.ExitUsage || !strings.Contains(res.stderr, summary.Path(b)) {
				t.Errorf("bulkload report exit = %d, want %d naming %s\n%s", res.code, app.ExitUsage, summary.Path(b), res.stderr)
			}
			res = runCLI(t, nil, "summary", a, b)
			if res.code != app.ExitUsage || !strings.Contains(res.stderr, summary.Path(b)) {
				t.Errorf("bulkload summary exit = %d, want %d naming %s\n%s", res.code, app.ExitUsage, summary.Path(b), res.stderr)
			}
		})
	}
}

// TestResumeRefusesDamagedMeta: a meta file that is there but is not one
// bulkload writes (another output written over it, an edit) stops
// --resume with exit 2 before anything is sent, naming it: resuming
// without the input check would take another export's rows for the
// earlier run's (same leadIds, same row count) and send none of them.
func TestResumeRefusesDamagedMeta(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	night1, night2 := filepath.Join(dir, "night1.csv"), filepath.Join(dir, "night2.csv")
	for i, p := range []string{night1, night2} {
		opts := synth.Defaults()
		opts.Seed = int64(i + 1)
		if err := synth.WriteCSVFile(p, opts, 20); err != nil {
			t.Fatal(err)
		}
	}
	results := filepath.Join(dir, "r.csv")
	up := func(input string, extra ...string) cliResult {
		args := append([]string{"upload"}, s.args()...)
		args = append(append(args, "--results", results, "--rate", "0", "--progress", "off"), extra...)
		return runCLI(t, secretEnv(), append(args, input)...)
	}
	if res := up(night1); res.code != app.ExitOK && res.code != app.ExitRowsFailed {
		t.Fatalf("night 1 exit = %d\n%s", res.code, res.stderr)
	}
	for name, content := range map[string]string{
		"an HTML page":   "<!doctype html><title>run</title>",
		"negative rows":  `{"input":"night1.csv","inputSha256":"00","inputBytes":10,"rows":-20}`,
		"not hex":        `{"input":"night1.csv","inputSha256":"not a hash","inputBytes":10,"rows":20}`,
		"first too long": `{"input":"night1.csv","inputSha256":"00","inputBytes":10,"firstBytes":11,"rows":20}`,
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(outfile.MetaPath(results), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			before := len(s.Stats().Requests[leadsim.OpCreateLead])
			res := up(night2, "--resume")
			if res.code != app.ExitUsage || !strings.Contains(res.stderr, outfile.MetaPath(results)) {
				t.Errorf("--resume with %s as the meta file: exit %d, want %d naming it\n%s", name, res.code, app.ExitUsage, res.stderr)
			}
			if n := len(s.Stats().Requests[leadsim.OpCreateLead]) - before; n != 0 {
				t.Errorf("%d createLead calls, want none", n)
			}
		})
	}
}
