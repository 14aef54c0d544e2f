package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	// What the toolchain recorded in this (test) binary: the main module's
	// version is "(devel)".
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build info in the test binary")
	}
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		res := runCLI(t, nil, args...)
		if res.code != app.ExitOK {
			t.Errorf("run(%q) exit = %d, want 0\n%s", args, res.code, res.stderr)
		}
		// A test binary's build info: the main module's version
		// ("(devel)") and the Go version, read from the binary.
		if !strings.Contains(res.stdout, "bulkload "+bi.Main.Version+",") || !strings.Contains(res.stdout, bi.GoVersion) {
			t.Errorf("run(%q) = %q, want the module version %q and %s", args, res.stdout, bi.Main.Version, bi.GoVersion)
		}
	}
}

// TestVersionWithoutVCSStamp: a binary built with GOFLAGS=-buildvcs=false
// (set machine-wide on many build hosts, and on this project's) says it
// holds no VCS stamp, and does not claim that go build in a git checkout
// would have recorded one: it said "go run and go test do not record it;
// go build and go install in a git checkout do", false of that build.
func TestVersionWithoutVCSStamp(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(builtBulkload(t), "version").Output()
	if err != nil {
		t.Fatalf("bulkload version: %v", err)
	}
	got := string(out)
	if !strings.Contains(got, "revision unknown (this build has no VCS stamp") || !strings.Contains(got, "-buildvcs=false in the flags or GOFLAGS") {
		t.Errorf("bulkload version = %q, want it to say the build has no VCS stamp, naming -buildvcs=false", got)
	}
	if strings.Contains(got, "go build and go install in a git checkout do") {
		t.Errorf("bulkload version = %q: claims go build in a checkout records the revision, false of this build", got)
	}
}

// TestTypos: a misspelt command, subcommand or flag gets the nearest names
// and a one-line hint, not the whole usage.
func TestTypos(t *testing.T) {
	t.Parallel()
	input := filepath.Join(samples, "leads.csv")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"command", []string{"uplod", input}, `did you mean "upload"?`},
		{"command", []string{"valdate", input}, `did you mean "validate"?`},
		{"auth subcommand", []string{"auth", "chek"}, `did you mean "check"?`},
		{"upload flag", []string{"upload", "--concurency", "4", input}, "did you mean --concurrency?"},
		{"validate flag", []string{"validate", "--date-ordr", "dmy", input}, "did you mean --date-order?"},
		{"flag value", []string{"upload", "--concurrency", "eight", input}, `--concurrency "eight": want auto, or a whole number`},
		{"completion shell", []string{"completion", "bsh"}, `did you mean "bash"?`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, nil, tc.args...)
			if res.code != app.ExitUsage {
				t.Errorf("run(%q) exit = %d, want %d", tc.args, res.code, app.ExitUsage)
			}
			if !strings.Contains(res.stderr, tc.want) {
				t.Errorf("run(%q) stderr lacks %q:\n%s", tc.args, tc.want, res.stderr)
			}
			if lines := strings.Count(res.stderr, "\n"); lines > 2 || !strings.Contains(res.stderr, "Run 'bulkload") {
				t.Errorf("run(%q) printed %d lines, want the error and a one-line hint:\n%s", tc.args, lines, res.stderr)
			}
		})
	}
}

func TestUnknownEnvironmentVariableWarns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"BULKLOAD_CONCURENCY": "4", "BULKLOAD_RESULTS": filepath.Join(dir, "r.csv"), "BULKLOAD_DATE_ORDER": "mdy"}
	res := runCLI(t, env, "validate", filepath.Join(samples, "leads.csv"))
	if res.code == app.ExitUsage {
		t.Fatalf("validate exit = %d\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "BULKLOAD_CONCURENCY") || !strings.Contains(res.stderr, "BULKLOAD_CONCURRENCY") {
		t.Errorf("stderr does not warn about BULKLOAD_CONCURENCY, suggesting BULKLOAD_CONCURRENCY:\n%s", res.stderr)
	}
	for _, known := range []string{"BULKLOAD_RESULTS", "BULKLOAD_DATE_ORDER"} {
		if strings.Contains(res.stderr, known) {
			t.Errorf("stderr warns about %s, a setting:\n%s", known, res.stderr)
		}
	}
}

