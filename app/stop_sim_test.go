package app

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkload/bulkload/leadsim"
)

// How an upload stops before its first row or mid-run: the preflight of a
// dead, wrong or flapping endpoint, the circuit breaker of a service taken
// away, and a 503 storm that is throttling, not an outage. Moved from
// cmd/bulkload's stop_test.go (argv turned into options; --endpoint as
// runOpts.endpoint).

func TestUploadPreflightStopsAtOnce(t *testing.T) {
	t.Parallel()
	s := startSim(t, leadsim.Options{})
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	for _, tc := range []struct{ name, endpoint string }{
		{"dead port", "http://127.0.0.1:1/graphql"},
		{"404", notFound.URL + "/graphql"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "results.csv")
			res := runUpload(t, s, uploadJob(filepath.Join(samples, "leads.csv"), results, nil), runOpts{endpoint: tc.endpoint})
			if res.code != ExitUnreachable {
				t.Fatalf("exit = %d, want %d\n%s", res.code, ExitUnreachable, res.stderr)
			}
			if !strings.Contains(res.stderr, "--endpoint "+tc.endpoint) || !strings.Contains(res.stderr, "not a GraphQL endpoint") {
				t.Errorf("stderr does not name --endpoint %s as unreachable:\n%s", tc.endpoint, res.stderr)
			}
			if strings.Contains(res.stderr, "rows read") {
				t.Errorf("rows were read before the endpoint was proven:\n%s", res.stderr)
			}
			// A dead or wrong endpoint is not asked again (--preflight-wait
			// is left at its minute): only a gateway's 502, 503 or 504 is.
			if strings.Contains(res.stderr, "asking again") {
				t.Errorf("the preflight asked a dead endpoint again:\n%s", res.stderr)
			}
		})
	}
	if n := len(s.Stats().CreateCalls); n != 0 {
		t.Errorf("%d leads reached the simulator, want none", n)
	}
}

// TestUploadPreflightThroughAGateway: a service flapping behind its
// gateway, whose first answers at the preflight are 502 and 504, is asked
// again and the upload goes on (it exited 4 at the first 502); one whose
// gateway keeps answering 502 stops with exit 4 after --preflight-wait,
// saying so, with no row sent.
func TestUploadPreflightThroughAGateway(t *testing.T) {
	// Not parallel: --preflight-wait of 100 and 200 ms.
	t.Run("flapping", func(t *testing.T) {
		s := startSim(t, leadsim.Options{FirstAnswers: []int{502, 504}})
		res, rows, _ := uploadSample(t, s, func(j *UploadJob) { j.Up.PreflightWait = 200 * time.Millisecond })
		if res.code != ExitOK {
			t.Fatalf("exit = %d, want 0\n%s", res.code, res.stderr)
		}
		checkSampleDone(t, s, rows)
		if n := s.Stats().Rejections[leadsim.RejectFirstAnswer]; n != 2 {
			t.Errorf("%d gateway answers served, want 2", n)
		}
		if !strings.Contains(res.stderr, "preflight: the endpoint answered 502") || !strings.Contains(res.stderr, "preflight: the endpoint answered 504") {
			t.Errorf("stderr does not say the preflight met the gateway's 502 and 504:\n%s", res.stderr)
		}
	})
	t.Run("away", func(t *testing.T) {
		s := startSim(t, leadsim.Options{Outage: leadsim.Window{Dur: time.Hour}})
		results := filepath.Join(t.TempDir(), "results.csv")
		res := runUpload(t, s, uploadJob(filepath.Join(samples, "leads.csv"), results, func(j *UploadJob) { j.Up.PreflightWait = 100 * time.Millisecond }))
		if res.code != ExitUnreachable {
			t.Fatalf("exit = %d, want %d\n%s", res.code, ExitUnreachable, res.stderr)
		}
		if !strings.Contains(res.stderr, "answered as a gateway does when the service behind it is away, for") {
			t.Errorf("stderr does not say the gateway answered for the whole wait:\n%s", res.stderr)
		}
		st := s.Stats()
		if n := st.Rejections[leadsim.RejectOutage]; n < 2 {
			t.Errorf("%d preflight queries met the gateway, want it asked again", n)
		}
		if n := len(st.CreateCalls); n != 0 {
			t.Errorf("%d leads reached the simulator, want none", n)
		}
	})
}

