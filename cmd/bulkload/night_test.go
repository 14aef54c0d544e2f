package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
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
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	input, rows := partnerFileWithInvalid(t, dir, "acme.csv", 3, 7, 11)
	cases := []struct {
		name        string
		extra       []string
		wantCode    int
		wantSuccess float64
	}{
		{"default", nil, app.ExitOK, 1},
		{"--strict", []string{"--strict"}, app.ExitRowsFailed, 0},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Each run in a folder of its own: an upload of an input that
			// an earlier one beside it sent is refused (see
			// TestResumeAfterMidnight).
			sub := filepath.Join(dir, string(rune('a'+i)))
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(sub, "run")
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

	// validate's job is to find invalid rows: any one exits 1. Its
	// --metrics-file lets a dry-run cron job be monitored.
	vprom := filepath.Join(dir, "v.prom")
	res := runCLI(t, nil, "validate", "--results", filepath.Join(dir, "v.csv"), "--metrics-file", vprom, "--job-name", "acme-dry", input)
	if res.code != app.ExitRowsFailed {
		t.Errorf("validate with 3 invalid rows: exit %d, want %d\n%s", res.code, app.ExitRowsFailed, res.stderr)
	}
	vals, jobs := parseMetrics(t, vprom)
	for key, want := range map[string]float64{
		"bulkload_rows_total{status=valid}":   float64(rows - 3),
		"bulkload_rows_total{status=invalid}": 3,
		"bulkload_last_run_exit_code":         app.ExitRowsFailed,
		"bulkload_last_run_success":           0,
	} {
		if got, ok := vals[key]; !ok || got != want {
			t.Errorf("validate --metrics-file: %s = %v (present %v), want %v", key, got, ok, want)
		}
	}
	if !jobs["acme-dry"] {
		t.Errorf("validate --metrics-file job_name labels %v, want acme-dry", jobs)
	}
	// Over --max-invalid nothing is sent, exit 1.
	before := totalCreates(s)
	over := filepath.Join(dir, "over")
	if err := os.Mkdir(over, 0o755); err != nil {
		t.Fatal(err)
	}
	res = runCLI(t, secretEnv(), checkUploadArgs(s, "--max-invalid", "2", "--results", filepath.Join(over, "over.csv"), input)...)
	if res.code != app.ExitRowsFailed || totalCreates(s) != before {
		t.Errorf("over --max-invalid: exit %d, %d sent; want 1, none\n%s", res.code, totalCreates(s)-before, res.stderr)
	}
}

// readmeCronLine returns the crontab line of README.md's "Nightly jobs on a
// fixed export name" and checks that deploy/cron has the same.
func readmeCronLine(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "## Nightly jobs on a fixed export name")
	if !ok {
		t.Fatal(`README.md has no section "Nightly jobs on a fixed export name"`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var line string
	for l := range strings.SplitSeq(sec, "\n") {
		if strings.HasPrefix(l, "30 2 * * * ") {
			line = l
		}
	}
	if line == "" {
		t.Fatal("README.md's nightly section has no crontab line")
	}
	c, err := os.ReadFile("../../deploy/cron/bulkload.crontab")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(string(c), "\n"), line) {
		t.Errorf("deploy/cron/bulkload.crontab does not have README.md's line:\n%s", line)
	}
	return line
}

// cronHost is a directory standing for a host's root: the README's cron
// line with every absolute path moved under it, the binary built to its
// install path, the config and secret the line names.
type cronHost struct {
	root    string
	command string // what cron hands to /bin/sh -c
	input   string // the partner's fixed export name
	runs    string // the directory of results, summaries, rejects
	log     string
}