// TestHelpPerCommand: -h shows help on stdout and exits 0 for every
// command, auth included, and each lists only the exit statuses it can
// return.
func TestHelpPerCommand(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args       []string
		want, lack []string // exit statuses listed and not listed
	}{
		{[]string{"upload", "-h"}, []string{"0", "1", "2", "3", "4", "5", "130"}, nil},
		{[]string{"validate", "-h"}, []string{"0", "1", "2", "5", "130"}, []string{"3", "4"}},
		{[]string{"auth", "-h"}, []string{"0", "2", "3", "130"}, []string{"1", "5"}},
		{[]string{"auth", "check", "-h"}, []string{"0", "2", "3", "130"}, []string{"1", "5"}},
		{[]string{"sim", "-h"}, []string{"0", "2", "5"}, []string{"1", "3", "130"}},
		{[]string{"completion", "-h"}, []string{"0", "2"}, []string{"1", "3", "5", "130"}},
		{[]string{"help", "upload"}, []string{"3"}, nil},
	}
	// sim's table speaks of sim, not of an upload's input or results.
	if res := runCLI(t, nil, "sim", "-h"); strings.Contains(res.stdout, "--resume") || strings.Contains(res.stdout, "required column") || strings.Contains(res.stdout, "corrupt input") {
		t.Errorf("sim -h lists upload's exit reasons:\n%s", res.stdout)
	}
	row := regexp.MustCompile(`(?m)^  (\d+) +\S`)
	for _, tc := range cases {
		res := runCLI(t, nil, tc.args...)
		if res.code != app.ExitOK || !strings.Contains(res.stdout, "Usage: bulkload") {
			t.Errorf("run(%q) exit = %d, stdout %q; want 0 and the help", tc.args, res.code, res.stdout)
			continue
		}
		_, table, _ := strings.Cut(res.stdout, "Exit status:")
		var got []string
		for _, m := range row.FindAllStringSubmatch(table, -1) {
			got = append(got, m[1])
		}
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("run(%q) exit table %v lacks %s", tc.args, got, w)
			}
		}
		for _, l := range tc.lack {
			if slices.Contains(got, l) {
				t.Errorf("run(%q) exit table %v lists %s, which it never returns", tc.args, got, l)
			}
		}
	}
}

// TestFlagHelpIsOneSentence: flag help is one short sentence; the
// details are in README.md.
func TestFlagHelpIsOneSentence(t *testing.T) {
	t.Parallel()
	for _, c := range commands() {
		if c.flags == nil || c.name == "sim" { // sim's knobs are leadsim's own
			continue
		}
		c.flags().VisitAll(func(f *flag.Flag) {
			if u := strings.ReplaceAll(f.Usage, "e.g. ", "eg "); strings.Contains(strings.TrimSuffix(u, "."), ". ") || len(u) > 110 {
				t.Errorf("%s --%s help is more than one short sentence (%d chars): %q", c.name, f.Name, len(f.Usage), f.Usage)
			}
		})
	}
}

// helpFlags returns the flags `bulkload ARGS -h` lists.
func helpFlags(t *testing.T, args ...string) []string {
	t.Helper()
	res := runCLI(t, nil, append(args, "-h")...)
	var flags []string
	for _, m := range regexp.MustCompile(`(?m)^  --?([a-z0-9-]+)`).FindAllStringSubmatch(res.stdout, -1) {
		flags = append(flags, m[1])
	}
	if len(flags) == 0 {
		t.Fatalf("run(%q -h) lists no flags:\n%s", args, res.stdout)
	}
	slices.Sort(flags)
	return flags
}

