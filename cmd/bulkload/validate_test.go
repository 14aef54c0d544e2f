package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// TestValidateMessySamples checks every real-world problem of the messy
// samples end to end against golden results files (go test -update).
func TestValidateMessySamples(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		input string
		flags []string
	}{
		{"messy", "messy.csv", nil},
		{"messy-latin1", "messy-latin1.csv", []string{"--encoding", "windows-1252"}},
		{"partner-acme", "partner-acme.csv", []string{"--mapping", filepath.Join(samples, "mapping.yaml")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			results := filepath.Join(dir, "results.csv")
			rejects := filepath.Join(dir, "rejects.csv")
			args := append([]string{"validate", "--results", results, "--rejects", rejects}, tc.flags...)
			res := runCLI(t, nil, append(args, filepath.Join(samples, tc.input))...)
			if res.code != app.ExitOK && res.code != app.ExitRowsFailed {
				t.Fatalf("validate exit = %d\n%s", res.code, res.stderr)
			}
			got, err := os.ReadFile(results)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tc.name+".results.golden.csv")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/bulkload -run TestValidateMessySamples -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("results differ from %s (review, then -update):\ngot:\n%s\nwant:\n%s", golden, got, want)
			}

			// The rejects file: 0600, one line per invalid row plus the header.
			rows := readResults(t, results)
			invalid := 0
			for _, r := range rows {
				if r["status"] == "invalid" {
					invalid++
				}
			}
			if res.code == app.ExitRowsFailed && invalid == 0 || res.code == app.ExitOK && invalid > 0 {
				t.Errorf("exit %d with %d invalid rows", res.code, invalid)
			}
			fi, err := os.Stat(rejects)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("rejects mode = %v, want 0600", fi.Mode().Perm())
			}
			if fi2, _ := os.Stat(results); fi2.Mode().Perm() != 0o600 {
				t.Errorf("results mode = %v, want 0600", fi2.Mode().Perm())
			}
			vals := sensitiveValuesLoose(t, filepath.Join(samples, tc.input))
			assertNoSensitive(t, "stderr", res.stderr, vals)
			assertNoSensitive(t, "results", string(got), vals)
		})
	}
}

// sensitiveValuesLoose finds SSN- and DOB-looking cells of any sample by
// shape, whatever its header: 9 digits with optional dashes, and dates.
func sensitiveValuesLoose(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var vals []string
	for _, f := range strings.FieldsFunc(string(b), func(r rune) bool { return strings.ContainsRune(",;\t|\"\r\n", r) }) {
		f = strings.TrimSpace(f)
		digits := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, f)
		isSSN := len(digits) == 9 && len(f) <= 11 && strings.Trim(f, "0123456789- ") == ""
		isDate := len(f) >= 8 && len(f) <= 10 && strings.Trim(f, "0123456789/-") == "" && strings.Count(f, "/")+strings.Count(f, "-") == 2
		if isSSN || isDate {
			vals = append(vals, f)
		}
		if isSSN {
			vals = append(vals, digits)
		}
	}
	return vals
}

