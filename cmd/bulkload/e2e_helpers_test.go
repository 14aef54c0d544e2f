package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/internal/resultstest"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/leadsim/simtest"
)

// TestMain lets a test run this test binary as the bulkload command
// itself (for signals and SIGKILL): with BULKLOAD_TEST_AS_MAIN=1 it runs
// main with the arguments it was given.
func TestMain(m *testing.M) {
	if os.Getenv("BULKLOAD_TEST_AS_MAIN") == "1" {
		if v := os.Getenv("BULKLOAD_TEST_FILE_SIZE_LIMIT"); v != "" {
			// A disk that is full past this size (RLIMIT_FSIZE: writes
			// beyond it fail with EFBIG).
			n, err := strconv.ParseUint(v, 10, 64)
			if err == nil {
				err = limitFileSize(n)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "BULKLOAD_TEST_FILE_SIZE_LIMIT:", err)
				os.Exit(2)
			}
		}
		main()
		return
	}
	state, err := privateState()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	flag.Parse()
	if !flagSet("test.parallel") {
		// Most of these tests wait on a simulator's latency, an outage, a
		// subprocess or a browser, not on the CPU: run up to 8 at once
		// (the default, GOMAXPROCS, is 2 on a 2-CPU CI machine). The
		// tests whose figures come from the clock stay serial, and serial
		// tests run alone, before the parallel ones.
		flag.Set("test.parallel", "8")
	}
	code := m.Run()
	if pgServer != nil {
		pgServer.Stop()
	}
	os.RemoveAll(state)
	os.Exit(code)
}

// privateState gives the tests, and every bulkload this test binary
// starts as a process with os.Environ(), a state folder of their own
// (XDG_STATE_HOME, which holds the default ledger) and no BULKLOAD_*
// setting of the shell that runs go test: a run that inherited them
// would record its leads and runs in the user's own ledger (a developer's
// or an operator's history filling with the tests' runs, or a
// BULKLOAD_LEDGER naming a production database), and a later test on a
// reused port would find them already sent. It returns the folder, which
// the caller removes.
func privateState() (string, error) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "BULKLOAD_") {
			os.Unsetenv(k)
		}
	}
	dir, err := os.MkdirTemp("", "bulkload-test-state-")
	if err != nil {
		return "", fmt.Errorf("a state folder for the tests: %w", err)
	}
	return dir, os.Setenv("XDG_STATE_HOME", dir)
}

const (
	simSecret = leadsim.DefaultClientSecret
	samples   = "../../samples"
)

// sim is a leadsim server for one test.
type sim struct {
	*leadsim.Server
	url string
}

func startTestSim(t testing.TB, opts leadsim.Options) *sim {
	t.Helper()
	return startTestSimHandler(t, opts, nil)
}

// startTestSimHandler is startTestSim with the simulator's handler wrapped
// by wrap (see simtest.StartHandler).
func startTestSimHandler(t testing.TB, opts leadsim.Options, wrap func(*leadsim.Server) http.Handler) *sim {
	t.Helper()
	return simOf(simtest.StartHandler(t, opts, wrap))
}

// simOf is the sim of a simulator that simtest started.
func simOf(s *simtest.Server) *sim { return &sim{Server: s.Server, url: s.URL} }

// args are the flags that point upload at the simulator.
func (s *sim) args() []string {
	return []string{
		"--endpoint", s.url + "/graphql",
		"--auth-url", s.url,
		"--tenant-id", leadsim.DefaultTenantID,
		"--client-id", leadsim.DefaultClientID,
		"--app-id", leadsim.DefaultAppID,
	}
}

// cliResult is what one bulkload command did.
type cliResult struct {
	code           int
	stdout, stderr string
}

// flagSet reports whether the command line set the flag name.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// runCLI runs bulkload in-process with the given environment. Its stdout
// and stderr are safe for concurrent writes: a token fetch that a run gave
// Up waiting for may still log while the run writes its last lines, as it
// may into a real process's stderr.
func runCLI(t testing.TB, env map[string]string, args ...string) cliResult {
	t.Helper()
	return runCLIDeps(t, testDeps(t), env, args...)
}

// runCLIDeps is runCLI with deps.
func runCLIDeps(t testing.TB, deps app.Deps, env map[string]string, args ...string) cliResult {
	t.Helper()
	var out, errb syncBuffer
	environ := make([]string, 0, len(env)+1)
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	if _, ok := env["XDG_STATE_HOME"]; !ok {
		// Each run its own default ledger, unless the test shares one:
		// a test's runs know nothing of each other's leads, as before
		// the ledger.
		environ = append(environ, "XDG_STATE_HOME="+t.TempDir())
	}
	e := &app.Env{Getenv: lookupEnv(environ), Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Now: time.Now, Deps: deps}
	code := runEnv(context.Background(), e, args)
	return cliResult{code: code, stdout: out.String(), stderr: errb.String()}
}

