package main

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/leadsim"
)

// TestUploadStopLeavesRowsWaitingToRetry: at the first SIGTERM, a row
// that waits out its backoff or a Retry-After is not on the wire: it
// leaves at once, as a row parked by the outage gate does, and only the
// calls on the wire wait for the drain (issue 27 item 4). Every createLead
// is answered 503 with Retry-After: 300, so the four rows in flight wait 5
// minutes; the drain is 10 minutes. On main the run waited out the
// Retry-After (then sent the rows again), and the test ran into go test's
// deadline. A row whose createLead may have reached the service (a proxy's
// 503 after the commit) is not "not sent": it ends unverified, marked
// ambiguous, as one cut off on the wire does, and says it was waiting to
// retry.
func TestUploadStopLeavesRowsWaitingToRetry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		opts      leadsim.Options
		reject    string
		ambiguous bool
	}{
		{"503", leadsim.Options{Fail503: 1, Fail503RetryAfter: "300"}, leadsim.RejectFault503, false},
		{"proxy 503 after the commit", leadsim.Options{ProxyReset: 1, ProxyResetRetryAfter: "300"}, leadsim.RejectProxyReset, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a simulator and a folder of its own
			s := startTestSim(t, tc.opts)
			dir := t.TempDir()
			results := filepath.Join(dir, "results.csv")
			summaryPath := filepath.Join(dir, "summary.json")
			cmd, out := subprocess(t, uploadArgs(s, "", results, filepath.Join(samples, "leads.csv"), "--concurrency", "4", "--drain-timeout", "10m", "--summary-json", summaryPath)...)
			// Four rows in flight, each answered once: each waits out its
			// Retry-After now (or is about to: one whose answer comes
			// after the signal does not wait either).
			for deadline := time.Now().Add(60 * time.Second); s.Stats().Rejections[tc.reject] < 4; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("the four rows in flight were not answered\n%s", out)
				}
			}
			stopInterrupted(t, cmd, out)
			if strings.Contains(out.String(), "drain timeout") {
				t.Errorf("the run waited for its drain timeout:\n%s", out)
			}
			if n := s.Stats().Rejections[tc.reject]; n != 4 {
				t.Errorf("%d createLeads answered, want the 4 before the stop: a row waiting to retry sent it again", n)
			}
			sj := readSummaryJSON(t, summaryPath)
			if sj["accountingOK"] != true {
				t.Errorf("summary JSON accounting: %v", sj["accounting"])
			}
			if sj["failed"] != 0.0 {
				t.Errorf("summary failed = %v, want 0", sj["failed"])
			}
			rows := readResults(t, results)
			if !tc.ambiguous {
				if len(rows) != 0 || sj["notSent"].(float64) < 4 {
					t.Errorf("%d lines, %v not sent; want no line and the 4 rows waiting to retry not sent\n%s", len(rows), sj["notSent"], out)
				}
				return
			}
			if len(rows) != 4 {
				t.Fatalf("%d lines, want the 4 rows whose lead may exist\n%s", len(rows), out)
			}
			for _, r := range rows {
				if r["status"] != "unverified" || !strings.HasPrefix(r["note"], "[ambiguous:") || !strings.Contains(r["error"], "the lead may exist") || !strings.Contains(r["error"], "waiting to retry") {
					t.Errorf("row %s = %s note %q error %q: want unverified, marked ambiguous, waiting to retry", r["row"], r["status"], r["note"], r["error"])
				}
			}
		})
	}
}

// TestUploadStopLeavesRowsQueuedForAPlace: under --concurrency auto, the
// rows taken by the workers beyond the limit wait for a place in flight;
// at the first SIGTERM they are not on the wire, and leave at once, not
// sent, instead of going out one after another through the drain (issue
// 27 item 4: only the calls on the wire wait for the drain). createLead
// takes 2 s; the signal comes once calls are on the wire. On main every
// row queued was sent during the drain: 50 createLeads of 50 rows.
func TestUploadStopLeavesRowsQueuedForAPlace(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 2 * time.Second}})
	dir := t.TempDir()
	results := filepath.Join(dir, "results.csv")
	summaryPath := filepath.Join(dir, "summary.json")
	cmd, out := subprocess(t, uploadArgs(s, "", results, filepath.Join(samples, "leads.csv"), "--concurrency", "auto", "--drain-timeout", "10m", "--summary-json", summaryPath)...)
	for deadline := time.Now().Add(60 * time.Second); len(s.Stats().CreateCalls) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no createLead reached the simulator\n%s", out)
		}
	}
	stopInterrupted(t, cmd, out)
	sent := len(s.Stats().CreateCalls)
	sj := readSummaryJSON(t, summaryPath)
	rows := readResults(t, results)
	t.Logf("%d createLeads sent, %d lines, %v not sent", sent, len(rows), sj["notSent"])
	if sent >= 50 || sj["notSent"].(float64) == 0 {
		t.Errorf("%d createLeads of 50 rows, %v not sent: want the rows queued for a place not sent", sent, sj["notSent"])
	}
	if sj["accountingOK"] != true || sj["failed"] != 0.0 || sj["unverified"] != 0.0 {
		t.Errorf("summary accounting %v, failed %v, unverified %v; want OK, none failed or unverified", sj["accounting"], sj["failed"], sj["unverified"])
	}
	for _, r := range rows {
		if r["status"] != "processed" && r["status"] != "submitted" {
			t.Errorf("row %s = %s (%s): want the calls on the wire answered", r["row"], r["status"], r["error"])
		}
	}
}

