package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/internal/resultstest"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/leadsim/simtest"
	"github.com/bulkload/bulkload/ledger"
	"github.com/bulkload/bulkload/summary"
)

// This file is app's test harness: an upload run in-process against a
// leadsim simulator, from options built as a test wants them (no argv, no
// flag parsing: that is cmd/bulkload's, and its end-to-end tests'), with
// the tests' Deps (backoff of milliseconds, the tests' signing key). What
// a run shows is what the command line shows: its exit status, standard
// output, and standard error (the log, the summary, and the error's line
// as cmd/bulkload's exitFor prints it).

// samples is the repository's folder of sample inputs.
const samples = "../samples"

// startSim starts a simulator for the test (simtest.Start).
func startSim(t testing.TB, opts leadsim.Options) *simtest.Server {
	t.Helper()
	return simtest.Start(t, opts)
}

// startSimHandler starts a simulator whose handler wrap wraps
// (simtest.StartHandler).
func startSimHandler(t testing.TB, opts leadsim.Options, wrap func(*leadsim.Server) http.Handler) *simtest.Server {
	t.Helper()
	return simtest.StartHandler(t, opts, wrap)
}

// simCredentials are the settings that point an upload at s.
func simCredentials(s *simtest.Server) Credentials {
	return Credentials{Endpoint: s.Endpoint(), TokenURL: s.TokenURL(), ClientID: s.ClientID, Secret: s.ClientSecret, Scope: s.Scope()}
}

// testDeps are the dependencies of the tests' runs: backoff of
// milliseconds (a retry, the preflight's asking again, an outage's probes
// and the token requests compute instead of waiting out production's),
// the tests' signing key, a streamed input's identity brought up to date
// every 50 ms, and the runtime's memory settings left alone (tests run at
// once). cmd/bulkload's tests run with the same.
func testDeps(t testing.TB) Deps {
	return Deps{BackoffBase: time.Millisecond, BackoffMax: 50 * time.Millisecond, SimSigningKey: simtest.SigningKey(t),
		IdentityEvery: 50 * time.Millisecond, KeepRuntimeSettings: true}
}

// newUploadJob is an upload of input with every option at its flag's
// default, as `bulkload upload INPUT` starts, except that progress is off
// and the rate is fixed at 0 (unlimited), as the tests of cmd/bulkload ran
// their uploads (--rate 0 --progress off) unless a test says otherwise.
func newUploadJob(input string) *UploadJob {
	up := NewUploadOptions()
	up.Rate = Rate{}
	up.Progress = "off"
	return &UploadJob{Input: input, In: NewInputOptions(""), Up: up, Checks: NewCheckOptions(true),
		Metrics: NewMetricsOptions(), Ledger: &LedgerOptions{}}
}

// uploadJob is newUploadJob of input with the results file results and
// the options as change leaves them.
func uploadJob(input, results string, change func(j *UploadJob)) *UploadJob {
	j := newUploadJob(input)
	j.In.Results = results
	if change != nil {
		change(j)
	}
	return j
}

// runResult is what one run did, as the command line shows it.
type runResult struct {
	code           int
	stdout, stderr string
	sum            *summary.Summary // nil when the run stopped before it had one
	err            error
}

// runOpts are what a test may change of a run's world.
type runOpts struct {
	env  map[string]string // the environment (XDG_STATE_HOME: a folder of the test's own unless set)
	deps *Deps             // nil: testDeps
	now  func() time.Time  // nil: time.Now
	json bool              // --log-format json
	// secret is the client secret instead of the simulator's (a wrong
	// one), as BULKLOAD_CLIENT_SECRET gives it.
	secret string
	// stdin is what the run reads as standard input (an input "-").
	stdin []byte
	// endpoint is the service's URL instead of the simulator's (a dead
	// port, a page that is no GraphQL endpoint), as --endpoint gives it.
	endpoint string
	// ctx is the run's context instead of one that never ends: its end is
	// the first SIGINT/SIGTERM, as cmd/bulkload's signal handling cancels
	// it.
	ctx context.Context
}

// runUpload runs j against the simulator s as `bulkload upload` runs it
// (cmd/bulkload's runUpload): the job prepared, a text logger at level info
// on stderr, the run, the error's line, and with JSON logs the summary as
// the last record. A run stopped before it began is recorded as
// cmd/bulkload records it (StoppedUpload).
func runUpload(t testing.TB, s *simtest.Server, j *UploadJob, o ...runOpts) runResult {
	t.Helper()
	r := newTestRun(t, o)
	var creds Credentials
	if s != nil {
		creds = simCredentials(s)
	}
	if r.opt.endpoint != "" {
		creds.Endpoint = r.opt.endpoint
	}
	if r.opt.secret != "" {
		creds.Secret = r.opt.secret
	}
	var sum *summary.Summary
	err := j.Prepare(r.e)
	if err != nil {
		StoppedUpload(r.ctx, r.e, r.log, j, ledger.Account{Endpoint: creds.Endpoint, ClientID: creds.ClientID}, err)
	} else {
		sum, err = RunUploadJob(r.ctx, r.e, r.log, j, creds, false)
	}
	return r.end(sum, err)
}

// newValidateJob is a validate of input with every option at its flag's
// default, as `bulkload validate INPUT` starts.
func newValidateJob(input string) *ValidateJob {
	return &ValidateJob{Input: input, In: NewInputOptions(".validation.csv"), Checks: NewCheckOptions(false), Metrics: NewMetricsOptions()}
}

// runValidate runs j as `bulkload validate` runs it (cmd/bulkload's
// runValidate), as runUpload does an upload.
func runValidate(t testing.TB, j *ValidateJob, o ...runOpts) runResult {
	t.Helper()
	r := newTestRun(t, o)
	var sum *summary.Summary
	err := j.Prepare(r.e)
	if err == nil {
		sum, err = RunValidateJob(r.ctx, r.e, r.log, j)
	}
	return r.end(sum, err)
}

