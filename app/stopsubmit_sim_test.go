package app

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/leadsim/simtest"
)

// TestUploadStopLeavesSubmitLeadsWaitingForTheRate: at the first
// SIGINT/SIGTERM, a row whose lead was created and whose submitLead waits
// for its turn at the rate is not on the wire: it leaves at once, as a
// createLead waiting for the rate does (issue 27 item 4: only the calls
// on the wire wait for the drain). Its created line stands, with the
// lead's id, the row counts as not sent, and --resume submits it without
// creating it again. On main the submitLead waited its turn through the
// drain: under a fixed --rate 1 it went out after the signal (the row
// ended submitted), and under a --rate auto paused for 300 s by the
// service's Retry-After the run waited for its drain timeout.
func TestUploadStopLeavesSubmitLeadsWaitingForTheRate(t *testing.T) {
	t.Parallel()
	t.Run("fixed rate 1", func(t *testing.T) {
		t.Parallel() // a simulator and a folder of its own
		// Two workers at 1 call/s: a row's createLead takes a turn, the
		// other worker's row the next, and the first row's submitLead the
		// one after, 2 s after its createLead's. The stop comes once a
		// created line is written.
		s := startSim(t, leadsim.Options{})
		dir := t.TempDir()
		input := stopSubmitInput(t, dir, 6)
		results := filepath.Join(dir, "results.csv")
		j := uploadJob(input, results, func(j *UploadJob) {
			j.Up.Rate = Rate{PerSecond: 1}
			j.Up.Concurrency = Concurrency{N: 2}
			j.Up.DrainTimeout = 20 * time.Second
			j.In.SummaryJSON = filepath.Join(dir, "summary.json")
		})
		res, stopped := runStoppedWhen(t, s, j, func() bool { return journalHas(t, results, "created") }, 60*time.Second)
		if !stopped {
			t.Fatalf("no lead was created before the run ended (exit %d)\n%s", res.code, res.stderr)
		}
		checkStoppedSubmits(t, s, res, 0)
		last, created := journalRows(t, results)
		for row := range created {
			if r := last[row]; r["status"] != "created" || r["id"] == "" {
				t.Errorf("row %d = %s id %q (%s): want created with its lead's id, its submitLead not sent", row, r["status"], r["id"], r["error"])
			}
		}
		if res.sum.NotSent < len(created) {
			t.Errorf("%d rows not sent, want the %d created ones among them", res.sum.NotSent, len(created))
		}
		ids := map[int]string{}
		for row := range created {
			ids[row] = last[row]["id"]
		}

		// --resume submits them, and creates no lead twice.
		j.Up.Resume, j.Up.Rate, j.Up.DrainTimeout = true, Rate{}, 30*time.Second
		res = runUpload(t, s, j)
		if res.code != ExitOK {
			t.Fatalf("--resume: exit %d, want 0\n%s", res.code, res.stderr)
		}
		rows := finalByRow(t, results, 6)
		for row, id := range ids {
			if r := rows[row]; r["status"] != "submitted" || r["id"] != id {
				t.Errorf("--resume: row %d = %s id %q, want submitted, lead %s", row, r["status"], r["id"], id)
			}
		}
		for leadID, n := range s.Stats().CreateCalls {
			if n != 1 {
				t.Errorf("lead %s created %d times, want once", leadID, n)
			}
		}
	})
	t.Run("rate auto paused by Retry-After", func(t *testing.T) {
		t.Parallel() // a simulator and a folder of its own
		// Every submitLead is answered 503 with a Retry-After (FaultOp).
		// A first run leaves every row created: each Retry-After is made
		// longer than --max-retry-wait (deferred). Its resume has only
		// submitLeads to send, twelve at once: the first ten answers say
		// 300 s, and once they are most of at least ten answers (the
		// preflight's among them) --rate auto pauses every call for 5
		// minutes. The rows answered wait out their own
		// Retry-After; a later answer is deferred again, and frees its
		// worker for a row whose submitLead then waits for the pause to
		// end, as do the twelve workers' submitLeads not sent when the
		// pause began. A submitLead takes 200 ms: the rows freed before
		// the client has seen the tenth answer send few submitLeads, and
		// their answers (no Retry-After the client waits) do not take
		// the majority away.
		const n = 40
		ra := &keepRetryAfter{}
		s := simtest.StartHandler(t, leadsim.Options{Fail503: 1, FaultOp: leadsim.OpSubmitLead, Fail503RetryAfter: "300", SubmitLatency: leadsim.Latency{Fixed: 200 * time.Millisecond}}, func(ls *leadsim.Server) http.Handler {
			h := ls.Handler()
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(&retryAfterWriter{ResponseWriter: w, k: ra}, r)
			})
		})
		dir := t.TempDir()
		input := stopSubmitInput(t, dir, n)
		results := filepath.Join(dir, "results.csv")
		j := uploadJob(input, results, func(j *UploadJob) {
			j.Up.Concurrency = Concurrency{N: 4}
			j.Up.MaxConsecutiveFailures = 0 // every submitLead is deferred: no outage
			j.In.SummaryJSON = filepath.Join(dir, "summary.json")
		})
		res := runUpload(t, s, j)
		_, created := journalRows(t, results)
		if res.code != ExitRowsFailed || len(created) == 0 {
			t.Fatalf("first run: exit %d, %d rows created; want %d, rows created and left (deferred)\n%s", res.code, len(created), ExitRowsFailed, res.stderr)
		}
		ids := map[int]string{}
		last, _ := journalRows(t, results)
		for row := range created {
			ids[row] = last[row]["id"]
		}
		creates, submits := sumOf(s.Stats().Requests[leadsim.OpCreateLead]), sumOf(s.Stats().Requests[leadsim.OpSubmitLead])

		ra.keep.Store(10)
		ra.n.Store(0)
		j.Up.Resume, j.Up.Rate, j.Up.Concurrency, j.Up.DrainTimeout = true, Rate{Auto: true}, Concurrency{N: 12}, 20*time.Second
		// The rows answered wait out their Retry-After or have left; the
		// others wait for the pause: the count of answers stands still.
		var seen int64
		still := 0
		res, stopped := runStoppedWhen(t, s, j, func() bool {
			if a := ra.n.Load(); a != seen {
				seen, still = a, 0
				return false
			}
			still++
			return seen > 0 && still >= 50
		}, 60*time.Second)
		if !stopped {
			t.Fatalf("the resume ended before its submitLeads waited (exit %d)\n%s", res.code, res.stderr)
		}
		if seen >= int64(len(created)) {
			t.Fatalf("every created row's submitLead was answered: none waits for the rate\n%s", res.stderr)
		}
		checkStoppedSubmits(t, s, res, submits+int(seen))
		if c := sumOf(s.Stats().Requests[leadsim.OpCreateLead]); c != creates {
			t.Errorf("%d createLeads after the resume, want the first run's %d: a created row is only submitted", c, creates)
		}
		last, _ = journalRows(t, results)
		for row, id := range ids {
			if r := last[row]; r["status"] != "created" || r["id"] != id {
				t.Errorf("row %d = %s id %q, want created, lead %s", row, r["status"], r["id"], id)
			}
		}
		if res.sum.NotSent != res.sum.RowsRead-res.sum.Resumed {
			t.Errorf("%d rows not sent of %d read (%d finished before); want every row sent again not sent", res.sum.NotSent, res.sum.RowsRead, res.sum.Resumed)
		}
		t.Logf("%d submitLeads answered with a Retry-After, %d rows not sent", seen, res.sum.NotSent)
	})
}

