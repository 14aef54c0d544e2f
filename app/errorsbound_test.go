package app

import (
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/pace"
	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
)

// TestBoundByErrorsOrInput: when no limit held the calls back, "bound by"
// names the service's errors where their retries' waits and failed
// attempts took a quarter or more of the rows' time with the service and
// the reader did not wait for the input half the run or more; the input
// where it did, however long its rows' retries waited. Fixed and auto
// concurrency, a fixed, auto or no rate, 503s with and without
// Retry-After, 429s and timeouts. The house check's runs (400 rows, no
// tuning flags) said "the input: rows came slower than the service took
// them" for fail10, fail20, ra2 and rahuge: the rows' waits were measured
// against --max-concurrency's 256 workers, of which a small file's rows
// take a few.
func TestBoundByErrorsOrInput(t *testing.T) {
	const since = 10 * time.Second
	auto := func(waited time.Duration, limit int) pace.ConcurrencySnapshot {
		return pace.ConcurrencySnapshot{Auto: true, Limit: limit, Max: 256, Waited: waited, Since: since}
	}
	fixed := func(n int, waited time.Duration) pace.ConcurrencySnapshot {
		return pace.ConcurrencySnapshot{Limit: n, Max: n, Waited: waited, Since: since}
	}
	autoUp := &UploadOptions{Concurrency: Concurrency{Auto: true}, MaxConcurrency: 256, Rate: Rate{Auto: true}}
	fixed8 := &UploadOptions{Concurrency: Concurrency{N: 8}, Rate: Rate{Auto: true}}
	rate20 := &UploadOptions{Concurrency: Concurrency{Auto: true}, MaxConcurrency: 256, Rate: Rate{PerSecond: 20}}
	rate0 := &UploadOptions{Concurrency: Concurrency{Auto: true}, MaxConcurrency: 256}
	tests := []struct {
		name  string
		st    submitter.Stats
		input time.Duration // the reader's wait for the input
		up    *UploadOptions
		want  string
		says  []string
	}{
		// The house check's fail10: 10% 503s, createLead 50 ms, 400 rows.
		{"auto, 10% 503s, a file", submitter.Stats{Attempts: 660, Retries: 69, Status503: 69, BackoffWaited: 17 * time.Second, Wire: 27 * time.Second, FailedWire: 700 * time.Millisecond,
			Concurrency: auto(0, 95)}, 200 * time.Millisecond, autoUp, summary.BoundErrors, []string{"10.5% answered 503", "40% of the rows' time", "17s waiting out retries"}},
		{"auto, 20% 503s, a file", submitter.Stats{Attempts: 733, Retries: 142, Status503: 142, BackoffWaited: 46 * time.Second, Wire: 21 * time.Second, FailedWire: 70 * time.Millisecond,
			Concurrency: auto(time.Second, 133)}, 0, autoUp, summary.BoundErrors, []string{"19.4% answered 503"}},
		// ra2: one call in ten 503 with Retry-After: 2.
		{"auto, 503s with Retry-After: 2", submitter.Stats{Attempts: 660, Retries: 69, Status503: 69, BackoffWaited: 138 * time.Second, Wire: 3 * time.Second, FailedWire: 300 * time.Millisecond,
			Concurrency: auto(0, 256)}, 0, autoUp, summary.BoundErrors, []string{"98% of the rows' time"}},
		// rahuge, stopped: the rows answered 503 with a huge Retry-After
		// waited until the drain's end, and no retry was ever made.
		{"auto, a huge Retry-After, stopped", submitter.Stats{Attempts: 570, Status503: 57, BackoffWaited: 570 * time.Second, Wire: 3 * time.Second, FailedWire: 300 * time.Millisecond,
			Concurrency: auto(0, 51)}, 0, autoUp, summary.BoundErrors, []string{"0 retries of 570 attempts", "10.0% answered 503"}},
		{"fixed concurrency, 20% 503s", submitter.Stats{Attempts: 733, Retries: 142, Status503: 142, BackoffWaited: 46 * time.Second, Wire: 21 * time.Second,
			Concurrency: fixed(8, 0)}, 0, fixed8, summary.BoundErrors, []string{"with --concurrency 8 a row waiting out its backoff holds one of the 8"}},
		{"a fixed rate it does not use, 503s", submitter.Stats{Attempts: 150, Retries: 30, Status503: 30, BackoffWaited: 15 * time.Second, Wire: 8 * time.Second,
			RateWaited: time.Second, RateAllowed: 20, RateLimited: since, Concurrency: auto(0, 20)}, 0, rate20, summary.BoundErrors, []string{"20.0% answered 503"}},
		// --rate 0 sets no rate: 429s with a Retry-After delay their rows.
		{"no rate, 429s with Retry-After", submitter.Stats{Attempts: 600, Retries: 60, Status429: 60, BackoffWaited: 60 * time.Second, Wire: 30 * time.Second,
			Concurrency: auto(0, 40)}, 0, rate0, summary.BoundErrors, []string{"10.0% answered 429"}},
		// A tenth of the calls time out after 5 s: the time goes to the
		// failed attempts on the wire, not to the backoff.
		{"auto, timeouts", submitter.Stats{Attempts: 660, Retries: 66, CreateLead: submitter.OpStats{Network: 66}, BackoffWaited: 10 * time.Second, Wire: 357 * time.Second, FailedWire: 330 * time.Second,
			Concurrency: auto(0, 60)}, 0, autoUp, summary.BoundErrors, []string{"10.0% got no reply", "5m30s on failed attempts"}},
		{"an error share of a quarter", submitter.Stats{Attempts: 1000, Retries: 50, Status503: 50, BackoffWaited: 10 * time.Second, Wire: 30 * time.Second,
			Concurrency: auto(0, 30)}, 0, autoUp, summary.BoundErrors, nil},

		// Standard input fed a row at a time: the reader waited 95% of
		// the run, and the rows' Retry-After cost it nothing more than
		// a worker, of which there were 256.
		{"slow standard input, 503s with Retry-After", submitter.Stats{Attempts: 66, Retries: 6, Status503: 6, BackoffWaited: 12 * time.Second, Wire: 3 * time.Second,
			Concurrency: auto(0, 8)}, 9500 * time.Millisecond, autoUp, summary.BoundInput, []string{"rows came slower", "the reader waited for rows 95%"}},
		{"a source that trickles, fixed concurrency, 503s", submitter.Stats{Attempts: 300, Retries: 60, Status503: 60, BackoffWaited: 30 * time.Second, Wire: 15 * time.Second,
			Concurrency: fixed(8, 0)}, 6 * time.Second, fixed8, summary.BoundInput, nil},
		{"the reader waited half the run", submitter.Stats{Attempts: 300, Retries: 60, Status503: 60, BackoffWaited: 30 * time.Second, Wire: 15 * time.Second,
			Concurrency: auto(0, 30)}, 5 * time.Second, autoUp, summary.BoundInput, nil},
		{"a few retries", submitter.Stats{Attempts: 660, Retries: 6, Status503: 6, BackoffWaited: 1500 * time.Millisecond, Wire: 27 * time.Second,
			Concurrency: auto(0, 60)}, 0, autoUp, summary.BoundLatency, []string{"the calls' own time", "the reader waited for rows 0%"}},

		// A limit that held the calls back comes first.
		{"the rate limit, 429s waited out", submitter.Stats{Attempts: 1400, Retries: 100, Status429: 100, BackoffWaited: 50 * time.Second, Wire: 20 * time.Second,
			RateWaited: 9 * time.Second, RateAllowed: 150, RateLimited: since, LimitFound: true, SettledRate: 145, Concurrency: auto(0, 30)}, 0, autoUp, summary.BoundRateLimit, nil},
		{"every place taken, fixed concurrency", submitter.Stats{Attempts: 1600, Retries: 300, Status503: 300, BackoffWaited: 40 * time.Second, Wire: 40 * time.Second,
			Concurrency: fixed(8, 9*time.Second)}, 0, fixed8, summary.BoundConcurrency, nil},
		{"503s that grew with the calls in flight", submitter.Stats{Attempts: 1600, Retries: 300, Status503: 300, BackoffWaited: 40 * time.Second, Wire: 40 * time.Second,
			Concurrency: pace.ConcurrencySnapshot{Auto: true, Limit: 30, Max: 256, PressureCuts: 4, PressurePast: 32, Waited: 8 * time.Second, Since: since}}, 0, autoUp, summary.BoundCapacity, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := boundBy(tc.st, tc.input, tc.up)
			if b == nil || b.Kind != tc.want {
				t.Fatalf("boundBy = %+v, want kind %s", b, tc.want)
			}
			for _, w := range tc.says {
				if !strings.Contains(b.Text, w) {
					t.Errorf("text %q does not say %q", b.Text, w)
				}
			}
			if b.Kind == summary.BoundErrors && (strings.Contains(b.Text, "pin it") || strings.Contains(b.Text, "slower")) {
				t.Errorf("text %q: a pin or rows that came slower, for the service's errors", b.Text)
			}
			if want := errorShare(tc.st); b.ErrorShare != want {
				t.Errorf("ErrorShare = %v, want %v", b.ErrorShare, want)
			}
			if want := min(tc.input.Seconds()/since.Seconds(), 1); b.InputWaitShare != want {
				t.Errorf("InputWaitShare = %v, want %v", b.InputWaitShare, want)
			}
			t.Logf("%s: %s", b.Kind, b.Text)
		})
	}
}