func newCronHost(t *testing.T, s *sim) *cronHost {
	t.Helper()
	line := readmeCronLine(t)
	m := regexp.MustCompile(`^(?:\S+\s+){5}(\S+)\s+(.*)$`).FindStringSubmatch(line)
	if m == nil || m[1] != "bulkload" {
		t.Fatalf("crontab line is not 5 time fields, the user bulkload and a command: %s", line)
	}
	h := &cronHost{root: t.TempDir()}
	// cron runs the command with /bin/sh -c after turning \% into %; the
	// line has bulkload's placeholders instead, and no %.
	if strings.Contains(m[2], "%") {
		t.Errorf("the cron line has a %%: cron cuts the command there unless escaped, and the placeholders need none")
	}
	h.command = regexp.MustCompile(`(^|[\s'=>])/`).ReplaceAllString(m[2], "${1}"+h.root+"/")
	bin := regexp.MustCompile(`^(\S+)\s`).FindStringSubmatch(h.command)[1]
	if !strings.HasPrefix(bin, h.root+"/") {
		t.Fatalf("the cron line calls %s, not an absolute path: cron's PATH is /usr/bin:/bin", bin)
	}
	for _, want := range []string{"--resume", "{date}", "{sha}"} {
		if !strings.Contains(h.command, want) {
			t.Errorf("the cron line lacks %s", want)
		}
	}
	// Every absolute path's directory exists, as on the host.
	for _, p := range regexp.MustCompile(regexp.QuoteMeta(h.root)+`/[^\s']+`).FindAllString(h.command, -1) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	installBulkload(t, bin)
	arg := func(name string) string {
		m := regexp.MustCompile(`--` + name + `[ =]'?([^\s']+)`).FindStringSubmatch(h.command)
		if m == nil {
			t.Fatalf("the cron line has no --%s", name)
		}
		return m[1]
	}
	cfg := strings.Join([]string{
		"endpoint: " + s.url + "/graphql", "auth-url: " + s.url, "tenant-id: " + leadsim.DefaultTenantID,
		"client-id: " + leadsim.DefaultClientID, "app-id: " + leadsim.DefaultAppID, "rate: 0", ""}, "\n")
	if err := os.WriteFile(arg("config"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(arg("client-secret-file"), []byte(simSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.runs = filepath.Dir(arg("results"))
	fields := strings.Fields(h.command)
	for i, f := range fields {
		if strings.HasPrefix(f, ">>") {
			h.input, h.log = fields[i-1], strings.TrimPrefix(f, ">>")
		}
	}
	return h
}

// night runs the line as cron does: /bin/sh -c, an environment of PATH
// and HOME alone (cron sets HOME from the user's passwd entry: the default
// ledger is under it), and returns the exit status.
func (h *cronHost) night(t *testing.T) int {
	t.Helper()
	home := filepath.Join(h.root, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("env", "-i", "PATH=/usr/bin:/bin", "HOME="+home, "/bin/sh", "-c", h.command)
	cmd.Dir = h.root
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode()
	case err != nil:
		t.Fatalf("run the cron line: %v\n%s", err, out)
	}
	return 0
}

// nightFiles are the files of one run: results, summary, rejects, the run
// report (--report, the nightly recipe's) and the summary beside the
// results file.
var nightFiles = []string{".results.csv", ".summary.json", ".rejects.csv", ".report.html", ".results.csv.summary.json"}

// files lists the runs directory's files ending in suffix (".summary.json"
// leaves out the report beside the results file).
func (h *cronHost) files(t *testing.T, suffix string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(h.runs, "*"+suffix))
	if err != nil {
		t.Fatal(err)
	}
	if suffix == ".summary.json" {
		m = slices.DeleteFunc(m, func(p string) bool { return strings.HasSuffix(p, ".results.csv.summary.json") })
	}
	return m
}

// redrop writes the partner's export: the sample with the given rows made
// invalid; variant > 0 makes other leads (their own leadId, e-mail and no
// SSN), as a corrected or extended re-drop would.
func redrop(t *testing.T, path string, variant int, bad ...int) {
	t.Helper()
	recs := sampleRecords(t)
	col := func(name string) int { return slices.Index(recs[0], name) }
	out := [][]string{recs[0]}
	for r, rec := range recs[1:] {
		rec = slices.Clone(rec)
		if variant > 0 {
			rec[col("leadId")] += fmt.Sprintf("-%d", variant)
			rec[col("email")] = fmt.Sprintf("v%d.%s", variant, rec[col("email")])
			rec[col("socialSecurityNumber")] = ""
		}
		if slices.Contains(bad, r+1) {
			rec[col("zipCode")] = "123"
		}
		out = append(out, rec)
	}
	writeCSV(t, path, out)
}

// TestCronLineOneNight runs README.md's cron line as cron would (env -i
// PATH=/usr/bin:/bin, /bin/sh -c, the binary built to the path the line
// names): a night's export with a few invalid rows exits 0; the partner's
// re-drop of the same name with new contents the same day runs in full
// into files of its own and leaves the first run's files as they were; a
// rerun of the re-drop resumes it and sends nothing again.
func TestCronLineOneNight(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	h := newCronHost(t, s)

	redrop(t, h.input, 0, 4, 9)
	if code := h.night(t); code != app.ExitOK {
		b, _ := os.ReadFile(h.log)
		t.Fatalf("night 1, first export: exit %d, want 0\n%s", code, b)
	}
	first := map[string][]byte{}
	for _, suffix := range nightFiles {
		files := h.files(t, suffix)
		if len(files) != 1 {
			t.Fatalf("after the first run: %d %s files, want 1: %v", len(files), suffix, files)
		}
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		first[files[0]] = b
	}
	sent := totalCreates(s)

	redrop(t, h.input, 1, 7)
	if code := h.night(t); code != app.ExitOK {
		b, _ := os.ReadFile(h.log)
		t.Fatalf("the same day, a re-drop with new contents: exit %d, want 0\n%s", code, b)
	}
	if n := totalCreates(s) - sent; n != 49 {
		t.Errorf("the re-drop sent %d leads, want its 49 valid rows", n)
	}
	for path, b := range first {
		if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, b) {
			t.Errorf("the re-drop changed the first run's %s (%v)", path, err)
		}
	}
	for _, suffix := range nightFiles {
		if files := h.files(t, suffix); len(files) != 2 {
			t.Errorf("after the re-drop: %d %s files, want 2 (one per input): %v", len(files), suffix, files)
		}
	}

	sent = totalCreates(s)
	if code := h.night(t); code != app.ExitOK {
		b, _ := os.ReadFile(h.log)
		t.Fatalf("a rerun of the re-drop: exit %d, want 0\n%s", code, b)
	}
	if n := totalCreates(s) - sent; n != 0 {
		t.Errorf("a rerun of the same input sent %d leads again, want none (--resume)", n)
	}

	log, err := os.ReadFile(h.log)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), "not found") {
		t.Errorf("the cron line's binary was not found:\n%s", log)
	}
	if n := strings.Count(string(log), "msg=started"); n != 3 {
		t.Errorf("%d started lines in the log, want one per run (3)", n)
	}
	for l := range strings.SplitSeq(string(log), "\n") {
		if strings.Contains(l, "level=WARN") {
			t.Errorf("a normal night logs a warning: %s", l)
		}
	}
}