// checkStoppedSubmits checks a run stopped while submitLeads waited for
// the rate: exit 130, no drain timeout waited, no submitLead sent after
// the answered ones (the simulator's count of submitLeads: answered),
// none failed or unverified, and the accounting holds.
func checkStoppedSubmits(t *testing.T, s *simtest.Server, res runResult, answered int) {
	t.Helper()
	if res.code != ExitInterrupted {
		t.Fatalf("exit = %d, want %d\n%s", res.code, ExitInterrupted, res.stderr)
	}
	if strings.Contains(res.stderr, "drain timeout") {
		t.Errorf("the run waited for its drain timeout: a submitLead waiting for the rate held the stop\n%s", res.stderr)
	}
	if got := sumOf(s.Stats().Requests[leadsim.OpSubmitLead]); got != answered {
		t.Errorf("%d submitLeads reached the service, want %d: one waiting for the rate went out after the stop", got, answered)
	}
	if res.sum == nil {
		t.Fatalf("no summary\n%s", res.stderr)
	}
	if msg, ok := res.sum.Accounting(); !ok || res.sum.Failed != 0 || res.sum.Unverified != 0 {
		t.Errorf("accounting %q, %d failed, %d unverified; want OK and none", msg, res.sum.Failed, res.sum.Unverified)
	}
}

// runStoppedWhen runs j against s as runUpload does, and cancels the
// run's context (the first signal) once stop says so, polled every 20 ms;
// stopped is false when the run ended first, or limit passed (then the
// run is cancelled all the same).
func runStoppedWhen(t *testing.T, s *simtest.Server, j *UploadJob, stop func() bool, limit time.Duration) (res runResult, stopped bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan runResult, 1)
	go func() { done <- runUpload(t, s, j, runOpts{ctx: ctx}) }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(limit)
	for {
		select {
		case res := <-done:
			return res, false
		case <-deadline:
			cancel()
			return <-done, false
		case <-tick.C:
			if stop() {
				cancel()
				return <-done, true
			}
		}
	}
}

// journalHas reports whether the results journal at path holds a line of
// status status (false while it does not exist).
func journalHas(t *testing.T, path, status string) bool {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), ","+status+",") {
		return false
	}
	last, _ := journalRows(t, path)
	for _, r := range last {
		if r["status"] == status {
			return true
		}
	}
	return false
}

// stopSubmitInput writes n valid rows of bench/gen's kind into dir.
func stopSubmitInput(t *testing.T, dir string, n int) string {
	t.Helper()
	input := filepath.Join(dir, "leads.csv")
	opts := synth.Defaults()
	opts.Invalid = 0
	if err := synth.WriteCSVFile(input, opts, n); err != nil {
		t.Fatal(err)
	}
	return input
}

// keepRetryAfter counts the answers with a Retry-After (n) and says which
// keep theirs: the first keep; the others get one longer than any
// --max-retry-wait (deferred).
type keepRetryAfter struct {
	keep, n atomic.Int64
}

// retryAfterWriter applies k to one answer.
type retryAfterWriter struct {
	http.ResponseWriter
	k *keepRetryAfter
}

func (w *retryAfterWriter) WriteHeader(code int) {
	if w.Header().Get("Retry-After") != "" && w.k.n.Add(1) > w.k.keep.Load() {
		w.Header().Set("Retry-After", "99999")
	}
	w.ResponseWriter.WriteHeader(code)
}
