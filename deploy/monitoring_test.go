package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// tool returns the path of a program a test needs. A missing one fails the
// test (a skipped check would pass unseen): .ci/run installs them, and the
// message says how to install it by hand.
func tool(t *testing.T, name, debianPackage string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: install it (Debian: apt-get install --no-install-recommends %s; .ci/run does) to run this check", name, debianPackage)
	}
	return p
}

// readmeAlertRules returns the alert rules README.md gives, the YAML block
// of its section "Metrics for a monitoring system".
func readmeAlertRules(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Metrics for a monitoring system\n")
	if !ok {
		t.Fatal(`README.md has no section "Metrics for a monitoring system"`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	_, block, ok := strings.Cut(sec, "\n```yaml\n")
	if !ok {
		t.Fatal("the README's metrics section has no ```yaml block of alert rules")
	}
	block, _, _ = strings.Cut(block, "\n```")
	if !strings.HasPrefix(block, "groups:") {
		t.Fatalf("the README's first yaml block in the metrics section is not a rules file:\n%s", block)
	}
	return []byte(block + "\n")
}

// TestAlertRules: the alert rules the README gives are valid Prometheus
// rules (promtool check rules) and fire when they should, and only then
// (promtool test rules with prometheus/alerts.test.yaml): a nightly job
// without a success for 26 hours, a run that exited non-zero, a partner
// whose figures never arrived; never a finished backfill's shards for
// staleness.
func TestAlertRules(t *testing.T) {
	promtool := tool(t, "promtool", "prometheus")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), readmeAlertRules(t), 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile("prometheus/alerts.test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts.test.yaml"), tests, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "alerts.test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestMetricsFilePassesPromtool: the file --metrics-file writes, for a
// plain run and for a shard, passes `promtool check metrics` (the
// exposition format and Prometheus's naming conventions), and carries the
// series the alert rules use.
func TestMetricsFilePassesPromtool(t *testing.T) {
	promtool := tool(t, "promtool", "prometheus")
	bin := buildBulkload(t)
	for _, shard := range []string{"", "1/2"} {
		dir := t.TempDir()
		prom := filepath.Join(dir, "acme.prom")
		args := []string{"upload", "--simulate", "--progress", "off", "--results", filepath.Join(dir, "r.csv"),
			"--metrics-file", prom, "--job-name", "acme", "../samples/leads.csv"}
		if shard != "" {
			args = append(args[:len(args)-1], "--shard", shard, args[len(args)-1])
		}
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("bulkload %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		b, err := os.ReadFile(prom)
		if err != nil {
			t.Fatal(err)
		}
		check := exec.Command(promtool, "check", "metrics")
		check.Stdin = bytes.NewReader(b)
		if out, err := check.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("promtool check metrics (--shard %q): %v\n%s", shard, err, out)
		}
		for _, series := range []string{"bulkload_last_success_timestamp_seconds{", "bulkload_last_run_exit_code{", "bulkload_build_info{"} {
			if !bytes.Contains(b, []byte("\n"+series)) {
				t.Errorf("--shard %q: the metrics file lacks %s...}", shard, series)
			}
		}
		if shard != "" && !bytes.Contains(b, []byte(`shard="1-of-2"`)) {
			t.Errorf("--shard %s: the metrics file's series carry no shard label", shard)
		}
	}
}

// TestSystemdAnalyze runs systemd's own checks on the unit and the timer,
// installed under an instance name (bulkload@acme) with ExecStart pointing
// at a bulkload built from this repository: `systemd-analyze verify`
// (unknown keys, bad values, a missing binary) and `systemd-analyze
// security --offline=true`, whose exposure score must stay under 2.0 (OK).
func TestSystemdAnalyze(t *testing.T) {
	analyze := tool(t, "systemd-analyze", "systemd")
	bin := buildBulkload(t)
	dir := t.TempDir()
	for _, f := range []struct{ from, to string }{
		{"systemd/bulkload@.service", "bulkload@acme.service"},
		{"systemd/bulkload@.timer", "bulkload@acme.timer"},
	} {
		b, err := os.ReadFile(f.from)
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte("/usr/local/bin/bulkload "), []byte(bin+" "))
		if err := os.WriteFile(filepath.Join(dir, f.to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	verify := exec.Command(analyze, "verify", "bulkload@acme.service", "bulkload@acme.timer")
	verify.Dir = dir
	if out, err := verify.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	sec := exec.Command(analyze, "security", "--offline=true", "--no-pager", "./bulkload@acme.service")
	sec.Dir = dir
	out, err := sec.CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Overall exposure level for \S+: (\d+\.\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security printed no overall exposure level:\n%s", out)
	}
	if score, _ := strconv.ParseFloat(string(m[1]), 64); score >= 2.0 {
		t.Errorf("systemd-analyze security --offline=true: exposure %s, want under 2.0 (OK):\n%s", m[1], out)
	}
}