func TestValidateStdin(t *testing.T) {
	t.Parallel()
	input, err := os.ReadFile(filepath.Join(samples, "leads.csv"))
	if err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(t.TempDir(), "r.jsonl")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"validate", "--format", "csv", "--results", results, "-"},
		func(string) string { return "" }, bytes.NewReader(input), &out, &errb)
	if code != app.ExitOK {
		t.Fatalf("validate - exit = %d, want 0\n%s", code, errb.String())
	}
	b, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n != len(readExpected(t)) {
		t.Errorf("JSONL results have %d lines, want %d", n, len(readExpected(t)))
	}
	if !bytes.Contains(b, []byte(`"status":"valid"`)) {
		t.Errorf("JSONL results lack a valid row:\n%s", b)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "Usage"},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"validate without file", []string{"validate"}, "needs a FILE"},
		{"validate two files", []string{"validate", "a.csv", "b.csv"}, "exactly one FILE"},
		{"missing file", []string{"validate", "--results", filepath.Join(dir, "r.csv"), filepath.Join(dir, "nope.csv")}, "no such file"},
		{"bad encoding", []string{"validate", "--encoding", "ebcdic", "--results", filepath.Join(dir, "r.csv"), filepath.Join(samples, "leads.csv")}, "ebcdic"},
		{"bad delimiter", []string{"validate", "--delimiter", "ab", filepath.Join(samples, "leads.csv")}, "--delimiter"},
		{"unknown flag", []string{"validate", "--frob", filepath.Join(samples, "leads.csv")}, "frob"},
		{"results over the input", []string{"validate", "--results", filepath.Join(samples, "leads.csv"), filepath.Join(samples, "leads.csv")}, "is the input file"},
		{"rejects over the input", []string{"validate", "--rejects", filepath.Join(samples, "leads.csv"), "--results", filepath.Join(dir, "r.csv"), filepath.Join(samples, "leads.csv")}, "is the input file"},
		{"summary over the input", []string{"validate", "--summary-json", filepath.Join(samples, "leads.csv"), "--results", filepath.Join(dir, "r.csv"), filepath.Join(samples, "leads.csv")}, "is the input file"},
		{"stdin without format", []string{"validate", "--results", filepath.Join(dir, "r.csv"), "-"}, "format"},
		{"upload without settings", []string{"upload", filepath.Join(samples, "leads.csv")}, "--simulate"},
		{"upload bad concurrency", []string{"upload", "--simulate", "--concurrency", "0", filepath.Join(samples, "leads.csv")}, "--concurrency"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, nil, tc.args...)
			if res.code != app.ExitUsage {
				t.Errorf("run(%q) exit = %d, want %d\n%s", tc.args, res.code, app.ExitUsage, res.stderr)
			}
			if !strings.Contains(res.stderr, tc.want) {
				t.Errorf("run(%q) stderr lacks %q:\n%s", tc.args, tc.want, res.stderr)
			}
		})
	}
}

func TestHelpShowsExitTable(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"help"}, {"validate", "-h"}, {"upload", "-h"}} {
		res := runCLI(t, nil, args...)
		if res.code != app.ExitOK {
			t.Errorf("run(%q) exit = %d, want 0", args, res.code)
		}
		if !strings.Contains(res.stdout+res.stderr, "130") {
			t.Errorf("run(%q) does not show the exit table", args)
		}
	}
}

// TestSettingPrecedence proves flag beats environment beats config file.
func TestSettingPrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bulkload.yaml")
	fromFile, fromEnv, fromFlag := filepath.Join(dir, "file.csv"), filepath.Join(dir, "env.csv"), filepath.Join(dir, "flag.csv")
	if err := os.WriteFile(cfg, []byte("results: "+fromFile+"\nencoding: utf-8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(samples, "leads.csv")
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"file", nil, []string{"validate", "--config", cfg, input}, fromFile},
		{"env over file", map[string]string{"BULKLOAD_RESULTS": fromEnv}, []string{"validate", "--config", cfg, input}, fromEnv},
		{"flag over env", map[string]string{"BULKLOAD_RESULTS": fromEnv}, []string{"validate", "--config", cfg, "--results", fromFlag, input}, fromFlag},
		{"config from env", map[string]string{"BULKLOAD_CONFIG": cfg}, []string{"validate", input}, fromFile},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []string{fromFile, fromEnv, fromFlag} {
				os.Remove(p)
			}
			res := runCLI(t, tc.env, tc.args...)
			if res.code != app.ExitOK {
				t.Fatalf("exit = %d\n%s", res.code, res.stderr)
			}
			if _, err := os.Stat(tc.want); err != nil {
				t.Errorf("results not at %s: %v", tc.want, err)
			}
		})
	}

	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("client-secret: hunter2\n"), 0o600)
	res := runCLI(t, nil, "upload", "--config", bad, input)
	if res.code != app.ExitUsage || strings.Contains(res.stderr, "hunter2") || !strings.Contains(res.stderr, "BULKLOAD_CLIENT_SECRET") {
		t.Errorf("a secret in the config file: exit %d, stderr:\n%s", res.code, res.stderr)
	}
}

func TestValidateInterrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"validate", "--results", filepath.Join(t.TempDir(), "r.csv"), filepath.Join(samples, "leads.csv")},
		func(string) string { return "" }, nil, &out, &errb)
	if code != app.ExitInterrupted {
		t.Errorf("validate with a cancelled context exit = %d, want %d\n%s", code, app.ExitInterrupted, errb.String())
	}
}

// TestSummaryHashesWholeInput checks the summary's SHA-256 is the whole
// file's, also when the run stops early.
func TestSummaryHashesWholeInput(t *testing.T) {
	t.Parallel()
	input := filepath.Join(samples, "leads.csv")
	b, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%x", sha256.Sum256(b))
	dir := t.TempDir()
	summary := filepath.Join(dir, "s.json")
	if res := runCLI(t, nil, "validate", "--results", filepath.Join(dir, "r.csv"), "--summary-json", summary, input); res.code != app.ExitOK {
		t.Fatalf("validate exit = %d\n%s", res.code, res.stderr)
	}
	if got := readSummaryJSON(t, summary)["inputSha256"]; got != want {
		t.Errorf("summary inputSha256 = %v, want %s", got, want)
	}

	// Interrupted before reading anything: still the whole file's hash.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"validate", "--results", filepath.Join(dir, "r2.csv"), "--summary-json", summary, input},
		func(string) string { return "" }, nil, &out, &errb)
	if code != app.ExitInterrupted {
		t.Fatalf("exit = %d, want %d", code, app.ExitInterrupted)
	}
	if got := readSummaryJSON(t, summary)["inputSha256"]; got != want {
		t.Errorf("interrupted run: summary inputSha256 = %v, want %s", got, want)
	}
}

// TestValidateDateOrder: a day-first export is read right with
// --date-order dmy, and refused (not misread) without it.
func TestValidateDateOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	input := filepath.Join(dir, "eu.csv")
	data := "leadId,dateOfBirth,termsConsent\nE1,31/12/1980,yes\nE2,1980-06-15,yes\n"
	if err := os.WriteFile(input, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "r.csv")
	if res := runCLI(t, nil, "validate", "--date-order", "dmy", "--results", results, input); res.code != app.ExitOK {
		t.Fatalf("validate --date-order dmy exit = %d\n%s", res.code, res.stderr)
	}
	res := runCLI(t, nil, "validate", "--results", results, input)
	if res.code != app.ExitRowsFailed {
		t.Fatalf("validate (month first) exit = %d, want %d\n%s", res.code, app.ExitRowsFailed, res.stderr)
	}
	// The mapper's rule names no flag; the command line's words name it.
	if rows := readResults(t, results); rows[0]["status"] != "invalid" || !strings.Contains(rows[0]["error"], "month first") ||
		!strings.HasSuffix(rows[0]["error"], "if the file writes the day first (DD/MM/YYYY), pass --date-order dmy") {
		t.Errorf("row 1 = %v, want invalid, saying dates are read month first and naming --date-order dmy", rows[0])
	}
	latin1 := filepath.Join(dir, "latin1.csv")
	if err := os.WriteFile(latin1, []byte("leadId,firstName,dateOfBirth,termsConsent\nE1,Zo\xeb,1980-06-15,yes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, nil, "validate", "--results", results, "--overwrite", latin1); res.code != app.ExitRowsFailed {
		t.Fatalf("validate latin1.csv exit = %d, want %d\n%s", res.code, app.ExitRowsFailed, res.stderr)
	}
	if rows := readResults(t, results); !strings.Contains(rows[0]["error"], "pass --encoding windows-1252") {
		t.Errorf("latin1.csv row 1 = %v, want it to name --encoding windows-1252", rows[0])
	}
	if res := runCLI(t, nil, "validate", "--date-order", "ymd", input); res.code != app.ExitUsage {
		t.Errorf("--date-order ymd exit = %d, want %d", res.code, app.ExitUsage)
	}
}

