package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/leadsim/simtest"
	"github.com/bulkload/bulkload/summary"
)

// TestUploadRetryAfterLongerThanTheRunWaits: a tenth of the createLeads
// answered 503 with a Retry-After longer than the run waits for the
// service (--max-retry-wait, 10 minutes by default) leave their rows at
// once, not retried: no line (not sent, for --resume), never failed, exit
// 1, and the summary names them and says why (issue 27, the house check's
// item 1). Every form: seconds beyond any clock, 2 h in seconds,
// fractional, as an HTTP-date, and a sane one (2 s) over a --max-retry-wait
// of 1 s; one within the bound is waited out. On main each such row sat
// out 10 minutes (the Retry-After's cap) and then sent again: the run
// hung (go test's deadline).
func TestUploadRetryAfterLongerThanTheRunWaits(t *testing.T) {
	t.Parallel()
	const n = 40
	for _, tc := range []struct {
		name, form string
		bound      time.Duration // 0: the default
		deferred   bool
	}{
		{"huge", "99999999999999999999", 0, true},
		{"seconds", "7200", 0, true},
		{"fractional", "7200.5", 0, true},
		{"HTTP-date", "date+2h", 0, true},
		{"sane, over the bound", "2", time.Second, true},
		{"within the bound", "0.05", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a simulator and a folder of its own
			s := startSim(t, leadsim.Options{Fail503: 0.2, Fail503RetryAfter: tc.form, Seed: 3})
			res, rows, sum, job := uploadLeft(t, s, n, func(j *UploadJob) {
				j.Up.NoSubmit = true
				if tc.bound > 0 {
					j.Up.MaxRetryWait = tc.bound
				}
			})
			st := s.Stats()
			answered := st.Rejections[leadsim.RejectFault503]
			if answered == 0 {
				t.Fatal("no 503 was injected: the test tests nothing")
			}
			if sum.Failed != 0 {
				t.Errorf("%d rows failed, want none", sum.Failed)
			}
			if !tc.deferred {
				if res.code != ExitOK || len(rows) != n || sum.Deferred.Count != 0 {
					t.Errorf("exit %d, %d rows, %d deferred; want 0, every row and none deferred\n%s", res.code, len(rows), sum.Deferred.Count, res.stderr)
				}
				return
			}
			if res.code != ExitRowsFailed {
				t.Errorf("exit = %d, want %d\n%s", res.code, ExitRowsFailed, res.stderr)
			}
			for _, r := range rows {
				if r["status"] != "processed" {
					t.Errorf("row %s = %s (%s), want processed or no line", r["row"], r["status"], r["error"])
				}
			}
			// Each row answered with the Retry-After was sent once, and
			// left: none was retried.
			if creates := st.Requests[leadsim.OpCreateLead]; sumOf(creates) != n {
				t.Errorf("%d createLeads, want %d: one a row, none retried (%v)", sumOf(creates), n, creates)
			}
			if sum.Deferred.Count != answered || sum.NotSent != answered || len(rows)+answered != n {
				t.Errorf("deferred %d, not sent %d, %d lines; want the %d rows answered with the Retry-After deferred and not sent, the others' lines", sum.Deferred.Count, sum.NotSent, len(rows), answered)
			}
			if !strings.Contains(res.stderr, "the service asked them to come back (Retry-After) later than the run waits for it (--max-retry-wait)") {
				t.Errorf("the summary does not say why rows were not sent:\n%s", res.stderr)
			}
			if tc.name != "huge" {
				return
			}
			// --resume sends the rows left, and only those (the service
			// asks some of them to come back later again).
			job.Up.Resume = true
			res, rows, sum = rerunLeft(t, s, job)
			if creates := sumOf(s.Stats().Requests[leadsim.OpCreateLead]); creates != n+answered {
				t.Errorf("%d createLeads after --resume, want %d: the %d rows left sent once more, no other", creates, n+answered, answered)
			}
			again := s.Stats().Rejections[leadsim.RejectFault503] - answered
			if sum.Deferred.Count != again || len(rows)+again != n || sum.Failed != 0 {
				t.Errorf("--resume: %d deferred, %d lines, %d failed; want the %d answered with the Retry-After again deferred, the other rows' lines, none failed\n%s", sum.Deferred.Count, len(rows), sum.Failed, again, res.stderr)
			}
		})
	}
}

// TestUploadEveryCallToldToComeBackLater: a service that answers every
// createLead 503 with a Retry-After of two hours, longer than the run
// waits, is one that sends every caller away: after
// --max-consecutive-failures such answers in a row the run stops, exit 4,
// as for an outage longer than --outage-wait, and no row is failed. On
// main the rows sat out 10 minutes each (go test's deadline).
func TestUploadEveryCallToldToComeBackLater(t *testing.T) {
	t.Parallel()
	s := startSim(t, leadsim.Options{Fail503: 1, Fail503RetryAfter: "7200"})
	res, rows, sum, _ := uploadLeft(t, s, 40, func(j *UploadJob) {
		j.Up.Concurrency = Concurrency{N: 2}
		j.Up.MaxConsecutiveFailures = 5
	})
	if res.code != ExitUnreachable {
		t.Fatalf("exit = %d, want %d\n%s", res.code, ExitUnreachable, res.stderr)
	}
	if len(rows) != 0 || sum.Failed != 0 {
		t.Errorf("%d lines, %d failed; want none", len(rows), sum.Failed)
	}
	if n := sumOf(s.Stats().Requests[leadsim.OpCreateLead]); n < 5 || n > 6 {
		t.Errorf("%d createLeads, want the 5 in a row and the one beside the last", n)
	}
	if !strings.Contains(res.stderr, "asked to come back") {
		t.Errorf("the run's error does not say the service asked to come back later:\n%s", res.stderr)
	}
}

// sumOf is the sum of a map's counts.
func sumOf(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// uploadLeft is uploadAuto for a run that may leave rows without a line:
// the run, the results file's lines and the summary JSON.
func uploadLeft(t *testing.T, s *simtest.Server, n int, change func(j *UploadJob)) (runResult, []resultRow, summary.Summary, *UploadJob) {
	t.Helper()
	dir := t.TempDir()
	input := filepath.Join(dir, "leads.csv")
	opts := synth.Defaults()
	opts.Invalid = 0
	if err := synth.WriteCSVFile(input, opts, n); err != nil {
		t.Fatal(err)
	}
	j := uploadJob(input, filepath.Join(dir, "results.csv"), change)
	j.In.SummaryJSON = filepath.Join(dir, "summary.json")
	res, rows, sum := rerunLeft(t, s, j)
	return res, rows, sum, j
}

// rerunLeft runs j (again) and returns the run, the results file's lines
// and the summary JSON.
func rerunLeft(t *testing.T, s *simtest.Server, j *UploadJob) (runResult, []resultRow, summary.Summary) {
	t.Helper()
	res := runUpload(t, s, j)
	b, err := os.ReadFile(j.In.SummaryJSON)
	if err != nil {
		t.Fatalf("summary JSON: %v\nstderr:\n%s", err, res.stderr)
	}
	var sum summary.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatalf("summary JSON: %v", err)
	}
	return res, readResults(t, j.In.Results), sum
}
