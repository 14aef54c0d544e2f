package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

// uploadSample uploads samples/leads.csv to s with extra flags and returns
// the CLI result, the final rows and the path of the summary JSON.
func uploadSample(t *testing.T, s *sim, extra ...string) (cliResult, map[int]resultRow, string) {
	t.Helper()
	dir := t.TempDir()
	results := filepath.Join(dir, "results.csv")
	summary := filepath.Join(dir, "summary.json")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--summary-json", summary, "--rate", "0", "--progress", "off")
	args = append(args, extra...)
	args = append(args, filepath.Join(samples, "leads.csv"))
	res := runCLI(t, secretEnv(), args...)
	exp := readExpected(t)
	return res, finalByRow(t, results, len(exp)), summary
}

func TestUploadCleanSample(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	res, rows, summary := uploadSample(t, s, "--concurrency", "8")
	if res.code != app.ExitOK {
		t.Fatalf("upload exit = %d, want %d\nstderr:\n%s", res.code, app.ExitOK, res.stderr)
	}
	exp := readExpected(t)
	wantSubmitted := 0
	for row, e := range exp {
		r := rows[row]
		if r["leadId"] != e.LeadID {
			t.Errorf("row %d leadId = %q, want %q", row, r["leadId"], e.LeadID)
		}
		if got := r["resultCode"]; got != strconv.Itoa(e.ResultCode) {
			t.Errorf("row %d resultCode = %s, want %d", row, got, e.ResultCode)
		}
		if r["bidValue"] != e.BidValue {
			t.Errorf("row %d bidValue = %q, want %q", row, r["bidValue"], e.BidValue)
		}
		want := "processed"
		if e.Submitted {
			want = "submitted"
			wantSubmitted++
		}
		if r["status"] != want {
			t.Errorf("row %d status = %q, want %q", row, r["status"], want)
		}
		if r["id"] == "" || r["attempts"] != "1" {
			t.Errorf("row %d id = %q, attempts = %q, want an id and 1 attempt", row, r["id"], r["attempts"])
		}
	}
	st := s.Stats()
	if st.Submissions != wantSubmitted {
		t.Errorf("simulator saw %d submissions, want %d (the 1013-1017 rows)", st.Submissions, wantSubmitted)
	}
	if got := st.Requests[leadsim.OpSubmitLead][200]; got != wantSubmitted {
		t.Errorf("submitLead calls = %d, want %d", got, wantSubmitted)
	}
	for id, n := range st.CreateCalls {
		if n != 1 {
			t.Errorf("leadId %q created %d times, want once", id, n)
		}
	}
	if st.TokensIssued != 1 {
		t.Errorf("tokens issued = %d, want 1 shared by all workers", st.TokensIssued)
	}
	sj := readSummaryJSON(t, summary)
	if bi := app.ReadBuildInfo(); sj["version"] != bi.Version || len(fmt.Sprint(sj["inputSha256"])) != 64 {
		t.Errorf("summary JSON version %v, inputSha256 %v: want %s and a SHA-256", sj["version"], sj["inputSha256"], bi.Version)
	}
	// The build, as the binary recorded it (runtime/debug.ReadBuildInfo).
	if build, _ := sj["build"].(map[string]any); build["goVersion"] != runtime.Version() || build["version"] != sj["version"] {
		t.Errorf("summary JSON build = %v, want goVersion %s and version %v", sj["build"], runtime.Version(), sj["version"])
	}
	for key, want := range map[string]float64{"rowsRead": 50, "submitted": float64(wantSubmitted), "processed": float64(50 - wantSubmitted), "failed": 0, "tokensFetched": 1} {
		if got, _ := sj[key].(float64); got != want {
			t.Errorf("summary JSON %s = %v, want %v", key, sj[key], want)
		}
	}
	settings, _ := sj["settings"].(map[string]any)
	if settings["endpoint"] != s.url+"/graphql" || settings["clientId"] != leadsim.DefaultClientID {
		t.Errorf("summary JSON settings lack the endpoint or client id: %v", settings)
	}
	// One key style (camelCase, like the summary's own keys) and typed
	// values: numbers as numbers, booleans as booleans.
	for k := range settings {
		if strings.ContainsAny(k, "_-") {
			t.Errorf("summary JSON settings key %q is not camelCase", k)
		}
	}
	for key, want := range map[string]any{"concurrency": 8.0, "maxAttempts": 5.0, "resume": false, "noSubmit": false, "drainTimeout": "30s", "dateOrder": "mdy"} {
		if settings[key] != want {
			t.Errorf("summary JSON settings %q = %#v, want %#v", key, settings[key], want)
		}
	}
	if _, ok := settings["rate"].(float64); !ok {
		t.Errorf("summary JSON settings rate = %#v, want a number", settings["rate"])
	}
	if raw, _ := os.ReadFile(summary); strings.Contains(string(raw), simSecret) || strings.Contains(string(raw), "eyJ") {
		t.Error("summary JSON contains the secret or a token")
	}
	if !strings.Contains(res.stderr, "accounting") {
		t.Errorf("summary on stderr lacks the accounting line:\n%s", res.stderr)
	}
}