// TestCompletion: each script is valid shell (bash -n always; zsh -n and
// fish -n where those shells are installed) and offers exactly the flags
// each command's help lists.
func TestCompletion(t *testing.T) {
	t.Parallel()
	scripts := map[string]string{}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		res := runCLI(t, nil, "completion", sh)
		if res.code != app.ExitOK || res.stdout == "" {
			t.Fatalf("completion %s exit = %d\n%s", sh, res.code, res.stderr)
		}
		scripts[sh] = res.stdout
		path := filepath.Join(t.TempDir(), "bulkload."+sh)
		if err := os.WriteFile(path, []byte(res.stdout), 0o600); err != nil {
			t.Fatal(err)
		}
		bin, err := exec.LookPath(sh)
		if err != nil {
			if sh == "bash" {
				t.Fatalf("bash not found: %v", err)
			}
			t.Logf("%s is not installed: its script is not syntax-checked here", sh)
			continue
		}
		if out, err := exec.Command(bin, "-n", path).CombinedOutput(); err != nil {
			t.Errorf("%s -n on the %s completion script: %v\n%s", sh, sh, err, out)
		}
	}
	// A flag's text is the command's own: validate's --results defaults
	// to NAME.validation.csv, as validate -h says (the scripts said
	// NAME.results.csv, upload's).
	for sh, want := range map[string]string{"fish": "-l results -r -F -d 'results file, .csv or .jsonl (default: NAME.validation.csv beside the input)'", "zsh": "NAME.validation.csv beside the input"} {
		if !strings.Contains(scripts[sh], want) {
			t.Errorf("%s completion lacks validate's --results text %q", sh, want)
		}
	}
	// The bash script's flag list per command equals the command's help.
	for _, cmd := range [][]string{{"upload"}, {"validate"}, {"auth", "check"}, {"sim"}, {"report"}, {"summary"}} {
		key := strings.Join(cmd, "_")
		m := regexp.MustCompile(`(?m)^    ` + key + `\)\n      flags="([^"]*)"`).FindStringSubmatch(scripts["bash"])
		if m == nil {
			t.Errorf("bash script has no flags for %s", key)
			continue
		}
		var got []string
		for _, f := range strings.Fields(m[1]) {
			if len(f) == 2 != !strings.HasPrefix(f, "--") {
				t.Errorf("bash completion of %s offers %s: a one-letter flag is -x, a longer one --name", key, f)
			}
			got = append(got, strings.TrimLeft(f, "-"))
		}
		slices.Sort(got)
		if want := helpFlags(t, cmd...); !slices.Equal(got, want) {
			t.Errorf("bash completion of %s offers %v, help lists %v", key, got, want)
		}
		for _, f := range got {
			zsh, fish := "'--"+f, "-l "+f+" "
			if len(f) == 1 {
				zsh, fish = "'-"+f+"[", "-s "+f+" "
			}
			if !strings.Contains(scripts["zsh"], zsh) || !strings.Contains(scripts["fish"], fish) {
				t.Errorf("zsh or fish completion lacks %s", f)
			}
		}
	}
}

// TestCompletionInBash runs the bash script as bash completes: after
// "bulkload help" it offers command names, not the files of the directory
// (it offered files), after "help auth" the subcommand, and report's -o is
// -o (it was --o), its value a file.
func TestCompletionInBash(t *testing.T) {
	t.Parallel()
	res := runCLI(t, nil, "completion", "bash")
	dir := t.TempDir()
	script := filepath.Join(dir, "bulkload.bash")
	if err := os.WriteFile(script, []byte(res.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "zzz.csv"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ line, want string }{
		{"bulkload help ", "upload validate auth sim summary report history completion version"},
		{"bulkload help su", "summary"},
		{"bulkload help auth ", "check"},
		{"bulkload help upload ", ""},
		{"bulkload report -", "--config --ledger --log-format --log-level --run -o"},
		{"bulkload report -o ", "bulkload.bash zzz.csv"},
		{"bulkload upload --preflight", "--preflight-wait"},
	} {
		t.Run(tc.line, func(t *testing.T) {
			// COMP_WORDS as bash splits the line, an empty last word after
			// a space.
			cmd := exec.Command("bash", "-c", `source "$1"; read -ra COMP_WORDS <<< "$2"; [[ "$2" == *" " ]] && COMP_WORDS+=(""); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _bulkload; printf '%s\n' "${COMPREPLY[*]}"`, "_", script, tc.line)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("bash: %v\n%s", err, out)
			}
			words := strings.Fields(string(out))
			slices.Sort(words)
			want := strings.Fields(tc.want)
			slices.Sort(want)
			if !slices.Equal(words, want) {
				t.Errorf("completion of %q = %q, want %q", tc.line, words, want)
			}
		})
	}
}

