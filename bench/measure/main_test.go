package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunReportsExitAndFigures(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh: %v", err)
	}
	dir := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		wantExit int
		timedOut bool
	}{
		{"success", []string{sh, "-c", "echo hi"}, 0, false},
		{"exit status passed through", []string{sh, "-c", "exit 3"}, 3, false},
		{"timeout", []string{"-timeout", "200ms", "--", sh, "-c", "exec sleep 5"}, 124, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jsonPath := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			linePath := filepath.Join(dir, "lines.txt")
			args := append([]string{"-label", tc.name, "-o", linePath, "-json", jsonPath}, tc.args...)
			var stdout, stderr bytes.Buffer
			got := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
			if got != tc.wantExit {
				t.Fatalf("run(%q) = %d, want %d; stderr %s", args, got, tc.wantExit, stderr.String())
			}
			b, err := os.ReadFile(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			var r Report
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			if r.Exit != tc.wantExit || r.TimedOut != tc.timedOut || r.WallS <= 0 || r.MaxRSSKiB <= 0 {
				t.Errorf("report = %+v, want exit %d, timedOut %v, positive wall time and RSS", r, tc.wantExit, tc.timedOut)
			}
			if !strings.Contains(stderr.String(), "label="+strings.ReplaceAll(tc.name, " ", "_")+" exit=") {
				t.Errorf("stderr %q lacks the key=value line", stderr.String())
			}
		})
	}
	lines, _ := os.ReadFile(filepath.Join(dir, "lines.txt"))
	if n := strings.Count(string(lines), "\n"); n != len(tests) {
		t.Errorf("-o file has %d lines, want %d", n, len(tests))
	}
}

func TestRunUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if got := run(context.Background(), nil, nil, &out, &errb); got != 2 {
		t.Errorf("run(nil) = %d, want 2", got)
	}
	if got := run(context.Background(), []string{"/nonexistent/cmd"}, nil, &out, &errb); got != 127 {
		t.Errorf("run(nonexistent) = %d, want 127", got)
	}
}