func TestUploadWrongSecret(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	const wrong = "not-the-secret-xyzzy"
	dir := t.TempDir()
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", filepath.Join(dir, "r.csv"), "--log-level", "debug", filepath.Join(samples, "leads.csv"))
	res := runCLI(t, map[string]string{"BULKLOAD_CLIENT_SECRET": wrong}, args...)
	if res.code != app.ExitAuth {
		t.Fatalf("upload exit = %d, want %d\n%s", res.code, app.ExitAuth, res.stderr)
	}
	if !strings.Contains(res.stderr, "invalid_client") || !strings.Contains(res.stderr, "secret") {
		t.Errorf("stderr does not say which setting to check:\n%s", res.stderr)
	}
	if strings.Contains(res.stderr+res.stdout, wrong) {
		t.Error("the secret appears in the output")
	}
	st := s.Stats()
	if st.Requests[leadsim.OpToken][401] != 1 || len(st.Requests[leadsim.OpCreateLead]) != 0 {
		t.Errorf("token requests %v, createLead %v: want one refused token request and no lead sent", st.Requests[leadsim.OpToken], st.Requests[leadsim.OpCreateLead])
	}
}

func TestUploadNeverLeaksSensitiveData(t *testing.T) {
	// Not parallel: the simulator rotates its key every 200 ms (a new
	// RSA key each time); with other tests' CPU a fresh token can meet the
	// next rotation before its first call, and the run stops at exit 3.
	s := startTestSim(t, leadsim.Options{Fail503: 0.1, Fail500: 0.05, DropAfter: 0.05, RotateKeyEvery: 200 * time.Millisecond, Seed: 3})
	dir := t.TempDir()
	results := filepath.Join(dir, "r.csv")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--log-level", "debug", "--log-format", "json", "--rate", "0", filepath.Join(samples, "leads.csv"))
	res := runCLI(t, secretEnv(), args...)
	if res.code != app.ExitOK && res.code != app.ExitRowsFailed {
		t.Fatalf("upload exit = %d\n%s", res.code, res.stderr)
	}
	b, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	vals := sensitiveValues(t, filepath.Join(samples, "leads.csv"))
	assertNoSensitive(t, "stderr", res.stderr, vals)
	assertNoSensitive(t, "results file", string(b), vals)
	if strings.Contains(res.stderr, simSecret) {
		t.Error("stderr contains the client secret")
	}
	if strings.Contains(res.stderr, "eyJ") {
		t.Error("stderr contains what looks like a JWT")
	}
	fi, err := os.Stat(results)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("results file mode = %v, want 0600", fi.Mode().Perm())
	}
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

// holdGate holds the requests of one operation (createLead or submitLead)
// that reach the simulator after its first pass, unanswered until the gate
// opens or their client goes away, and counts them. A test that must stop
// a run mid-way closes the run's workers on it: whatever the host's load,
// the run cannot finish before the test acts, and what is on disk then is
// known.
type holdGate struct {
	op         string // "createLead" or "submitLead"
	pass       int64  // the first pass requests of op are served at once
	seen, held atomic.Int64
	open       chan struct{}
	once       sync.Once
}

func newHoldGate(op string, pass int64) *holdGate {
	return &holdGate{op: op, pass: pass, open: make(chan struct{})}
}

// release opens the gate: the held requests and every later one are
// served.
func (g *holdGate) release() { g.once.Do(func() { close(g.open) }) }

func (g *holdGate) wrap(s *leadsim.Server) http.Handler {
	next := s.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/graphql" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(g.op)) && g.seen.Add(1) > g.pass {
				select {
				case <-g.open:
				default:
					g.held.Add(1)
					select {
					case <-g.open:
					case <-r.Context().Done():
						return
					}
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// waitHeld waits until the gate holds n requests, and fails the test
// (killing cmd) if it does not within a minute. It bounds a wait, it
// asserts no speed.
func (g *holdGate) waitHeld(t *testing.T, n int64, cmd *exec.Cmd, out fmt.Stringer) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); g.held.Load() < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the simulator holds %d %s requests, want %d\n%s", g.held.Load(), g.op, n, out)
		}
	}
}