// TestHelpGroupsFlags: upload's and validate's help list every flag once,
// each in one of its groups (input, service and auth, pacing, outputs,
// resume, safety), never under "Other flags", the groups in their order,
// followed by examples; a command of a few flags lists them as one. A
// one-letter flag is written -o (report's showed --o).
func TestHelpGroupsFlags(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"upload", "validate"} {
		res := runCLI(t, nil, cmd, "-h")
		if strings.Contains(res.stdout, "Other flags") {
			t.Errorf("%s -h has flags of no group:\n%s", cmd, res.stdout)
		}
		last := -1
		for _, g := range flagGroups {
			i := strings.Index(res.stdout, "\n"+g.title+":\n")
			if i < 0 {
				if cmd == "upload" {
					t.Errorf("upload -h has no group %q", g.title)
				}
				continue
			}
			if i < last {
				t.Errorf("%s -h: group %q out of order", cmd, g.title)
			}
			last = i
		}
		if ex := strings.Index(res.stdout, "\nExamples:\n"); ex < last {
			t.Errorf("%s -h: no Examples after the flags", cmd)
		}
		flags := helpFlags(t, cmd)
		if len(slices.Compact(slices.Clone(flags))) != len(flags) {
			t.Errorf("%s -h lists a flag twice: %v", cmd, flags)
		}
		for _, f := range flags {
			if flagGroup(f) < 0 {
				t.Errorf("%s --%s is in no group of flagGroups", cmd, f)
			}
		}
	}
	res := runCLI(t, nil, "report", "-h")
	if !strings.Contains(res.stdout, "\n  -o string\n") || strings.Contains(res.stdout, "--o") || strings.Contains(res.stdout, "Other flags") {
		t.Errorf("report -h: want -o in one Flags list:\n%s", res.stdout)
	}
}

