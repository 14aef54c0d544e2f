package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
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
