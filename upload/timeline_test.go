package upload

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
)

// TestTimeline: the engine samples the client's counters while it runs;
// the samples add up to the counters' final values, show the rows in
// flight within the concurrency, and a signal is marked on the time axis.
func TestTimeline(t *testing.T) {
	for _, signal := range []bool{false, true} {
		name := map[bool]string{false: "to the end", true: "signal"}[signal]
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var answered, throttled atomic.Int64
			var calls atomic.Int64
			api := &fakeAPI{create: func(cctx context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
				time.Sleep(2 * time.Millisecond) // a service's latency
				answered.Add(1)
				if calls.Add(1)%5 == 0 {
					throttled.Add(1)
				}
				if signal && calls.Load() == 40 {
					cancel()
				}
				return lead.Result{ID: "id-" + in.LeadID, ResultCode: lead.CodeComplete}, submitter.Call{Attempts: 1}, nil
			}}
			cfg := testConfig()
			cfg.Concurrency = 3
			cfg.SampleEvery = 5 * time.Millisecond
			cfg.Stats = func() submitter.Stats {
				return submitter.Stats{Answered: answered.Load(), Status429: throttled.Load(), CurrentRate: 50}
			}
			res, _, err := run(t, ctx, cfg, &fakeSource{items: validItems(120)}, api)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			tl := res.Summary.Timeline
			if tl == nil || len(tl.Samples) == 0 {
				t.Fatalf("timeline %+v, want samples", tl)
			}
			var a, th int64
			for _, s := range tl.Samples {
				a += s.Answered
				th += s.Status429
				if s.InFlight > 3+1e-9 || math.Abs(s.ConcurrencyLimit-3) > 1e-9 || math.Abs(s.RateLimit-50) > 1e-9 {
					t.Errorf("sample %+v: want in flight <= 3, limit 3, rate 50", s)
				}
			}
			if a != answered.Load() || th != throttled.Load() {
				t.Errorf("samples add up to %d answered, %d 429s; want %d, %d", a, th, answered.Load(), throttled.Load())
			}
			var marked bool
			for _, m := range tl.Marks {
				marked = marked || m.Kind == summary.MarkSignal
			}
			if marked != signal {
				t.Errorf("marks %+v: signal marked %v, want %v", tl.Marks, marked, signal)
			}
		})
	}
}