// TestMaxAttemptsHelpAgreesWithREADME: upload -h said --max-attempts
// covers 429s while README.md said they do not count; the code does not
// count them (submitter.Config.MaxAttempts). Both now say so.
func TestMaxAttemptsHelpAgreesWithREADME(t *testing.T) {
	t.Parallel()
	res := runCLI(t, nil, "upload", "-h")
	_, help, _ := strings.Cut(res.stdout, "\n  --max-attempts int\n")
	help, _, _ = strings.Cut(help, "\n")
	if !strings.Contains(help, "429s do not count") || strings.Contains(help, "429,") {
		t.Errorf("upload -h --max-attempts: %q, want it to say 429s do not count", help)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `--max-attempts` \\|.*$").FindString(string(readme))
	if !strings.Contains(row, "429s slow the rate instead and do not count") {
		t.Errorf("README.md's --max-attempts row %q no longer says 429s do not count", row)
	}
}

// TestLogFormatJSON: with --log-format json every line on stderr is a JSON
// record, the summary one of them, errors too. The summary record is the
// last, and carries the exit status, so that a log collector reads how the
// run ended in one record.
func TestLogFormatJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// lastSummary returns the summary record, failing unless it is the
	// last record and its exitCode is the run's exit status.
	lastSummary := func(t *testing.T, res cliResult) map[string]any {
		t.Helper()
		recs := jsonRecords(t, res.stderr)
		if len(recs) == 0 || recs[len(recs)-1]["msg"] != "summary" {
			t.Fatalf("the last record is not the summary:\n%s", res.stderr)
		}
		summary, _ := recs[len(recs)-1]["summary"].(map[string]any)
		if code, ok := summary["exitCode"].(float64); !ok || int(code) != res.code {
			t.Errorf("summary record exitCode = %v, want %d, the exit status", summary["exitCode"], res.code)
		}
		return summary
	}
	t.Run("validate", func(t *testing.T) {
		res := runCLI(t, map[string]string{"BULKLOAD_TYPO": "x"}, "validate", "--log-format", "json", "--results", filepath.Join(dir, "v.results.csv"), filepath.Join(samples, "leads.csv"))
		summary := lastSummary(t, res)
		if n, ok := summary["rowsRead"].(float64); !ok || n == 0 {
			t.Errorf("summary record rowsRead = %v, want a number", summary["rowsRead"])
		}
		if _, ok := summary["accountingOK"].(bool); !ok {
			t.Errorf("summary record accountingOK = %v, want a boolean", summary["accountingOK"])
		}
	})
	t.Run("validate of a file with invalid rows", func(t *testing.T) {
		res := runCLI(t, nil, "validate", "--log-format", "json", "--results", filepath.Join(dir, "w.results.csv"), filepath.Join(samples, "messy.csv"))
		if res.code != app.ExitRowsFailed {
			t.Errorf("validate exit = %d, want %d", res.code, app.ExitRowsFailed)
		}
		lastSummary(t, res)
	})
	t.Run("summary of results files", func(t *testing.T) {
		res := runCLI(t, nil, "summary", "--log-format", "json", filepath.Join(dir, "v.results.csv"), filepath.Join(dir, "w.results.csv"))
		if res.code != app.ExitRowsFailed {
			t.Errorf("summary exit = %d, want %d (rows were only validated)", res.code, app.ExitRowsFailed)
		}
		lastSummary(t, res)
	})
	t.Run("upload with --progress bar", func(t *testing.T) {
		res := runCLI(t, nil, "upload", "--simulate", "--log-format", "json", "--progress", "bar", "--results", filepath.Join(dir, "b.results.csv"), filepath.Join(samples, "leads.csv"))
		if res.code != app.ExitOK {
			t.Errorf("upload exit = %d\n%s", res.code, res.stderr)
		}
		lastSummary(t, res)
		// Progress as log records, not a bar's text wrapped as an error.
		for _, r := range jsonRecords(t, res.stderr) {
			if r["level"] == "ERROR" {
				t.Errorf("a clean upload logged an error record: %v", r)
			}
		}
	})
	t.Run("upload error", func(t *testing.T) {
		res := runCLI(t, nil, "upload", "--log-format", "json", "--results", filepath.Join(dir, "u.results.csv"), filepath.Join(samples, "leads.csv"))
		if res.code != app.ExitUsage {
			t.Errorf("upload without settings exit = %d, want %d", res.code, app.ExitUsage)
		}
		recs := jsonRecords(t, res.stderr)
		if len(recs) == 0 || !strings.Contains(res.stderr, "missing settings") {
			t.Errorf("want the missing settings as a JSON record:\n%s", res.stderr)
		}
	})
	// Errors found while the flags parse, before any logger: JSON too,
	// whether the command line or the environment asks for it.
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"unknown flag", nil, []string{"upload", "--log-format", "json", "--bogus", "x", "in.csv"}, "unknown flag --bogus"},
		{"bad value, --log-format=json", nil, []string{"validate", "--log-format=json", "--max-invalid", "lots", "in.csv"}, "--max-invalid"},
		{"from the environment", map[string]string{"BULKLOAD_LOG_FORMAT": "json"}, []string{"validate", "--bogus", "in.csv"}, "unknown flag --bogus"},
	} {
		t.Run("parse error, "+tc.name, func(t *testing.T) {
			res := runCLI(t, tc.env, tc.args...)
			if res.code != app.ExitUsage {
				t.Errorf("exit = %d, want %d", res.code, app.ExitUsage)
			}
			recs := jsonRecords(t, res.stderr)
			if len(recs) == 0 || recs[0]["level"] != "ERROR" || !strings.Contains(fmt.Sprint(recs[0]["msg"]), tc.want) {
				t.Errorf("want the error %q as the first JSON record:\n%s", tc.want, res.stderr)
			}
		})
	}
	t.Run("text logs stay text", func(t *testing.T) {
		res := runCLI(t, nil, "upload", "--bogus", "in.csv")
		if !strings.HasPrefix(res.stderr, "bulkload: unknown flag --bogus") {
			t.Errorf("without --log-format json the error is plain text; got:\n%s", res.stderr)
		}
	})
}

