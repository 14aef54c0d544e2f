package upload

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/pace"
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

// TestTimelineInFlightIsTheMean: with the client's concurrency, a sample's
// calls in flight are the interval's mean (the attempts' latency that
// ended in it, over its length), so the samples hold every call: summed
// back over their seconds they give the attempts' whole latency. A count
// at each tick read 0 for runs whose calls fell between the ticks.
func TestTimelineInFlightIsTheMean(t *testing.T) {
	var nanos atomic.Int64
	api := &fakeAPI{create: func(cctx context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
		d := 3 * time.Millisecond
		time.Sleep(d) // a service's latency, well under the sampling interval
		nanos.Add(int64(d))
		return lead.Result{ID: "id-" + in.LeadID, ResultCode: lead.CodeComplete}, submitter.Call{Attempts: 1}, nil
	}}
	cfg := testConfig()
	cfg.Concurrency = 2
	cfg.SampleEvery = 20 * time.Millisecond
	cfg.Stats = func() submitter.Stats {
		st := submitter.Stats{Concurrency: pace.ConcurrencySnapshot{Limit: 2}}
		st.AttemptLatency.SumSeconds = time.Duration(nanos.Load()).Seconds()
		return st
	}
	res, _, err := run(t, context.Background(), cfg, &fakeSource{items: validItems(60)}, api)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var callSeconds float64
	nonzero := 0
	for _, s := range res.Summary.Timeline.Samples {
		callSeconds += s.InFlight * s.Seconds * cfg.SampleEvery.Seconds()
		if s.InFlight > 0 {
			nonzero++
		}
	}
	want := time.Duration(nanos.Load()).Seconds()
	if math.Abs(callSeconds-want) > want*1e-6 || nonzero == 0 {
		t.Errorf("samples hold %.6f call-seconds in flight (%d samples above 0), want the attempts' %.6f", callSeconds, nonzero, want)
	}
}
