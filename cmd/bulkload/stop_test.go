package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/leadsim/simtest"
)

// uploadArgs are the flags of an upload of input to s's simulator (its
// Endpoint replaced by endpoint when set), writing results.
func uploadArgs(s *sim, endpoint, results, input string, extra ...string) []string {
	args := append([]string{"upload"}, s.args()...)
	if endpoint != "" {
		args[2] = endpoint // s.args() starts with --endpoint URL
	}
	args = append(args, "--results", results, "--rate", "0", "--progress", "off")
	args = append(args, extra...)
	return append(args, input)
}

// outageSwitch passes requests to h until down is set; then every GraphQL
// request is answered 404, as by a service taken away mid-run.
type outageSwitch struct {
	h        http.Handler
	downFrom int64 // the GraphQL request number (1-based) from which it is down
	n        atomic.Int64
	healed   atomic.Bool
}

func (o *outageSwitch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/graphql" && o.n.Add(1) >= o.downFrom && !o.healed.Load() {
		http.NotFound(w, r)
		return
	}
	o.h.ServeHTTP(w, r)
}

// TestUploadSignalsTogetherCountAsOne: `timeout -s INT` signals the process
// and its group, so two signals arrive together: they are one request to
// stop. The calls in flight drain and finish, the journal is compacted and
// the summary written.
func TestUploadSignalsTogetherCountAsOne(t *testing.T) {
	t.Parallel()
	// Calls take longer than the time between the two signals, so that the
	// second finds calls in flight.
	s := startTestSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: time.Second}})
	dir := t.TempDir()
	results := filepath.Join(dir, "results.csv")
	summary := filepath.Join(dir, "summary.json")
	cmd, out := subprocess(t, uploadArgs(s, "", results, filepath.Join(samples, "leads.csv"), "--concurrency", "4", "--summary-json", summary)...)
	waitForLines(t, results, 4, 60*time.Second)
	// Two signals that the kernel delivers apart, within the grace second
	// (two sent at the same instant may merge into one pending signal).
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != app.ExitInterrupted {
		t.Fatalf("exit = %d, want %d\n%s", code, app.ExitInterrupted, out)
	}
	text := out.String()
	if !strings.Contains(text, "INTERRUPTED") || !strings.Contains(text, "--resume") || !strings.Contains(text, "second signal cancels") {
		t.Errorf("want the summary, and the first signal's message saying how to stop at once and to --resume:\n%s", text)
	}
	if _, err := os.Stat(summary); err != nil {
		t.Errorf("no summary JSON: %v", err)
	}
	rows := readResults(t, results)
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r["row"]] {
			t.Errorf("row %s has two lines: the journal was not compacted", r["row"])
		}
		seen[r["row"]] = true
		if r["status"] == "failed" || r["status"] == "created" {
			t.Errorf("row %s ended %s: the calls in flight were cut off, want them drained", r["row"], r["status"])
		}
	}
}

// TestUploadSecondSignalStopsCallsInFlight: a second signal after the grace
// second cancels the calls in flight (here they take a minute) at once, but
// the journal is still compacted and the summary written; exit 130. The
// rows cut off on the wire are unverified (their answers never came, their
// leads may exist), marked ambiguous for --resume's own-lead check.
func TestUploadSecondSignalStopsCallsInFlight(t *testing.T) {
	t.Parallel()
	var counting *inFlight
	ss := simtest.StartHandler(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: time.Minute}}, func(srv *leadsim.Server) http.Handler {
		counting = &inFlight{h: srv.Handler()}
		return counting
	})
	t.Cleanup(ss.HTTP.CloseClientConnections) // before ss closes: the calls in flight take a minute
	s := simOf(ss)
	dir := t.TempDir()
	results := filepath.Join(dir, "results.csv")
	summary := filepath.Join(dir, "summary.json")
	cmd, out := subprocess(t, uploadArgs(s, "", results, filepath.Join(samples, "leads.csv"), "--concurrency", "2", "--drain-timeout", "10m", "--summary-json", summary)...)
	for deadline := time.Now().Add(60 * time.Second); counting.n.Load() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no call reached the simulator\n%s", out)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	// The grace is counted from when the run took the first signal, which a
	// loaded host may deliver late: wait for its stop line, then past the
	// grace, so the second signal is never taken for the first's echo.
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(out.String(), "signal received: no new rows are taken"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the run did not log its stop after SIGTERM\n%s", out)
		}
	}
	time.Sleep(signalGrace + 300*time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != app.ExitInterrupted {
		t.Fatalf("exit = %d, want %d\n%s", code, app.ExitInterrupted, out)
	}
	if !strings.Contains(out.String(), "rows read") {
		t.Errorf("no summary after the second signal:\n%s", out)
	}
	if sj := readSummaryJSON(t, summary); sj["accountingOK"] != true {
		t.Errorf("summary JSON accounting: %v", sj["accounting"])
	}
	rows := readResults(t, results)
	if len(rows) != 2 {
		t.Fatalf("%d rows recorded, want the 2 in flight\n%s", len(rows), out)
	}
	for _, r := range rows {
		if r["status"] != "unverified" || !strings.HasPrefix(r["note"], "[ambiguous:") || !strings.Contains(r["error"], "the lead may exist") {
			t.Errorf("row %s = %s note %q error %q: want unverified and marked ambiguous (cut off in flight)", r["row"], r["status"], r["note"], r["error"])
		}
	}
}