// TestValidateCorruptInputAsUpload checks that an input whose bytes are
// corrupt (a gzip stream cut short) exits 2, as upload exits for the same
// file before its first call: one status for one kind of failure (an
// Input to fix), where a disk that fails the read is 5.
func TestValidateCorruptInputAsUpload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var plain bytes.Buffer
	plain.WriteString("firstName,dateOfBirth,termsConsent\n")
	for i := range 20000 {
		fmt.Fprintf(&plain, "Ann%d,1980-01-02,yes\n", i)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain.Bytes())
	zw.Close()
	input := filepath.Join(dir, "cut.csv.gz")
	if err := os.WriteFile(input, gz.Bytes()[:gz.Len()/2], 0o600); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, nil, "validate", "--results", filepath.Join(dir, "r.csv"), input)
	if res.code != app.ExitUsage || !strings.Contains(res.stderr, "unexpected EOF") {
		t.Errorf("validate(cut gzip) exit = %d, want %d naming the read error\n%s", res.code, app.ExitUsage, res.stderr)
	}
	res = runCLI(t, secretEnv(), "upload", "--simulate", "--results", filepath.Join(dir, "u.csv"), "--progress", "off", input)
	if res.code != app.ExitUsage {
		t.Errorf("upload(cut gzip) exit = %d, want %d as validate\n%s", res.code, app.ExitUsage, res.stderr)
	}
}

// TestValidateFIFOStopsOnSignal checks that a named pipe as the input does
// not hold off a signal: neither while no writer has opened it (open waits)
// nor while its writer is idle (a read waits). The signal is the context's
// end, as main's signal.NotifyContext gives it.
func TestValidateFIFOStopsOnSignal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		write string // "": no writer at all
	}{
		{"no writer", ""},
		{"idle writer, header not finished", "firstName,dateOf"},
		{"idle writer, after a row", "firstName,dateOfBirth,termsConsent\nAnn,1980-01-02,yes\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "in.csv")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.write != "" {
				// The writer stays, idle, until the test has its answer.
				release, wrote := make(chan struct{}), make(chan struct{})
				go func() {
					defer close(wrote)
					w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
					if err != nil {
						return
					}
					w.WriteString(tc.write)
					<-release
					w.Close()
				}()
				defer func() { close(release); <-wrote }()
			}
			time.AfterFunc(100*time.Millisecond, cancel)
			codes := make(chan int, 1)
			var out, errb bytes.Buffer
			go func() {
				codes <- run(ctx, []string{"validate", "--results", filepath.Join(dir, "r.csv"), fifo}, func(string) string { return "" }, strings.NewReader(""), &out, &errb)
			}()
			select {
			case code := <-codes:
				if code != app.ExitInterrupted {
					t.Errorf("validate(fifo) after the signal: exit %d, want %d\n%s", code, app.ExitInterrupted, errb.String())
				}
			case <-time.After(30 * time.Second): // a hang detector, not a speed limit
				t.Fatal("validate(fifo) did not return after the signal")
			}
		})
	}
}

// TestValidateRestoresGCSettings: validate turns GOGC off and sets a memory
// limit for its own run (see memoryBudget); the process's settings are back
// as they were when it returns, and a GOGC the user set is left alone.
func TestValidateRestoresGCSettings(t *testing.T) {
	// Not parallel: it checks the process-wide runtime settings.
	input := writeSynthetic(t, 3000)
	results := filepath.Join(t.TempDir(), "r.csv")
	const gcPercent, limit = 77, 1 << 40
	defer debug.SetGCPercent(debug.SetGCPercent(gcPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(limit))
	deps := testDeps(t)
	deps.KeepRuntimeSettings = false // what this test checks; it runs alone (not parallel)
	for _, env := range []map[string]string{nil, {"GOGC": "30"}} {
		if res := runCLIDeps(t, deps, env, "validate", "--results", results, input); res.code != app.ExitRowsFailed {
			t.Fatalf("validate exit %d: %s", res.code, res.stderr)
		}
		if got := debug.SetGCPercent(gcPercent); got != gcPercent {
			t.Errorf("env %v: GOGC after validate = %d, want %d", env, got, gcPercent)
		}
		if got := debug.SetMemoryLimit(-1); got != limit {
			t.Errorf("env %v: memory limit after validate = %d, want %d", env, got, limit)
		}
	}
}