// startUploadOf starts bulkload upload of the clean sample to s as a
// process, --concurrency 4, and returns the results path, the command's
// arguments (the input last), the process and its output (safe to read
// while it runs).
func startUploadOf(t *testing.T, s *sim) (string, []string, *exec.Cmd, *syncBuffer) {
	t.Helper()
	results := filepath.Join(t.TempDir(), "results.csv")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--concurrency", "4", "--rate", "0", "--progress", "off", filepath.Join(samples, "leads.csv"))
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "BULKLOAD_TEST_AS_MAIN=1", "BULKLOAD_CLIENT_SECRET="+simSecret, "XDG_STATE_HOME="+t.TempDir())
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start bulkload: %v", err)
	}
	return results, args, cmd, out
}

// TestUploadKilledThenResumed: a run killed (SIGKILL) with leads created and
// not yet submitted leaves their created lines, and --resume submits each
// by its id without a second createLead. The simulator holds every
// submitLead until the kill, so the kill finds exactly --concurrency such
// leads and no createLead in flight. Before, the test killed the run when
// it saw 12 results lines, and on a loaded host the kill sometimes found no
// lead pending ("the test would not test resume's submit path").
func TestUploadKilledThenResumed(t *testing.T) {
	t.Parallel()
	gate := newHoldGate("submitLead", 0)
	s := startTestSimHandler(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 10 * time.Millisecond}}, gate.wrap)
	results, args, cmd, out := startUploadOf(t, s)
	input := args[len(args)-1]
	// Each of the 4 workers stops on the submitLead of the first qualified
	// row it created, its created line on disk.
	gate.waitHeld(t, 4, cmd, out)
	cmd.Process.Kill()
	_ = cmd.Wait()
	gate.release()
	before, createdBefore := journalRows(t, results)
	pending := 0
	for _, r := range before {
		if r["status"] == "created" {
			pending++
		}
	}
	if len(before) == 0 || len(before) >= 50 || pending != 4 {
		t.Fatalf("killed run left %d rows, %d of them created and not submitted; want some of the 50, and 4 created (one a worker)\n%s", len(before), pending, out)
	}

	res := runCLI(t, secretEnv(), append(args[:len(args)-1], "--resume", input)...)
	if res.code != app.ExitOK {
		t.Fatalf("resume exit = %d, want 0\n%s", res.code, res.stderr)
	}
	exp := readExpected(t)
	rows := finalByRow(t, results, len(exp))
	for row, e := range exp {
		if e.Submitted && rows[row]["status"] != "submitted" {
			t.Errorf("row %d (qualified) ended %q, want submitted", row, rows[row]["status"])
		}
	}
	for row := range createdBefore {
		if rows[row]["status"] != "submitted" {
			t.Errorf("row %d was created before the kill but ended %q", row, rows[row]["status"])
		}
	}
	// No createLead was in flight at the kill: every lead is created once,
	// those created before it submitted by their id.
	for id, n := range s.Stats().CreateCalls {
		if n != 1 {
			t.Errorf("leadId %q created %d times, want once", id, n)
		}
	}
	if n := s.Stats().Submissions; n != 30 {
		t.Errorf("the simulator counts %d submissions, want the sample's 30 qualified leads once each", n)
	}
}

// TestUploadSIGTERMThenResume: SIGTERM mid-run drains the calls in flight
// (none fails, no lead is left created), compacts the journal and exits
// 130; --resume sends the rest, no lead twice. The simulator holds the
// createLeads after the 8th until the run has logged its stop, so the
// signal always lands mid-run with calls in flight. Before, it was sent
// when 8 results lines were seen, and a run on a loaded host could finish
// the sample's 50 rows before it (0.9 s of createLeads were left).
func TestUploadSIGTERMThenResume(t *testing.T) {
	t.Parallel()
	gate := newHoldGate("createLead", 8)
	s := startTestSimHandler(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 10 * time.Millisecond}}, gate.wrap)
	results, args, cmd, out := startUploadOf(t, s)
	input := args[len(args)-1]
	gate.waitHeld(t, 1, cmd, out)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !strings.Contains(out.String(), "signal received: no new rows are taken"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the run did not log its stop after SIGTERM\n%s", out)
		}
	}
	gate.release() // the calls in flight are answered: the drain
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != app.ExitInterrupted {
		t.Fatalf("exit after SIGTERM = %d (%v), want %d\n%s", code, err, app.ExitInterrupted, out)
	}
	// The interrupted run compacted its journal: every line is final and in
	// row order, and no row is missing before the last one written.
	partial := readResults(t, results)
	if len(partial) <= 8 || len(partial) >= 50 {
		t.Fatalf("interrupted run wrote %d rows, want more than the 8 created before the signal, not all 50\n%s", len(partial), out)
	}
	for _, r := range partial {
		if r["status"] == "created" {
			t.Errorf("row %s left as created after a graceful stop", r["row"])
		}
		// Calls in flight at the signal are drained, not cancelled.
		if r["status"] == "failed" || r["status"] == "submit_failed" || r["status"] == "unverified" {
			t.Errorf("row %s ended %s at a graceful stop: %s", r["row"], r["status"], r["error"])
		}
	}

	res := runCLI(t, secretEnv(), append(args[:len(args)-1], "--resume", input)...)
	if res.code != app.ExitOK {
		t.Fatalf("resume exit = %d, want 0\n%s", res.code, res.stderr)
	}
	rows := finalByRow(t, results, 50)
	if c := countStatus(rows); c["failed"]+c["submit_failed"]+c["invalid"] > 0 {
		t.Errorf("statuses after resume = %v", c)
	}
	for id, n := range s.Stats().CreateCalls {
		if n != 1 {
			t.Errorf("leadId %q created %d times; a graceful stop must not resend", id, n)
		}
	}
}

