package main

import (
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/summary"
)

// TestBoundByTheServicesErrors: with a fixed --concurrency and a share of
// 503s whose retries wait (here a Retry-After of 50 ms, far longer than a
// call), no limit holds the calls back and the rows spend most of the
// workers' time waiting out their retries: "bound by" names the service's
// errors and the backoff, not "the input: rows came slower than the
// service took them", which it said on main (the 16-core run's fail20-c8:
// 20% 503s, 8 workers, every place in flight taken 0% of the time).
func TestBoundByTheServicesErrors(t *testing.T) {
	// Not parallel: what bound the run comes from the time calls waited.
	s := startTestSim(t, leadsim.Options{Fail503: 0.3, Fail503RetryAfter: "0.05"})
	res, _, sum := uploadAuto(t, s, 60, "--concurrency", "2", "--max-attempts", "20")
	if res.code != app.ExitOK {
		t.Fatalf("upload exit = %d\nstderr:\n%s", res.code, res.stderr)
	}
	b := sum.BoundBy
	if b == nil || b.Kind != summary.BoundErrors || !strings.Contains(b.Text, "answered 503") || !strings.Contains(b.Text, "backoff") ||
		!strings.Contains(b.Text, "--concurrency 2") || strings.Contains(b.Text, "slower") {
		t.Errorf("summary boundBy = %+v, want the service's errors and the retries' backoff", b)
	}
	if !strings.Contains(res.stderr, "the service's errors and the retries' backoff") {
		t.Errorf("the summary on stderr does not name the service's errors:\n%s", res.stderr)
	}
}