// TestUploadPreflightThroughAGateway503: a gateway's 503 page (no GraphQL
// answer) at the preflight is a gateway's answer as a 502 is: asked again,
// and the upload goes on once the service answers; one that keeps
// answering 503 stops with exit 4 after --preflight-wait, with no row sent
// (it went on into the rows and waited out an outage).
func TestUploadPreflightThroughAGateway503(t *testing.T) {
	t.Parallel()
	t.Run("flapping", func(t *testing.T) {
		s := startSim(t, leadsim.Options{FirstAnswers: []int{503, 503, 503, 503, 503, 503, 503}})
		res, rows, _ := uploadSample(t, s, func(j *UploadJob) { j.Up.PreflightWait = 30 * time.Second })
		if res.code != ExitOK {
			t.Fatalf("exit = %d, want 0\n%s", res.code, res.stderr)
		}
		checkSampleDone(t, s, rows)
		if !strings.Contains(res.stderr, "preflight: the endpoint answered 503") {
			t.Errorf("stderr does not say the preflight met the gateway's 503:\n%s", res.stderr)
		}
	})
	t.Run("away", func(t *testing.T) {
		answers := make([]int, 500)
		for i := range answers {
			answers[i] = 503
		}
		s := startSim(t, leadsim.Options{FirstAnswers: answers})
		results := filepath.Join(t.TempDir(), "results.csv")
		res := runUpload(t, s, uploadJob(filepath.Join(samples, "leads.csv"), results, func(j *UploadJob) { j.Up.PreflightWait = 100 * time.Millisecond }))
		if res.code != ExitUnreachable {
			t.Fatalf("exit = %d, want %d\n%s", res.code, ExitUnreachable, res.stderr)
		}
		if !strings.Contains(res.stderr, "answered as a gateway does when the service behind it is away, for") || !strings.Contains(res.stderr, "503") {
			t.Errorf("stderr does not say the gateway answered 503 for the whole wait:\n%s", res.stderr)
		}
		if n := len(s.Stats().CreateCalls); n != 0 {
			t.Errorf("%d leads reached the simulator, want none", n)
		}
	})
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

// TestUploadCircuitBreaker: the endpoint goes away mid-run (404 from the
// 12th request). After --max-consecutive-failures attempts in a row fail,
// no new row is taken and the rows in flight wait, charged nothing; when
// the outage outlasts --outage-wait the run stops: the summary is written,
// the run exits 4, no row is failed for the service's absence (the rows not
// sent have no line), and --resume sends them once the service is back.
func TestUploadCircuitBreaker(t *testing.T) {
	t.Parallel()
	var sw *outageSwitch
	s := startSimHandler(t, leadsim.Options{}, func(srv *leadsim.Server) http.Handler {
		sw = &outageSwitch{h: srv.Handler(), downFrom: 12}
		return sw
	})
	dir := t.TempDir()
	results := filepath.Join(dir, "results.csv")
	summary := filepath.Join(dir, "summary.json")
	input := filepath.Join(samples, "leads.csv")
	job := func(resume bool) *UploadJob {
		return uploadJob(input, results, func(j *UploadJob) {
			j.Up.Concurrency = Concurrency{N: 1}
			j.Up.MaxConsecutiveFailures = 5
			j.Up.OutageWait = time.Second
			j.In.SummaryJSON = summary
			j.Up.Resume = resume
		})
	}

	res := runUpload(t, s, job(false))
	if res.code != ExitUnreachable {
		t.Fatalf("exit = %d, want %d\n%s", res.code, ExitUnreachable, res.stderr)
	}
	if !strings.Contains(res.stderr, "longer than the outage wait of 1s") || !strings.Contains(res.stderr, "--resume") {
		t.Errorf("stderr does not say why the run stopped and what to do:\n%s", res.stderr)
	}
	rows := readResults(t, results)
	sj := readSummaryJSON(t, summary)
	failed := 0
	for _, r := range rows {
		if r["status"] == "failed" || r["status"] == "submit_failed" {
			failed++
		}
	}
	if len(rows) >= 40 || failed != 0 {
		t.Errorf("%d rows have a line, %d failed: want the run stopped in the outage, no row failed, the rest without a line", len(rows), failed)
	}
	if o, _ := sj["outages"].([]any); len(o) != 1 || o[0].(map[string]any)["stoppedRun"] != true || o[0].(map[string]any)["cause"] != "404 Not Found" {
		t.Errorf("summary JSON outages = %v, want the one that stopped the run, caused by 404", sj["outages"])
	}
	// The rows left are either read and counted as not sent, or never read
	// (the producer had not taken them when the breaker tripped: which, is
	// a matter of timing); either way none has a line and the accounting of
	// the rows read holds.
	if left := sj["notSent"].(float64) + 50 - sj["rowsRead"].(float64); left == 0 || sj["accountingOK"] != true {
		t.Errorf("summary JSON notSent %v rowsRead %v accountingOK %v: want rows left for --resume and the accounting to hold", sj["notSent"], sj["rowsRead"], sj["accountingOK"])
	}
	// The rows never read are shown, not lost: the check before the first
	// call counted the file's 50.
	if sj["inputRows"] != 50.0 || sj["rowsRead"].(float64)+sj["notReached"].(float64) != 50 {
		t.Errorf("summary JSON inputRows %v rowsRead %v notReached %v: want 50 = read + not reached", sj["inputRows"], sj["rowsRead"], sj["notReached"])
	}
	if sj["notReached"].(float64) > 0 && !strings.Contains(res.stderr, "not reached, left for --resume") {
		t.Errorf("the accounting does not show the rows not reached:\n%s", res.stderr)
	}

	sw.healed.Store(true)
	if res := runUpload(t, s, job(true)); res.code != ExitOK {
		t.Fatalf("--resume after the outage: exit = %d, want 0\n%s", res.code, res.stderr)
	}
	finalByRow(t, results, 50)
}

// TestUploadThrottlingNeverTrips: a 503 storm is throttling, not an outage:
// rows fail one by one (one attempt each here) and the run finishes (exit
// 1, not 4).
func TestUploadThrottlingNeverTrips(t *testing.T) {
	t.Parallel()
	s := startSim(t, leadsim.Options{Fail503: 1})
	dir := t.TempDir()
	results := filepath.Join(dir, "results.csv")
	res := runUpload(t, s, uploadJob(filepath.Join(samples, "leads.csv"), results, func(j *UploadJob) {
		j.Up.MaxAttempts = 1
		j.Up.MaxConsecutiveFailures = 3
	}))
	if res.code != ExitRowsFailed {
		t.Fatalf("exit = %d, want %d\n%s", res.code, ExitRowsFailed, res.stderr)
	}
	finalByRow(t, results, 50)
}
