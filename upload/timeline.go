package upload

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
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
	// An outage is a run of samples in which attempts failed with no
	// usable answer and none was answered; it is marked once it ends.
	var outageFrom time.Time
	var outageFailed int64
	endOutage := func(at time.Time) {
		if !outageFrom.IsZero() {
			e.timeline.Mark(outageFrom, at.Sub(outageFrom), summary.MarkOutage,
				fmt.Sprintf("no answer from the service: %d attempts failed (5xx or no reply)", outageFailed))
			outageFrom, outageFailed = time.Time{}, 0
		}
	}
	defer func() { endOutage(last) }()
	take := func(now time.Time) {
		cur := stats()
		lat := cur.Latency.Sub(prev.Latency)
		unanswered := max(0, unansweredOf(cur)-unansweredOf(prev))
		answered := cur.Answered - prev.Answered
		switch {
		case answered == 0 && unanswered > 0:
			if outageFrom.IsZero() {
				outageFrom = last
			}
			outageFailed += unanswered
		case answered > 0:
			endOutage(last)
		}
		// Seconds are counted in the sampling interval: with a shortened
		// interval (tests) a sample still counts as one "second".
		secs := now.Sub(last).Seconds() / every.Seconds()
		// The calls in flight and the limit on them are the client's
		// (with --concurrency auto the limit moves, and more rows than
		// calls are in the workers' hands); without them, the rows
		// being sent and the workers. The calls in flight are the
		// interval's mean, by Little's law: the attempts' latency that
		// ended in it over its length. A count at the tick's instant read
		// 0 for a run of 81 calls in two seconds, whose calls all fell
		// between ticks.
		inFlight, limit := float64(e.inFlight.Load()), float64(e.cfg.Concurrency)
		if c := cur.Concurrency; c.Limit > 0 {
			inFlight, limit = float64(c.InFlight), float64(c.Limit)
			if wall := now.Sub(last).Seconds(); wall > 0 {
				inFlight = max(0, cur.AttemptLatency.SumSeconds-prev.AttemptLatency.SumSeconds) / wall
				// A call's latency counts where it ended: in a short last
				// interval the quotient can pass what was ever in flight
				// at once, which no mean can.
				if c.PeakInFlight > 0 {
					inFlight = min(inFlight, float64(c.PeakInFlight))
				}
			}
		}
		e.timeline.Add(summary.Sample{
			Seconds:          secs,
			Answered:         cur.Answered - prev.Answered,
			Status429:        cur.Status429 - prev.Status429,
			Status503:        cur.Status503 - prev.Status503,
			Retries:          cur.Retries - prev.Retries,
			Unanswered:       unanswered,
			InFlight:         inFlight,
			ConcurrencyLimit: limit,
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
			// The part of an interval that had begun, unless it is a
			// sliver in which nothing happened: the samples add up to the
			// counters' final values.
			if now := time.Now(); now.Sub(last) > every/20 || moved(prev, stats()) {
				take(now)
			}
			return
		}
	}
}

// moved reports whether the counters a sample records moved from a to b.
func moved(a, b submitter.Stats) bool {
	return a.Answered != b.Answered || a.Status429 != b.Status429 || a.Status503 != b.Status503 || a.Retries != b.Retries ||
		unansweredOf(a) != unansweredOf(b) || a.AttemptLatency.SumSeconds != b.AttemptLatency.SumSeconds
}

// unansweredOf counts the attempts that got no usable answer: a 5xx other
// than 503 (which says "busy", like a 429), or no reply.
func unansweredOf(s submitter.Stats) int64 {
	var n int64
	for _, op := range []submitter.OpStats{s.CreateLead, s.SubmitLead, s.Lead} {
		n += op.ServerError + op.Network
	}
	return n - s.Status503
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