// TestTokenEndpointUnreachable: an identity provider that is down (no
// listener, 503 on every try) or never answers is an outage, not refused
// Credentials: upload and auth check exit 4 naming the token endpoint,
// before any row is read, as a dead --endpoint does. (One that answers that
// the credentials or the tenant are wrong, 400/401/404, stays exit 3:
// TestUploadWrongSecret, TestAlternativeSettingsPrecedence.)
func TestTokenEndpointUnreachable(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	}))
	t.Cleanup(unavailable.Close)
	// The token fetch goes on in the background after the run gave up (the
	// process exits then; this test runs it in-process): release lets the
	// hanging handler go before Close waits for it.
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) }) // runs before hang.Close
	for _, tc := range []struct{ name, tokenURL, cause string }{
		{"dead port", "http://127.0.0.1:1/token", "connection refused"},
		{"503", unavailable.URL + "/token", "503"},
		{"no answer", hang.URL + "/token", "deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "results.csv")
			args := []string{"upload", "--endpoint", s.url + "/graphql", "--token-url", tc.tokenURL,
				"--client-id", leadsim.DefaultClientID, "--scope", "api://" + leadsim.DefaultAppID + "/.default",
				"--timeout", "1s", "--results", results, "--progress", "off", filepath.Join(samples, "leads.csv")}
			res := runCLI(t, secretEnv(), args...)
			if res.code != app.ExitUnreachable {
				t.Fatalf("upload exit = %d, want %d\n%s", res.code, app.ExitUnreachable, res.stderr)
			}
			if !strings.Contains(res.stderr, "token endpoint unreachable: "+tc.tokenURL) {
				t.Errorf("stderr does not name the token endpoint %s as unreachable:\n%s", tc.tokenURL, res.stderr)
			}
			if msg := res.stderr[strings.LastIndex(res.stderr, "bulkload:"):]; !strings.Contains(msg, tc.cause) {
				t.Errorf("the error does not say what the token requests met (%q): %s", tc.cause, msg)
			}
			if strings.Contains(res.stderr, "rows read") {
				t.Errorf("rows were read without a token:\n%s", res.stderr)
			}
			res = runCLI(t, secretEnv(), "auth", "check", "--token-url", tc.tokenURL, "--client-id", leadsim.DefaultClientID,
				"--scope", "api://"+leadsim.DefaultAppID+"/.default", "--timeout", "1s")
			if res.code != app.ExitUnreachable {
				t.Errorf("auth check exit = %d, want %d\n%s", res.code, app.ExitUnreachable, res.stderr)
			}
		})
	}
	if n := len(s.Stats().CreateCalls); n != 0 {
		t.Errorf("%d leads reached the simulator, want none", n)
	}
}