// runAt runs bulkload in-process as runCLI does, with the clock at now
// (the placeholders' {date} and {time}).
func runAt(t testing.TB, now time.Time, vars map[string]string, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	var environ []string
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	if _, ok := vars["XDG_STATE_HOME"]; !ok {
		environ = append(environ, "XDG_STATE_HOME="+t.TempDir()) // a ledger of its own
	}
	e := &app.Env{Getenv: lookupEnv(environ), Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Now: func() time.Time { return now }, Deps: testDeps(t)}
	code := runEnv(context.Background(), e, args)
	return cliResult{code: code, stdout: out.String(), stderr: errb.String()}
}

// snapshot reads every file of dir by name.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// TestRefusedRunReplacesNothing: with the {date} pattern alone, a re-drop
// with new contents the same day is refused (exit 2) before its first
// call, with or without --resume; it replaces none of the first run's
// files (results, meta, summary JSON, rejects, the report beside the
// results, the metrics file), and its message names a pattern that would
// have worked ({sha} added to the one given).
func TestRefusedRunReplacesNothing(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	runs, prom := filepath.Join(dir, "runs"), filepath.Join(dir, "prom", "acme.prom")
	for _, d := range []string{runs, filepath.Dir(prom)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	input := filepath.Join(dir, "leads.csv")
	day := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	args := func(extra ...string) []string {
		return checkUploadArgs(s, append(extra, "--results", runs+"/{name}-{date}.results.csv", "--rejects", runs+"/{name}-{date}.rejects.csv",
			"--summary-json", runs+"/{name}-{date}.summary.json", "--report", runs+"/{name}-{date}.report.html", "--metrics-file", prom, "--job-name", "acme", input)...)
	}
	redrop(t, input, 0, 4)
	if res := runAt(t, day, secretEnv(), args("--resume")...); res.code != app.ExitOK {
		t.Fatalf("first export: exit %d\n%s", res.code, res.stderr)
	}
	before, metrics := snapshot(t, runs), snapshot(t, filepath.Dir(prom))
	sent := totalCreates(s)

	redrop(t, input, 1)
	for _, extra := range [][]string{{"--resume"}, nil} {
		res := runAt(t, day.Add(3*time.Hour), secretEnv(), args(extra...)...)
		if res.code != app.ExitUsage {
			t.Fatalf("re-drop %v on the {date} pattern: exit %d, want %d\n%s", extra, res.code, app.ExitUsage, res.stderr)
		}
		want := "--results '" + runs + "/{name}-{date}-{sha}.results.csv'"
		if !strings.Contains(res.stderr, want) {
			t.Errorf("re-drop %v: the message does not name %s:\n%s", extra, want, res.stderr)
		}
		if totalCreates(s) != sent {
			t.Errorf("re-drop %v: a refused run sent leads", extra)
		}
		if after := snapshot(t, runs); !maps.Equal(after, before) {
			t.Errorf("re-drop %v: a refused run changed the runs directory: %d files before, %d after", extra, len(before), len(after))
			for name, b := range after {
				if before[name] != b {
					t.Errorf("  %s changed", name)
				}
			}
		}
		if after := snapshot(t, filepath.Dir(prom)); !maps.Equal(after, metrics) {
			t.Errorf("re-drop %v: a refused run rewrote the metrics file", extra)
		}
	}
}

// TestNightAfterNight: the README's pattern over two days: a rerun of the
// same day resumes, a re-drop the same day gets its own files, the next
// night's run (same export name, new contents) its own again.
func TestNightAfterNight(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := filepath.Join(dir, "leads.csv")
	pattern := dir + "/{name}-{date}-{sha}"
	args := checkUploadArgs(s, "--resume", "--results", pattern+".results.csv", "--rejects", pattern+".rejects.csv", "--summary-json", pattern+".summary.json", input)
	day1 := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	nights := []struct {
		name    string
		now     time.Time
		variant int
		sends   int
	}{
		{"night 1", day1, 0, 49},
		{"night 1, rerun", day1.Add(time.Hour), 0, 0},
		{"night 1, re-drop", day1.Add(5 * time.Hour), 1, 49},
		{"night 2", day1.Add(24 * time.Hour), 2, 49},
	}
	for _, n := range nights {
		redrop(t, input, n.variant, 6)
		sent := totalCreates(s)
		res := runAt(t, n.now, secretEnv(), args...)
		if res.code != app.ExitOK {
			t.Fatalf("%s: exit %d\n%s", n.name, res.code, res.stderr)
		}
		if got := totalCreates(s) - sent; got != n.sends {
			t.Errorf("%s: %d leads sent, want %d", n.name, got, n.sends)
		}
	}
	for date, want := range map[string]int{"2026-11-22": 2, "2026-11-23": 1} {
		m, _ := filepath.Glob(filepath.Join(dir, "leads-"+date+"-*.results.csv"))
		if len(m) != want {
			t.Errorf("%s: %d results files, want %d: %v", date, len(m), want, m)
		}
	}
}

// TestNotReachedShown: the service dies a few rows into a 3,000-row file:
// the rows the run never read are in the accounting ("N not reached, left
// for --resume"), the summary JSON and the metrics, not only in the last
// error line, and --resume sends them.
func TestNotReachedShown(t *testing.T) {
	t.Parallel()
	var sw *outageSwitch
	s := startTestSimHandler(t, leadsim.Options{}, func(srv *leadsim.Server) http.Handler {
		sw = &outageSwitch{h: srv.Handler(), downFrom: 12}
		return sw
	})
	dir := t.TempDir()
	recs := sampleRecords(t)
	big := [][]string{recs[0]}
	for v := range 60 {
		for _, rec := range recs[1:] {
			rec = slices.Clone(rec)
			rec[slices.Index(recs[0], "leadId")] += fmt.Sprintf("-%d", v)
			rec[slices.Index(recs[0], "email")] = fmt.Sprintf("v%d.%s", v, rec[slices.Index(recs[0], "email")])
			rec[slices.Index(recs[0], "socialSecurityNumber")] = ""
			big = append(big, rec)
		}
	}
	input := filepath.Join(dir, "big.csv")
	writeCSV(t, input, big)
	summary, prom := filepath.Join(dir, "s.json"), filepath.Join(dir, "m.prom")
	args := uploadArgs(s, "", filepath.Join(dir, "r.csv"), input, "--concurrency", "1", "--max-consecutive-failures", "5", "--outage-wait", "1s", "--summary-json", summary, "--metrics-file", prom)
	res := runCLI(t, secretEnv(), args...)
	if res.code != app.ExitUnreachable {
		t.Fatalf("exit %d, want %d\n%s", res.code, app.ExitUnreachable, res.stderr)
	}
	sj := readSummaryJSON(t, summary)
	read, notReached := sj["rowsRead"].(float64), sj["notReached"].(float64)
	if sj["inputRows"] != 3000.0 || read+notReached != 3000 || notReached < 2000 {
		t.Fatalf("inputRows %v, rowsRead %v, notReached %v: want 3000 = read + not reached, most not reached", sj["inputRows"], read, notReached)
	}
	if want := fmt.Sprintf("; %d not reached, left for --resume", int(notReached)); !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "not reached") {
		t.Errorf("the accounting does not say %q:\n%s", want, res.stderr)
	}
	if vals, _ := parseMetrics(t, prom); vals["bulkload_rows_total{status=not_reached}"] != notReached {
		t.Errorf("bulkload_rows_total{status=not_reached} = %v, want %v", vals["bulkload_rows_total{status=not_reached}"], notReached)
	}
	sw.healed.Store(true)
	// The resume sends the rows not reached at 8 calls in flight (at the
	// first run's 1, the 2,990-odd rows took most of the test's time).
	args = append(args[:len(args)-1], "--resume", input)
	args[slices.Index(args, "--concurrency")+1] = "8"
	if res := runCLI(t, secretEnv(), args...); res.code != app.ExitOK {
		t.Fatalf("--resume: exit %d\n%s", res.code, res.stderr)
	}
	if sj := readSummaryJSON(t, summary); sj["notReached"] != 0.0 {
		t.Errorf("after --resume notReached = %v, want 0", sj["notReached"])
	}
}