// jsonRecords parses every line of stderr as a JSON object, failing on
// a line that is plain text.
func jsonRecords(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Errorf("stderr line is not JSON: %q", line)
			continue
		}
		recs = append(recs, r)
	}
	return recs
}

// TestSettingErrorsInWords: a bad value names the setting and the type it
// wants, in words, wherever it came from.
func TestSettingErrorsInWords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	input := filepath.Join(samples, "leads.csv")
	cfg := func(text string) string {
		p := filepath.Join(dir, strings.NewReplacer(" ", "", ":", "", "[", "", "]", "", ",", "").Replace(text)+".yaml")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"config whole number", nil, []string{"upload", "--simulate", "--config", cfg("concurrency: eight"), input}, []string{"concurrency", `"eight" is not auto, or a whole number`}},
		{"config list", nil, []string{"upload", "--simulate", "--config", cfg("rate: [1, 2]"), input}, []string{"rate", "got a list"}},
		{"config duration", nil, []string{"upload", "--simulate", "--config", cfg("drain-timeout: soon"), input}, []string{"drain-timeout", "a duration, e.g. 30s"}},
		{"config unknown key", nil, []string{"validate", "--config", cfg("concurency: 4"), input}, []string{`unknown setting "concurency"`, "did you mean concurrency?"}},
		{"env number", map[string]string{"BULKLOAD_MAX_ATTEMPTS": "many"}, []string{"upload", "--simulate", input}, []string{"BULKLOAD_MAX_ATTEMPTS", "want a whole number"}},
		{"env rate", map[string]string{"BULKLOAD_RATE": "fast"}, []string{"upload", "--simulate", input}, []string{"BULKLOAD_RATE", "want auto, or a number"}},
		{"env boolean", map[string]string{"BULKLOAD_RESUME": "sure"}, []string{"upload", "--simulate", input}, []string{"BULKLOAD_RESUME", "true or false"}},
		{"flag duration", nil, []string{"upload", "--simulate", "--timeout", "5", input}, []string{"--timeout", "a duration"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, tc.env, tc.args...)
			if res.code != app.ExitUsage {
				t.Errorf("run(%q) exit = %d, want %d\n%s", tc.args, res.code, app.ExitUsage, res.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("run(%q) stderr lacks %q:\n%s", tc.args, w, res.stderr)
				}
			}
		})
	}
}

// TestRefusedCombinations: settings that cannot mean what the user wants
// are refused before anything is read or sent.
func TestRefusedCombinations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	input := filepath.Join(samples, "leads.csv")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"results extension", []string{"validate", "--results", filepath.Join(dir, "out.txt"), input}, "must be .csv or .jsonl"},
		{"results typo", []string{"upload", "--simulate", "--results", filepath.Join(dir, "out.cvs"), input}, "must be .csv or .jsonl"},
		{"resume and overwrite", []string{"upload", "--simulate", "--resume", "--overwrite", "--results", filepath.Join(dir, "r.csv"), input}, "--resume and --overwrite"},
		{"negative drain", []string{"upload", "--simulate", "--drain-timeout", "-1s", "--results", filepath.Join(dir, "r.csv"), input}, "--drain-timeout -1s: a duration may not be negative"},
		{"negative auth timeout", []string{"auth", "check", "--simulate", "--timeout", "-5s"}, "--timeout -5s: a duration may not be negative"},
		{"no retry wait", []string{"upload", "--simulate", "--max-retry-wait", "0", "--results", filepath.Join(dir, "r.csv"), input}, "--max-retry-wait 0s: want a positive duration"},
		{"negative retry wait", []string{"upload", "--simulate", "--max-retry-wait", "-1s", "--results", filepath.Join(dir, "r.csv"), input}, "--max-retry-wait -1s: a duration may not be negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, nil, tc.args...)
			if res.code != app.ExitUsage || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("run(%q) exit = %d, stderr %q; want %d and %q", tc.args, res.code, res.stderr, app.ExitUsage, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
				t.Errorf("run(%q) wrote out.txt", tc.args)
			}
		})
	}
}