// testRun is the world of one run: its Env, logger and streams.
type testRun struct {
	opt       runOpts
	e         *Env
	ctx       context.Context
	log       *slog.Logger
	out, errb *syncBuffer
}

func newTestRun(t testing.TB, o []runOpts) *testRun {
	t.Helper()
	r := &testRun{ctx: context.Background(), out: &syncBuffer{}, errb: &syncBuffer{}}
	if len(o) > 0 {
		r.opt = o[0]
	}
	if r.opt.ctx != nil {
		r.ctx = r.opt.ctx
	}
	env := map[string]string{}
	for k, v := range r.opt.env {
		env[k] = v
	}
	if _, ok := env["XDG_STATE_HOME"]; !ok {
		// Each run its own default ledger, unless the test shares one.
		env["XDG_STATE_HOME"] = t.TempDir()
	}
	deps := testDeps(t)
	if r.opt.deps != nil {
		deps = *r.opt.deps
	}
	now := r.opt.now
	if now == nil {
		now = time.Now
	}
	r.e = &Env{Getenv: func(k string) string { return env[k] }, Stdin: bytes.NewReader(r.opt.stdin), Stdout: r.out, Stderr: r.errb, Now: now, Deps: deps}
	if r.opt.json {
		r.log = slog.New(slog.NewJSONHandler(r.errb, &slog.HandlerOptions{Level: slog.LevelInfo}))
		r.e.JSONLogs = true
	} else {
		r.log = slog.New(slog.NewTextHandler(r.errb, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return r
}

// end is the run's result: its error's line written as exitFor writes it,
// and with JSON logs the summary logged last.
func (r *testRun) end(sum *summary.Summary, err error) runResult {
	code := StatusOf(err)
	if line := errorLine(err); line != "" {
		if r.opt.json {
			r.log.Error(strings.TrimPrefix(line, "bulkload: "))
		} else {
			r.errb.Write([]byte(line + "\n"))
		}
	}
	if sum != nil {
		LogSummary(r.e, r.log, sum, code)
	}
	return runResult{code: code, stdout: r.out.String(), stderr: r.errb.String(), sum: sum, err: err}
}

// errorLine is the line cmd/bulkload's exitFor prints for a command's
// error ("" for none): the message of an ExitError unless it is quiet,
// "interrupted" for a cancelled run, a usage error without its "usage: ".
func errorLine(err error) string {
	var xe *ExitError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &xe):
		if xe.Quiet {
			return ""
		}
		return "bulkload: " + xe.Msg
	case errors.Is(err, context.Canceled):
		return "bulkload: interrupted"
	case errors.Is(err, ErrUsage):
		return "bulkload: " + strings.TrimPrefix(err.Error(), "usage: ")
	default:
		return "bulkload: " + err.Error()
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes: a token fetch
// that a run gave up waiting for may still log while the run writes its
// last lines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// uploadSample uploads samples/leads.csv to s with the job's options as
// change leaves them, a results file and a summary JSON of the test's own,
// and returns the run, its final rows and the summary JSON's path.
func uploadSample(t *testing.T, s *simtest.Server, change func(j *UploadJob)) (runResult, map[int]resultRow, string) {
	t.Helper()
	dir := t.TempDir()
	j := newUploadJob(filepath.Join(samples, "leads.csv"))
	j.In.Results = filepath.Join(dir, "results.csv")
	j.In.SummaryJSON = filepath.Join(dir, "summary.json")
	if change != nil {
		change(j)
	}
	res := runUpload(t, s, j)
	return res, finalByRow(t, j.In.Results, len(readExpected(t))), j.In.SummaryJSON
}

// uploadAuto uploads n clean synthetic rows to s with --concurrency auto
// (the default) and --rate 0, the job's options as change leaves them, and
// returns the run, its final rows and its summary JSON.
func uploadAuto(t *testing.T, s *simtest.Server, n int, change func(j *UploadJob)) (runResult, map[int]resultRow, summary.Summary) {
	t.Helper()
	dir := t.TempDir()
	input := filepath.Join(dir, "leads.csv")
	opts := synth.Defaults()
	opts.Invalid = 0
	if err := synth.WriteCSVFile(input, opts, n); err != nil {
		t.Fatal(err)
	}
	j := newUploadJob(input)
	j.In.Results = filepath.Join(dir, "results.csv")
	j.In.SummaryJSON = filepath.Join(dir, "summary.json")
	if change != nil {
		change(j)
	}
	res := runUpload(t, s, j)
	b, err := os.ReadFile(j.In.SummaryJSON)
	if err != nil {
		t.Fatalf("summary JSON: %v\nstderr:\n%s", err, res.stderr)
	}
	var sum summary.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatalf("summary JSON: %v", err)
	}
	return res, finalByRow(t, j.In.Results, n), sum
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

// journalRows reads a (possibly uncompacted) journal: the last line of each
// row, and every row that ever had a created line.
func journalRows(t *testing.T, path string) (last map[int]resultRow, created map[int]bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Drop a half-written last line, as --resume does.
	if i := strings.LastIndexByte(string(b), '\n'); i >= 0 {
		b = b[:i+1]
	}
	tmp := filepath.Join(t.TempDir(), "journal.csv")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	last, created = map[int]resultRow{}, map[int]bool{}
	for _, r := range readResults(t, tmp) {
		row, _ := strconv.Atoi(r["row"])
		last[row] = r
		if r["status"] == "created" || r["status"] == "submitted" || r["status"] == "submit_failed" {
			created[row] = true
		}
	}
	return last, created
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