// refuser answers createLead for the leadIds in refuse with a GraphQL
// refusal (BAD_USER_INPUT in a 200 answer), and for those in flaky with
// 503 (retryable: left for --resume); the rest go to h.
type refuser struct {
	h             http.Handler
	refuse, flaky []string
}

func (f *refuser) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/graphql" {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte("createLead")) {
			for _, id := range f.refuse {
				if bytes.Contains(body, []byte(`"`+id+`"`)) {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprint(w, `{"errors":[{"message":"loanAmount: over this partner's limit","extensions":{"code":"BAD_USER_INPUT"}}],"data":null}`)
					return
				}
			}
			for _, id := range f.flaky {
				if bytes.Contains(body, []byte(`"`+id+`"`)) {
					http.Error(w, "busy", http.StatusServiceUnavailable)
					return
				}
			}
		}
	}
	f.h.ServeHTTP(w, r)
}

// TestRefusalsFile: rows the service refused outright go to --refusals in
// the input's own columns with the service's reason (a file the partner
// can fix and send again, as Salesforce's error file); rows that failed
// for the moment (503 until the retries ran out) are not in it: --resume
// sends those. Invalid rows stay in --rejects.
func TestRefusalsFile(t *testing.T) {
	t.Parallel()
	s := startTestSimHandler(t, leadsim.Options{}, func(srv *leadsim.Server) http.Handler {
		return &refuser{h: srv.Handler(), refuse: []string{"ACME-000005", "ACME-000017"}, flaky: []string{"ACME-000009"}}
	})
	dir := t.TempDir()
	input, _ := partnerFileWithInvalid(t, dir, "acme.csv", 3)
	refusals, rejects := filepath.Join(dir, "acme.refusals.csv"), filepath.Join(dir, "acme.rejects.csv")
	res := runCLI(t, secretEnv(), checkUploadArgs(s, "--max-attempts", "1", "--results", filepath.Join(dir, "r.csv"), "--rejects", rejects, "--refusals", refusals, input)...)
	if res.code != app.ExitRowsFailed {
		t.Fatalf("exit %d, want %d (failed rows)\n%s", res.code, app.ExitRowsFailed, res.stderr)
	}
	recs := readCSVFile(t, refusals)
	header := sampleRecords(t)[0]
	if len(recs) != 3 || recs[0][0] != "error" || !slices.Equal(recs[0][1:], header) {
		t.Fatalf("refusals file: %d rows, header %v; want the error column, the input's columns and 2 rows", len(recs)-1, recs[0])
	}
	id := slices.Index(header, "leadId") + 1
	for i, want := range []string{"ACME-000005", "ACME-000017"} {
		if recs[i+1][id] != want || !strings.Contains(recs[i+1][0], "over this partner's limit") {
			t.Errorf("refusals row %d = %s %q, want %s with the service's reason", i+1, recs[i+1][id], recs[i+1][0], want)
		}
	}
	if rej := readCSVFile(t, rejects); len(rej) != 2 {
		t.Errorf("rejects file has %d rows, want the 1 invalid", len(rej)-1)
	}
	if st, err := os.Stat(refusals); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("refusals file mode %v (%v), want 0600: it holds the partner's data", st, err)
	}
	if res := runCLI(t, nil, "upload", "--simulate", "--refusals", filepath.Join(dir, "x.csv"), "-"); res.code != app.ExitUsage || !strings.Contains(res.stderr, "--refusals needs an input file") {
		t.Errorf("--refusals with standard input: exit %d\n%s", res.code, res.stderr)
	}
}