func TestUploadRefusesToOverwriteEarlierUpload(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	results := filepath.Join(dir, "results.csv")
	input := filepath.Join(samples, "leads.csv")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--rate", "0", "--progress", "off")

	// A validate run's results may be overwritten by an upload.
	if res := runCLI(t, nil, "validate", "--results", results, input); res.code != app.ExitOK {
		t.Fatalf("validate exit = %d\n%s", res.code, res.stderr)
	}
	if res := runCLI(t, secretEnv(), append(args, input)...); res.code != app.ExitOK {
		t.Fatalf("first upload exit = %d\n%s", res.code, res.stderr)
	}
	created := s.Stats().LeadsCreated

	res := runCLI(t, secretEnv(), append(args, input)...)
	if res.code != app.ExitUsage || !strings.Contains(res.stderr, "--resume") {
		t.Errorf("second upload without --resume: exit %d, want %d and a hint\n%s", res.code, app.ExitUsage, res.stderr)
	}
	if got := s.Stats().LeadsCreated; got != created {
		t.Errorf("the refused run created %d leads", got-created)
	}

	// --resume over a finished file sends nothing.
	if res := runCLI(t, secretEnv(), append(args, "--resume", input)...); res.code != app.ExitOK {
		t.Fatalf("resume of a finished run exit = %d\n%s", res.code, res.stderr)
	}
	if got := s.Stats().LeadsCreated; got != created {
		t.Errorf("resuming a finished run created %d leads", got-created)
	}
	finalByRow(t, results, 50)
}

// TestUploadSimulateTwice runs the README's first command twice, as a new
// user would: both succeed and write the simulated results file.
func TestUploadSimulateTwice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	input := filepath.Join(dir, "leads.csv")
	b, err := os.ReadFile(filepath.Join(samples, "leads.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(input, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		res := runCLI(t, nil, "upload", "--simulate", "--rate", "0", "--progress", "off", input)
		if res.code != app.ExitOK {
			t.Fatalf("run %d: upload --simulate exit = %d\n%s", i+1, res.code, res.stderr)
		}
	}
	finalByRow(t, filepath.Join(dir, "leads.simulated.results.csv"), 50)
	if _, err := os.Stat(filepath.Join(dir, "leads.results.csv")); err == nil {
		t.Error("--simulate wrote the real results path")
	}
}

// inFlight wraps a handler and counts the requests it is serving.
type inFlight struct {
	h http.Handler
	n atomic.Int64
}

func (f *inFlight) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.n.Add(1)
	defer f.n.Add(-1)
	f.h.ServeHTTP(w, r)
}

// TestUploadLeavesNoGoroutines checks that nothing run started is still
// running once it returns: workers, the reader, the drain timer, the
// progress display, the client's keep-alive connections.
func TestUploadLeavesNoGoroutines(t *testing.T) {
	// Not parallel: it counts the process's goroutines.
	s := startTestSim(t, leadsim.Options{})
	baseline := runtime.NumGoroutine()
	results := filepath.Join(t.TempDir(), "r.csv")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--rate", "0", "--progress", "log", filepath.Join(samples, "leads.csv"))
	if res := runCLI(t, secretEnv(), args...); res.code != app.ExitOK {
		t.Fatalf("upload exit = %d\n%s", res.code, res.stderr)
	}
	// Server-side goroutines of the simulator end as the client's closed
	// connections are noticed: allow them a moment, bounded.
	var n int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n = runtime.NumGoroutine(); n <= baseline {
			return
		}
	}
	buf := make([]byte, 1<<20)
	t.Errorf("%d goroutines after run, %d before:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
}
