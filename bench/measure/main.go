// Command measure runs a command and reports its wall time, CPU time (user
// and system) and peak resident memory, taken from the child's rusage, so
// the benchmark scripts need nothing but Go (no /usr/bin/time).
//
//	measure [-label L] [-o FILE] [-json FILE] [-timeout D] -- CMD [ARGS...]
//
// The child inherits stdin, stdout and stderr. The report is one line of
// key=value on stderr (and appended to -o FILE), plus a JSON object in
// -json FILE. measure exits with the child's exit status (128+signal when
// it was killed, 124 when -timeout killed it), so callers decide which
// statuses are failures.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Report is one measurement.
type Report struct {
	Label     string   `json:"label,omitempty"`
	Command   []string `json:"command"`
	Exit      int      `json:"exit"`
	TimedOut  bool     `json:"timedOut"`
	WallS     float64  `json:"wallSeconds"`
	UserS     float64  `json:"userSeconds"`
	SysS      float64  `json:"sysSeconds"`
	CPUS      float64  `json:"cpuSeconds"`
	MaxRSSKiB int64    `json:"maxRSSKiB"`
}

// Line formats r as one line of key=value.
func (r Report) Line() string {
	return fmt.Sprintf("label=%s exit=%d timed_out=%t wall_s=%.3f user_s=%.3f sys_s=%.3f cpu_s=%.3f maxrss_kib=%d maxrss_mib=%.1f cmd=%q",
		orDash(r.Label), r.Exit, r.TimedOut, r.WallS, r.UserS, r.SysS, r.CPUS, r.MaxRSSKiB, float64(r.MaxRSSKiB)/1024, strings.Join(r.Command, " "))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(s, " ", "_")
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("measure", flag.ContinueOnError)
	fs.SetOutput(stderr)
	label := fs.String("label", "", "label written into the report")
	out := fs.String("o", "", "also append the key=value line to this file")
	jsonOut := fs.String("json", "", "write the report as JSON to this file")
	timeout := fs.Duration("timeout", 0, "kill the command after this long (0: no limit)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: measure [-label L] [-o FILE] [-json FILE] [-timeout D] -- CMD [ARGS...]")
		return 2
	}
	r, err := measure(ctx, fs.Args(), *timeout, stdin, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "measure: %v\n", err)
		return 127
	}
	r.Label = *label
	line := r.Line()
	fmt.Fprintln(stderr, line)
	if *out != "" {
		if err := appendLine(*out, line); err != nil {
			fmt.Fprintf(stderr, "measure: %v\n", err)
			return 125
		}
	}
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "measure: write %s: %v\n", *jsonOut, err)
			return 125
		}
	}
	return r.Exit
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open report file: %w", err)
	}
	if _, err := fmt.Fprintln(f, line); err != nil {
		f.Close()
		return fmt.Errorf("write report file %s: %w", path, err)
	}
	return f.Close()
}

// measure runs argv to completion and returns its figures. An error means
// the command could not be started at all.
func measure(ctx context.Context, argv []string, timeout time.Duration, stdin io.Reader, stdout, stderr io.Writer) (Report, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Report{}, fmt.Errorf("start %s: %w", argv[0], err)
	}
	err := cmd.Wait()
	r := Report{Command: argv, WallS: time.Since(start).Seconds()}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && cmd.ProcessState == nil {
		return r, fmt.Errorf("wait for %s: %w", argv[0], err)
	}
	ps := cmd.ProcessState
	r.TimedOut = ctx.Err() != nil
	r.Exit = ps.ExitCode()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.Exit = 128 + int(ws.Signal())
	}
	if r.TimedOut {
		r.Exit = 124
	}
	r.UserS = ps.UserTime().Seconds()
	r.SysS = ps.SystemTime().Seconds()
	r.CPUS = r.UserS + r.SysS
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		r.MaxRSSKiB = int64(ru.Maxrss) // KiB on Linux
		if runtime.GOOS == "darwin" {
			r.MaxRSSKiB /= 1024 // bytes on macOS
		}
	}
	return r, nil
}
