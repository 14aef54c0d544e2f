package upload

import (
	"context"
	"errors"
	"time"

	"github.com/bulkload/bulkload/report"
	"github.com/bulkload/bulkload/submitter"
)

// sample records the run's timeline until ctx ends: every SampleEvery (a
// second) what the client's counters moved by, the rows in flight, the
// concurrency and the rate in force; at the end the part of an interval
// that had begun. A ticker paces it; it never sleeps.
func (e *engine) sample(ctx context.Context) {
	every := e.cfg.SampleEvery
	if every <= 0 {
		every = time.Second
	}
	stats := e.cfg.Stats
	if stats == nil {
		stats = func() submitter.Stats { return submitter.Stats{} }
	}
	prev, last := stats(), time.Now()
	tick := time.NewTicker(every)
	defer tick.Stop()
	take := func(now time.Time) {
		cur := stats()
		lat := cur.Latency.Sub(prev.Latency)
		// Seconds are counted in the sampling interval: with a shortened
		// interval (tests) a sample still counts as one "second".
		secs := now.Sub(last).Seconds() / every.Seconds()
		e.timeline.Add(report.Sample{
			Seconds:          secs,
			Answered:         cur.Answered - prev.Answered,
			Status429:        cur.Status429 - prev.Status429,
			Status503:        cur.Status503 - prev.Status503,
			Retries:          cur.Retries - prev.Retries,
			InFlight:         float64(e.inFlight.Load()),
			ConcurrencyLimit: float64(e.cfg.Concurrency),
			LatencyP50Ms:     ms(lat.Quantile(0.5)),
			LatencyP95Ms:     ms(lat.Quantile(0.95)),
			RateLimit:        cur.CurrentRate,
		})
		prev, last = cur, now
	}
	for {
		select {
		case now := <-tick.C:
			take(now)
		case <-ctx.Done():
			if now := time.Now(); now.Sub(last) > every/20 {
				take(now)
			}
			return
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// stopNote is a timeline mark's words for why the run stopped taking rows.
func stopNote(cause error) string {
	switch {
	case errors.Is(cause, ErrUnreachable):
		return "circuit breaker: the service looks down, no new rows taken"
	case cause == nil:
		return "stopped taking rows"
	}
	return "stopped taking rows: the input could not be read on, or the run failed"
}