// TestErrorShare: the waits out of retries and the failed attempts'
// time on the wire, over all the rows' time with the service.
func TestErrorShare(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   submitter.Stats
		want float64
	}{
		{"no attempt", submitter.Stats{}, 0},
		{"no error", submitter.Stats{Wire: 10 * time.Second}, 0},
		{"backoff only", submitter.Stats{BackoffWaited: 10 * time.Second, Wire: 30 * time.Second}, 0.25},
		{"failed attempts only", submitter.Stats{FailedWire: 5 * time.Second, Wire: 20 * time.Second}, 0.25},
		{"both", submitter.Stats{BackoffWaited: 10 * time.Second, FailedWire: 10 * time.Second, Wire: 30 * time.Second}, 0.5},
		{"waits with no attempt counted", submitter.Stats{BackoffWaited: time.Second}, 1},
	} {
		if got := errorShare(tc.st); got != tc.want {
			t.Errorf("%s: errorShare(%+v) = %v, want %v", tc.name, tc.st, got, tc.want)
		}
	}
}

// TestBoundTrackerInput: the progress line's "bound by" weighs the
// reader's wait for the input in its own interval: a feed that paused
// then came fast, with the same share of 503s, is the input first and the
// service's errors after.
func TestBoundTrackerInput(t *testing.T) {
	up := &UploadOptions{Concurrency: Concurrency{Auto: true}, MaxConcurrency: 256}
	snap := func(since time.Duration) pace.ConcurrencySnapshot {
		return pace.ConcurrencySnapshot{Auto: true, Limit: 20, Max: 256, Since: since}
	}
	stats := []submitter.Stats{
		{Attempts: 100, Retries: 10, Status503: 10, BackoffWaited: 5 * time.Second, Wire: 5 * time.Second, Concurrency: snap(10 * time.Second)},
		{Attempts: 200, Retries: 20, Status503: 20, BackoffWaited: 10 * time.Second, Wire: 10 * time.Second, Concurrency: snap(20 * time.Second)},
	}
	inputs := []time.Duration{9 * time.Second, 9*time.Second + 100*time.Millisecond}
	i := 0
	tr := &boundTracker{stats: func() submitter.Stats { return stats[i] }, input: func() time.Duration { d := inputs[i]; i++; return d }, up: up}
	if got := tr.note(); !strings.Contains(got, "bound by "+summary.BoundInput) {
		t.Errorf("first interval (the reader waited 90%%): %q, want bound by %s", got, summary.BoundInput)
	}
	if got := tr.note(); !strings.Contains(got, "bound by "+summary.BoundErrors) {
		t.Errorf("second interval (the reader waited 1%%): %q, want bound by %s", got, summary.BoundErrors)
	}
}