// TestRejectsFollowsItsExtension: the rejects file is written in the format
// its own extension names, whatever the input's; an empty one still has its
// header; another extension is refused.
func TestRejectsFollowsItsExtension(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t.Run("csv input, jsonl rejects", func(t *testing.T) {
		rejects := filepath.Join(dir, "messy.rejects.jsonl")
		res := runCLI(t, nil, "validate", "--results", filepath.Join(dir, "m.results.csv"), "--rejects", rejects, filepath.Join(samples, "messy.csv"))
		if res.code != app.ExitRowsFailed {
			t.Fatalf("validate exit = %d, want %d\n%s", res.code, app.ExitRowsFailed, res.stderr)
		}
		b, err := os.ReadFile(rejects)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		for _, l := range lines {
			var obj map[string]any
			if err := json.Unmarshal([]byte(l), &obj); err != nil || obj["error"] == nil {
				t.Errorf("rejects line is not a JSON object with an error: %q (%v)", l, err)
			}
		}
		// Fed back in, in its own format, every row is read again (a row
		// refused only as a duplicate of an earlier row passes now).
		back := runCLI(t, nil, "validate", "--results", filepath.Join(dir, "back.results.csv"), rejects)
		if back.code != app.ExitRowsFailed {
			t.Errorf("validate(rejects.jsonl) exit = %d, want %d:\n%s", back.code, app.ExitRowsFailed, back.stderr)
		}
		if rows := readResults(t, filepath.Join(dir, "back.results.csv")); len(rows) != len(lines) {
			t.Errorf("validate(rejects.jsonl) read %d rows, want %d", len(rows), len(lines))
		}
	})
	t.Run("jsonl input, csv rejects", func(t *testing.T) {
		input := filepath.Join(dir, "in.jsonl")
		if err := os.WriteFile(input, []byte(`{"firstName":"Ann","dateOfBirth":"1980-02-13","zipCode":"8002","termsConsent":"true"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		rejects := filepath.Join(dir, "in.rejects.csv")
		res := runCLI(t, nil, "validate", "--results", filepath.Join(dir, "in.results.csv"), "--rejects", rejects, input)
		if res.code != app.ExitRowsFailed {
			t.Fatalf("validate exit = %d\n%s", res.code, res.stderr)
		}
		f, err := os.Open(rejects)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil || len(recs) != 2 {
			t.Fatalf("rejects.csv = %v, %v; want a header and one row", recs, err)
		}
		row := map[string]string{}
		for i, h := range recs[0] {
			row[h] = recs[1][i]
		}
		if row["firstName"] != "Ann" || row["zipCode"] != "8002" || !strings.Contains(row["error"], "zipCode") {
			t.Errorf("rejects.csv row = %v, want Ann's row with its zipCode error", row)
		}
	})
	t.Run("empty rejects has its header", func(t *testing.T) {
		rejects := filepath.Join(dir, "clean.rejects.csv")
		res := runCLI(t, nil, "validate", "--results", filepath.Join(dir, "c.results.csv"), "--rejects", rejects, filepath.Join(samples, "leads.csv"))
		if res.code != app.ExitOK {
			t.Fatalf("validate exit = %d\n%s", res.code, res.stderr)
		}
		b, err := os.ReadFile(rejects)
		if err != nil {
			t.Fatal(err)
		}
		if head, rest, _ := strings.Cut(string(b), "\n"); !strings.HasPrefix(head, "error,") || rest != "" {
			t.Errorf("empty rejects file = %q, want only the header error,...", b)
		}
	})
	t.Run("other extension refused", func(t *testing.T) {
		res := runCLI(t, nil, "validate", "--results", filepath.Join(dir, "x.results.csv"), "--rejects", filepath.Join(dir, "r.txt"), filepath.Join(samples, "leads.csv"))
		if res.code != app.ExitUsage || !strings.Contains(res.stderr, "--rejects") || !strings.Contains(res.stderr, ".tsv, .jsonl") {
			t.Errorf("exit = %d, stderr %q; want %d naming --rejects and the extensions", res.code, res.stderr, app.ExitUsage)
		}
	})
}