// TestSummaryJSONSaysHowTheRunEnded: --summary-json carries the exit status,
// and a run that stops before it sends anything, once its outputs are
// proven, still writes it, saying why and with no counts, over the file an
// earlier run left at the same fixed path (a cron job reading it must not
// take last night's figures for tonight's).
func TestSummaryJSONSaysHowTheRunEnded(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	messy := filepath.Join(samples, "messy.csv") // 11 of 30 rows invalid: over --max-invalid 20%
	leads := filepath.Join(samples, "leads.csv")
	for _, tc := range []struct {
		name    string
		args    func(results string) []string
		code    int
		stopped string // "" for a run that went through its input
	}{
		{"sent", func(r string) []string { return uploadArgs(s, "", r, leads) }, app.ExitOK, ""},
		{"too many invalid rows", func(r string) []string { return uploadArgs(s, "", r, messy) }, app.ExitRowsFailed, "--max-invalid 20%"},
		{"dead endpoint", func(r string) []string { return uploadArgs(s, "http://127.0.0.1:1/graphql", r, leads) }, app.ExitUnreachable, "--endpoint http://127.0.0.1:1/graphql"},
		{"dead token endpoint", func(r string) []string {
			return []string{"upload", "--endpoint", s.url + "/graphql", "--token-url", "http://127.0.0.1:1/token",
				"--client-id", leadsim.DefaultClientID, "--scope", "api://" + leadsim.DefaultAppID + "/.default",
				"--timeout", "1s", "--results", r, "--progress", "off", leads}
		}, app.ExitUnreachable, "token endpoint unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "nightly.summary.json")
			stale := `{"mode": "upload", "exitCode": 0, "submitted": 30, "stale": true}`
			if err := os.WriteFile(path, []byte(stale), 0o600); err != nil {
				t.Fatal(err)
			}
			args := tc.args(filepath.Join(dir, "r.csv"))
			input := args[len(args)-1]
			args = append(args[:len(args)-1:len(args)-1], "--summary-json", path, input)
			res := runCLI(t, secretEnv(), args...)
			if res.code != tc.code {
				t.Fatalf("exit = %d, want %d\n%s", res.code, tc.code, res.stderr)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("summary JSON: %v\n%s", err, b)
			}
			if got["stale"] != nil {
				t.Fatalf("the earlier run's summary was left in place:\n%s", b)
			}
			if got["exitCode"] != float64(tc.code) || got["mode"] != "upload" {
				t.Errorf("exitCode %v, mode %v; want %d, upload", got["exitCode"], got["mode"], tc.code)
			}
			stopped, _ := got["stopped"].(string)
			switch {
			case tc.stopped == "" && stopped != "":
				t.Errorf("stopped = %q for a run that went through its input", stopped)
			case tc.stopped != "" && !strings.Contains(stopped, tc.stopped):
				t.Errorf("stopped = %q, want it to say %q", stopped, tc.stopped)
			case tc.stopped != "" && (got["submitted"] != float64(0) || got["rowsRead"] != float64(0)):
				t.Errorf("a stopped run's summary counts rows: submitted %v, rowsRead %v", got["submitted"], got["rowsRead"])
			}
			assertNoSensitive(t, "summary JSON", string(b), sensitiveValues(t, leads))
			assertNoSensitive(t, "summary JSON", string(b), sensitiveValuesLoose(t, messy))
		})
	}

	// validate's carries its exit status too.
	dir := t.TempDir()
	path := filepath.Join(dir, "v.json")
	res := runCLI(t, nil, "validate", "--results", filepath.Join(dir, "v.csv"), "--summary-json", path, messy)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Mode     string `json:"mode"`
		ExitCode *int   `json:"exitCode"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if res.code != app.ExitRowsFailed || got.Mode != "validate" || got.ExitCode == nil || *got.ExitCode != res.code {
		t.Errorf("validate exit %d, summary JSON mode %q exitCode %v; want %d in both", res.code, got.Mode, got.ExitCode, app.ExitRowsFailed)
	}

	// A validate that cannot read its input (here: empty, no header line)
	// once its outputs are proven replaces a stale summary too.
	empty := filepath.Join(dir, "empty.csv")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"mode": "validate", "exitCode": 0, "stale": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	res = runCLI(t, nil, "validate", "--results", filepath.Join(dir, "e.csv"), "--summary-json", path, empty)
	b, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stub map[string]any
	if err := json.Unmarshal(b, &stub); err != nil {
		t.Fatal(err)
	}
	if res.code != app.ExitUsage || stub["stale"] != nil || stub["exitCode"] != float64(app.ExitUsage) || !strings.Contains(fmt.Sprint(stub["stopped"]), "empty") {
		t.Errorf("validate of an empty file: exit %d, summary JSON %s; want exit %d and a summary that says the file is empty", res.code, b, app.ExitUsage)
	}
}