// testDeps are the dependencies of the tests' in-process runs: backoff of
// milliseconds (a retry, the preflight's asking again, an outage's probes
// and the token requests compute instead of waiting out production's 500
// ms to 30 s), the tests' signing key for --simulate (no key generated per
// run), a streamed input's identity brought up to date every 50 ms, and
// the runtime's memory settings left alone (tests run at once).
func testDeps(t testing.TB) app.Deps {
	return app.Deps{BackoffBase: time.Millisecond, BackoffMax: 50 * time.Millisecond, SimSigningKey: simtest.SigningKey(t),
		IdentityEvery: 50 * time.Millisecond, KeepRuntimeSettings: true}
}

func secretEnv() map[string]string {
	return map[string]string{"BULKLOAD_CLIENT_SECRET": simSecret}
}

// subprocess starts this test binary as the bulkload command.
func subprocess(t *testing.T, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	return subprocessEnv(t, nil, args...)
}

// subprocessEnv is subprocess with more environment variables.
func subprocessEnv(t *testing.T, env []string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	// A ledger of the test's own unless env names one (never the user's).
	cmd.Env = append(append(os.Environ(), "BULKLOAD_TEST_AS_MAIN=1", "BULKLOAD_CLIENT_SECRET="+simSecret, "XDG_STATE_HOME="+t.TempDir()), env...)
	// Safe to read while the process runs (a test waits for a line).
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cmd.Stdout = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start bulkload: %v", err)
	}
	return cmd, stderr
}

// waitForLines polls a results file until it has at least n lines after
// the header, or the deadline passes. It bounds a wait, it asserts no speed.
func waitForLines(t *testing.T, path string, n int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		if bytes.Count(b, []byte("\n")) > n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s did not reach %d lines within %v", path, n, limit)
}

// The results-file readers are internal/resultstest's, shared with the
// other package of end-to-end tests.
type (
	resultRow   = resultstest.Row
	expectation = resultstest.Expectation
)

func readResults(t *testing.T, path string) []resultRow { return resultstest.ReadResults(t, path) }
func finalByRow(t *testing.T, path string, n int) map[int]resultRow {
	return resultstest.FinalByRow(t, path, n)
}
func readCSVFile(t *testing.T, path string) [][]string { return resultstest.ReadCSVFile(t, path) }
func readExpected(t *testing.T) map[int]expectation {
	return resultstest.ReadExpected(t, filepath.Join(samples, "leads.expected.csv"))
}
func countStatus(rows map[int]resultRow) map[string]int { return resultstest.CountStatus(rows) }
func readSummaryJSON(t *testing.T, path string) map[string]any {
	return resultstest.ReadSummaryJSON(t, path)
}
func parseMetrics(t *testing.T, path string) (map[string]float64, map[string]bool) {
	return resultstest.ReadMetrics(t, path)
}

// sensitiveValues and assertNoSensitive are resultstest's.
func sensitiveValues(t *testing.T, path string) []string {
	return resultstest.SensitiveValues(t, path)
}
func assertNoSensitive(t *testing.T, what, text string, values []string) {
	resultstest.AssertNoSensitive(t, what, text, values)
}

// TestSubprocessStateIsTheTests: a bulkload started as a process with this
// test binary's environment, as the tests of signals and pipes start it,
// keeps its default ledger in the tests' own state folder, never in the
// user's (~/.local/state/bulkload): before, every such run was recorded in
// the ledger of whoever ran go test, and `bulkload history` there listed
// the tests' runs as "killed".
func TestSubprocessStateIsTheTests(t *testing.T) {
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" || !strings.HasPrefix(state, os.TempDir()) {
		t.Fatalf("XDG_STATE_HOME = %q in the test binary, want a folder of its own under %s", state, os.TempDir())
	}
	cmd := exec.Command(os.Args[0], "history")
	cmd.Env = append(os.Environ(), "BULKLOAD_TEST_AS_MAIN=1")
	out, _ := cmd.CombinedOutput() // exit 2 when the folder holds no ledger yet: it names the one it looked for
	if want := filepath.Join(state, "bulkload", "ledger.sqlite"); !strings.Contains(string(out), want) {
		t.Errorf("bulkload history started as a process read another ledger than %s:\n%s", want, out)
	}
}

// The bulkload binary of this test binary's tests that need a real one
// (built by go build, not this test binary acting as bulkload), built once
// by the first of them: a build is seconds of CPU, a link of the whole
// command.
var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
)

// builtBulkload returns the path of a bulkload built from this package
// with GOFLAGS=-buildvcs=false (no VCS stamp, as on many build hosts), in
// the tests' state folder (TestMain removes it), building it the first
// time. The path is shared: a test that needs the binary elsewhere links
// or copies it (installBulkload).
func builtBulkload(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp(os.Getenv("XDG_STATE_HOME"), "bin-")
		if err != nil {
			buildErr = err
			return
		}
		bin := filepath.Join(dir, "bulkload")
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("GOFLAGS=-buildvcs=false go build: %v\n%s", err, out)
			return
		}
		buildBin = bin
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

// installBulkload puts the built bulkload at path (a hard link, else a
// copy), as an install would.
func installBulkload(t testing.TB, path string) {
	t.Helper()
	bin := builtBulkload(t)
	if err := os.Link(bin, path); err == nil {
		return
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatalf("install bulkload at %s: %v", path, err)
	}
}
