package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

// TestSmallThings: what an operator trips on, each held by a case.
func TestSmallThings(t *testing.T) {
	t.Parallel()
	t.Run("version -h is help, not a loop", func(t *testing.T) {
		for _, h := range []string{"-h", "--help"} {
			res := runCLI(t, nil, "version", h)
			if res.code != app.ExitOK || !strings.Contains(res.stdout, "Usage: bulkload version") || strings.Contains(res.stderr, "takes no arguments") {
				t.Errorf("version %s: exit %d\n%s%s", h, res.code, res.stdout, res.stderr)
			}
		}
	})
	t.Run("upload --dry-run points to validate", func(t *testing.T) {
		res := runCLI(t, nil, "upload", "--dry-run", filepath.Join(samples, "leads.csv"))
		if res.code != app.ExitUsage || !strings.Contains(res.stderr, "bulkload validate") {
			t.Errorf("upload --dry-run: exit %d, want %d naming bulkload validate\n%s", res.code, app.ExitUsage, res.stderr)
		}
	})
	t.Run("--rate and --shard complete auto, not files", func(t *testing.T) {
		res := runCLI(t, nil, "completion", "bash")
		for _, f := range []string{"--rate", "--shard"} {
			if !strings.Contains(res.stdout, f+`) COMPREPLY=( $(compgen -W "auto"`) {
				t.Errorf("bash completion of %s does not offer auto", f)
			}
		}
		for _, shell := range []string{"zsh", "fish"} {
			if out := runCLI(t, nil, "completion", shell).stdout; !strings.Contains(out, "auto") {
				t.Errorf("%s completion offers no auto", shell)
			}
		}
	})
	t.Run("every command's help has examples", func(t *testing.T) {
		for _, args := range [][]string{{"upload", "-h"}, {"validate", "-h"}, {"auth", "check", "-h"}, {"auth", "-h"}, {"sim", "-h"}, {"summary", "-h"}, {"completion", "-h"}, {"version", "-h"}} {
			res := runCLI(t, nil, args...)
			if !strings.Contains(res.stdout, "\nExamples:\n  ") {
				t.Errorf("%q: no Examples section\n%s", args, res.stdout)
			}
		}
	})
	t.Run("URLs and spreadsheets are named, with what to do", func(t *testing.T) {
		for _, tc := range []struct{ input, want string }{
			{"s3://bucket/leads.csv", "aws s3 cp"},
			{"https://example.com/leads.csv", "curl -fsS"},
			{"leads.xlsx", "Export the sheet as CSV"},
			{"leads.ods", "Export the sheet as CSV"},
		} {
			for _, cmd := range []string{"validate", "upload"} {
				res := runCLI(t, nil, cmd, tc.input)
				if res.code != app.ExitUsage || !strings.Contains(res.stderr, tc.want) || strings.Contains(res.stderr, "lock") || strings.Contains(res.stderr, "--format csv\n") {
					t.Errorf("%s %s: exit %d, want %d saying %q\n%s", cmd, tc.input, res.code, app.ExitUsage, tc.want, res.stderr)
				}
			}
		}
	})
	t.Run("--summary-json - is standard output", func(t *testing.T) {
		dir := t.TempDir()
		res := runCLI(t, nil, "validate", "--results", filepath.Join(dir, "v.csv"), "--summary-json", "-", filepath.Join(samples, "leads.csv"))
		var sum map[string]any
		if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil || res.code != app.ExitOK || sum["mode"] != "validate" || sum["exitCode"] != 0.0 {
			t.Errorf("validate --summary-json -: exit %d, stdout not the summary (%v)\n%s", res.code, err, res.stdout)
		}
		if _, err := os.Stat("-"); err == nil {
			os.Remove("-")
			t.Error("a file named - was created")
		}
		res = runCLI(t, nil, "summary", "--summary-json", "-", filepath.Join(dir, "v.csv"))
		if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil || sum["mode"] != "summary" {
			t.Errorf("summary --summary-json -: stdout not the summary (%v)\n%s", err, res.stdout)
		}
	})
}

// TestOneErrorAttribute: every log record names its error "err", never
// "error", so that one query finds them all.
func TestOneErrorAttribute(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`\.(Debug|Info|Warn|Error)(Context)?\([^\n]*"error",`)
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "deploy" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllString(string(b), -1) {
			t.Errorf("%s: a log record names its error \"error\": %s (use \"err\")", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRateOnlyWhenMeaningful: a no-op resume and a validate of 50 rows
// take milliseconds: their summaries show no rows per second (a figure
// such as 49,646 rows/s would be the start-up cost over a few rows).
func TestRateOnlyWhenMeaningful(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := filepath.Join(samples, "leads.csv")
	args := checkUploadArgs(s, "--results", filepath.Join(dir, "r.csv"), "--summary-json", filepath.Join(dir, "s.json"), input)
	if res := runCLI(t, secretEnv(), args...); res.code != app.ExitOK {
		t.Fatalf("upload: exit %d\n%s", res.code, res.stderr)
	}
	res := runCLI(t, secretEnv(), append(args[:len(args)-1:len(args)-1], "--resume", input)...)
	if res.code != app.ExitOK || strings.Contains(res.stderr, "rows/s") || !strings.Contains(res.stderr, "elapsed") {
		t.Errorf("no-op resume: exit %d, a rate shown:\n%s", res.code, res.stderr)
	}
	if sum := readSummaryJSON(t, filepath.Join(dir, "s.json")); sum["rowsPerSecond"] != 0.0 || sum["resumedRows"] != 50.0 {
		t.Errorf("no-op resume: rowsPerSecond %v resumedRows %v, want 0 and 50", sum["rowsPerSecond"], sum["resumedRows"])
	}
	res = runCLI(t, nil, "validate", "--results", filepath.Join(dir, "v.csv"), input)
	if strings.Contains(res.stderr, "rows/s") {
		t.Errorf("validate of 50 rows shows a rate:\n%s", res.stderr)
	}
}
