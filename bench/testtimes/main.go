// Command testtimes runs `go test -count=1 -json` over packages and prints
// how long each package's test binary ran (wall) and what CPU it used (user
// plus system, its children included), then the slowest tests. It is how
// issue 30's "a test suite that computes instead of waits" is measured:
//
//	go run ./bench/testtimes                      # ./..., the 15 slowest tests
//	go run ./bench/testtimes -slow 40 ./cmd/bulkload ./app
//	go run ./bench/testtimes -run TestUpload ./cmd/bulkload
//	go run ./bench/testtimes -events bench/out/tests.json ./...   # keep go test's events
//
// Each test binary runs under testtimes itself (go test -exec), which takes
// the binary's rusage when it exits; the binary runs in its package's
// directory, which names the package. The whole `go test` (builds included)
// is measured too. Exit status: go test's.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// wrapFlag is the first argument of testtimes when go test runs a test
// binary through it.
const wrapFlag = "-wrap-into"

// binary is what the wrapper records of one test binary.
type binary struct {
	Dir   string  `json:"dir"`
	WallS float64 `json:"wallSeconds"`
	CPUS  float64 `json:"cpuSeconds"`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) >= 2 && args[0] == wrapFlag {
		return wrap(ctx, args[1], args[2:], stderr)
	}
	fs := flag.NewFlagSet("testtimes", flag.ContinueOnError)
	fs.SetOutput(stderr)
	slow := fs.Int("slow", 15, "how many of the slowest tests to list (top-level tests)")
	runRe := fs.String("run", "", "passed to go test -run")
	subtests := fs.Bool("subtests", false, "list subtests among the slowest too")
	events := fs.String("events", "", "also write go test's JSON events to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	pkgs := fs.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "testtimes: %v\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "testtimes-")
	if err != nil {
		fmt.Fprintf(stderr, "testtimes: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)

	goArgs := []string{"test", "-count=1", "-json", "-exec", self + " " + wrapFlag + " " + dir}
	if *runRe != "" {
		goArgs = append(goArgs, "-run", *runRe)
	}
	goArgs = append(goArgs, pkgs...)
	load0 := loadavg()
	cmd := exec.CommandContext(ctx, "go", goArgs...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "testtimes: %v\n", err)
		return 1
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "testtimes: %v\n", err)
		return 1
	}
	type test struct {
		pkg, name, action string
		elapsed           float64
	}
	var tests []test
	pkgResult := map[string]string{}
	var failed []string
	var src io.Reader = out
	if *events != "" {
		f, err := os.Create(*events)
		if err != nil {
			fmt.Fprintf(stderr, "testtimes: %v\n", err)
			return 1
		}
		defer f.Close()
		src = io.TeeReader(out, f)
	}
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct {
			Action, Package, Test, Output string
			Elapsed                       float64
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Action {
		case "pass", "fail", "skip":
			if ev.Test == "" {
				pkgResult[ev.Package] = ev.Action
				if ev.Action == "fail" {
					failed = append(failed, ev.Package)
				}
				continue
			}
			if ev.Action == "fail" {
				failed = append(failed, ev.Package+" "+ev.Test)
			}
			tests = append(tests, test{ev.Package, ev.Test, ev.Action, ev.Elapsed})
		case "output":
			if ev.Test == "" && strings.HasPrefix(ev.Output, "FAIL") {
				fmt.Fprint(stderr, ev.Output)
			}
		}
	}
	werr := cmd.Wait()
	wall := time.Since(start).Seconds()
	var goCPU float64
	if cmd.ProcessState != nil {
		goCPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}

	bins, err := readBinaries(dir)
	if err != nil {
		fmt.Fprintf(stderr, "testtimes: %v\n", err)
	}
	sort.Slice(bins, func(i, j int) bool { return bins[i].WallS > bins[j].WallS })
	root, _ := os.Getwd()
	fmt.Fprintf(stdout, "go test -count=1 %s on %d CPUs, load %s before, %s after\n", strings.Join(pkgs, " "), runtime.NumCPU(), load0, loadavg())
	fmt.Fprintf(stdout, "%-34s %9s %9s\n", "package (test binary)", "wall s", "CPU s")
	var sumWall, sumCPU float64
	for _, b := range bins {
		rel, err := filepath.Rel(root, b.Dir)
		if err != nil {
			rel = b.Dir
		}
		fmt.Fprintf(stdout, "%-34s %9.1f %9.1f\n", "./"+filepath.ToSlash(rel), b.WallS, b.CPUS)
		sumWall += b.WallS
		sumCPU += b.CPUS
	}
	fmt.Fprintf(stdout, "%-34s %9.1f %9.1f\n", fmt.Sprintf("sum of %d binaries", len(bins)), sumWall, sumCPU)
	fmt.Fprintf(stdout, "%-34s %9.1f %9.1f\n", "go test, builds included", wall, goCPU)

	sort.Slice(tests, func(i, j int) bool { return tests[i].elapsed > tests[j].elapsed })
	fmt.Fprintf(stdout, "\nslowest tests (elapsed s, as go test -json reports it)\n")
	n := 0
	for _, t := range tests {
		if n == *slow {
			break
		}
		if !*subtests && strings.Contains(t.name, "/") {
			continue
		}
		fmt.Fprintf(stdout, "%8.2f  %s %s %s\n", t.elapsed, strings.TrimPrefix(t.pkg, modulePrefix(t.pkg)), t.name, map[string]string{"pass": "", "skip": "(skip)", "fail": "(FAIL)"}[t.action])
		n++
	}
	if len(failed) > 0 {
		fmt.Fprintf(stdout, "\nfailed: %s\n", strings.Join(failed, ", "))
	}
	var exitErr *exec.ExitError
	if errors.As(werr, &exitErr) {
		return exitErr.ExitCode()
	}
	if werr != nil {
		fmt.Fprintf(stderr, "testtimes: %v\n", werr)
		return 1
	}
	return 0
}

// modulePrefix is what testtimes cuts from a package path to keep the
// table narrow: the module path up to its last element's slash.
func modulePrefix(pkg string) string {
	const mod = "github.com/bulkload/bulkload/"
	if strings.HasPrefix(pkg, mod) {
		return mod
	}
	return ""
}

// wrap runs one test binary, passes its exit status on and records its
// wall and CPU time in dir.
func wrap(ctx context.Context, dir string, argv []string, stderr io.Writer) int {
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "testtimes: nothing to run")
		return 2
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start).Seconds()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		fmt.Fprintf(stderr, "testtimes: %v\n", err)
		return 127
	}
	ps := cmd.ProcessState
	cwd, _ := os.Getwd()
	b, _ := json.Marshal(binary{Dir: cwd, WallS: wall, CPUS: (ps.UserTime() + ps.SystemTime()).Seconds()})
	f, ferr := os.CreateTemp(dir, "bin-*.json")
	if ferr == nil {
		_, ferr = f.Write(b)
		if cerr := f.Close(); ferr == nil {
			ferr = cerr
		}
	}
	if ferr != nil {
		fmt.Fprintf(stderr, "testtimes: record %s: %v\n", cwd, ferr)
	}
	return ps.ExitCode()
}

func readBinaries(dir string) ([]binary, error) {
	names, err := filepath.Glob(filepath.Join(dir, "bin-*.json"))
	if err != nil {
		return nil, err
	}
	var bins []binary
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return bins, err
		}
		var b binary
		if err := json.Unmarshal(data, &b); err != nil {
			return bins, fmt.Errorf("%s: %w", name, err)
		}
		bins = append(bins, b)
	}
	return bins, nil
}

func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