// TestUploadStopLeavesRowsWaitingForTheRate: at the first SIGTERM, a row
// waiting for its turn at the rate is not on the wire: it leaves at once,
// not sent, as a row waiting out its own Retry-After does (issue 27 item
// 4). Every createLead is answered 503 with a Retry-After. Under --rate
// auto, the first ten say 300 s, and once most answers carry one the rate
// pauses every call for 5 minutes; the later ones say more than
// --max-retry-wait, so their rows leave (deferred) and free their workers
// for rows that then wait for the pause to end. Under a fixed --rate 0.2
// the eight workers' rows wait up to 35 s for their turns. The drain is
// 20 s: on main the rows waiting for the rate held the stop until it ran
// out ("drain timeout"), and the run cancelled them then.
func TestUploadStopLeavesRowsWaitingForTheRate(t *testing.T) {
	t.Parallel()
	const rows = 300
	for _, tc := range []struct {
		name     string
		args     []string
		answered int // createLeads answered before the signal
	}{
		{"rate auto paused by Retry-After", []string{"--rate", "auto", "--concurrency", "12"}, 11},
		{"fixed rate 0.2", []string{"--rate", "0.2", "--concurrency", "8"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a simulator and a folder of its own
			var answered atomic.Int64
			s := startTestSimHandler(t, leadsim.Options{Fail503: 1, Fail503RetryAfter: "300"}, func(ls *leadsim.Server) http.Handler {
				h := ls.Handler()
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					h.ServeHTTP(&longRetryAfter{ResponseWriter: w, n: &answered}, r)
				})
			})
			dir := t.TempDir()
			results := filepath.Join(dir, "results.csv")
			summaryPath := filepath.Join(dir, "summary.json")
			input := filepath.Join(dir, "leads.csv")
			opts := synth.Defaults()
			opts.Invalid = 0
			if err := synth.WriteCSVFile(input, opts, rows); err != nil {
				t.Fatal(err)
			}
			cmd, out := subprocess(t, uploadArgs(s, "", results, input, append(tc.args, "--drain-timeout", "20s", "--summary-json", summaryPath)...)...)
			// The rows answered wait out their Retry-After or have left;
			// the others wait for the rate: the count of createLeads
			// stands still.
			var seen int64
			for deadline, still := time.Now().Add(60*time.Second), 0; seen < int64(tc.answered) || still < 25; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("%d createLeads answered, want %d and then none for a while\n%s", seen, tc.answered, out)
				}
				if n := answered.Load(); n == seen {
					still++
				} else {
					seen, still = n, 0
				}
			}
			if seen >= rows {
				cmd.Process.Kill()
				t.Fatalf("every row's createLead was answered: none waits for the rate\n%s", out)
			}
			stopInterrupted(t, cmd, out)
			if strings.Contains(out.String(), "drain timeout") {
				t.Errorf("the run waited for its drain timeout:\n%s", out)
			}
			if n := answered.Load(); n != seen {
				t.Errorf("%d createLeads answered, want the %d before the stop: a row waiting for the rate was sent", n, seen)
			}
			sj := readSummaryJSON(t, summaryPath)
			if sj["accountingOK"] != true || sj["failed"] != 0.0 || sj["unverified"] != 0.0 {
				t.Errorf("summary accounting %v, failed %v, unverified %v; want OK, none failed or unverified", sj["accounting"], sj["failed"], sj["unverified"])
			}
			// No line: the rows that waited out a Retry-After of 300 s or
			// for the rate are not sent, and so are those told to come
			// back later than the run waits (deferred).
			if lines := readResults(t, results); len(lines) != 0 {
				t.Errorf("%d lines, want none\n%s", len(lines), out)
			}
			deferred := sj["deferred"].(map[string]any)["count"].(float64)
			if sj["notSent"] != sj["rowsRead"] || seen-int64(deferred) < int64(min(tc.answered, 10)) || sj["rowsRead"].(float64) <= float64(seen) {
				t.Errorf("%d createLeads answered, %v deferred, %v not sent of %v read; want every row read not sent, the rows answered Retry-After: 300 and one at least waiting for the rate among them", seen, deferred, sj["notSent"], sj["rowsRead"])
			}
			t.Logf("%d createLeads answered, %v deferred, %v of %v rows read not sent", seen, deferred, sj["notSent"], sj["rowsRead"])
		})
	}
}

// longRetryAfter counts in n the answers with a Retry-After through it,
// and from the eleventh on makes it longer than --max-retry-wait.
type longRetryAfter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w *longRetryAfter) WriteHeader(code int) {
	if w.Header().Get("Retry-After") != "" && w.n.Add(1) > 10 {
		w.Header().Set("Retry-After", "99999")
	}
	w.ResponseWriter.WriteHeader(code)
}

// stopInterrupted sends the upload cmd SIGTERM, waits for it and wants
// the exit status of an interrupted run; out is its output.
func stopInterrupted(t *testing.T, cmd *exec.Cmd, out *syncBuffer) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != app.ExitInterrupted {
		t.Fatalf("exit = %d, want %d\n%s", code, app.ExitInterrupted, out)
	}
}
