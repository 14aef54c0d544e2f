package submitter

import (
	"context"
	"sync"
	"testing"

	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/pace"
)

// openRate is a RateLimiter that sets no limit until set is called, and
// counts the turns the attempts take.
type openRate struct {
	mu    sync.Mutex
	r     float64
	waits int
}

func (o *openRate) Wait(ctx context.Context, _ <-chan struct{}) error {
	o.mu.Lock()
	o.waits++
	o.mu.Unlock()
	return ctx.Err()
}

func (o *openRate) Observe(pace.Outcome) (float64, bool) { return o.Rate(), false }

func (o *openRate) Rate() float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.r
}

func (o *openRate) set(r float64) {
	o.mu.Lock()
	o.r = r
	o.mu.Unlock()
}

// limitWhileWaiting is a fixed limit of one call in flight during whose
// Acquire the rate gets the limit to (as --rate auto's 429s set one, or
// lower it, while attempts wait for a place).
type limitWhileWaiting struct {
	*pace.Concurrency
	rate *openRate
	to   float64
}

func (l limitWhileWaiting) Acquire(ctx context.Context) (int64, error) {
	l.rate.set(l.to)
	return l.Concurrency.Acquire(ctx)
}

// TestAttemptTakesItsTurnAtARateSetWhileItWaited: an attempt that passed
// the rate while it set no limit, and got its place after the rate set
// one, takes a turn at the rate before it is sent. On main it went at once,
// and against a service that answers its 429s at once each of the
// attempts waiting for a place went in turn, refused as fast (bench/conc.sh
// rate150: 189 429s in 250 ms after the first 429 set the rate); so does
// one that got its place after the rate was lowered (190 429s in 250 ms
// after a later cut). An attempt that passed a rate no higher than the
// one in force, or one that still sets none, takes one turn.
func TestAttemptTakesItsTurnAtARateSetWhileItWaited(t *testing.T) {
	tests := []struct {
		name      string
		from, to  float64
		wantWaits int
	}{
		{"no limit, then one", 0, 20, 2},
		{"no limit, still none", 0, 0, 1},
		{"a limit, then a lower one", 50, 20, 2},
		{"a limit, then a higher one", 50, 60, 1},
		{"a limit, the same", 50, 50, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rate := &openRate{r: tc.from}
			env := startSim(t, leadsim.Options{}, func(c *Config) {
				c.RateLimiter = rate
				c.ConcurrencyLimiter = limitWhileWaiting{pace.NewConcurrency(pace.ConcurrencyConfig{Fixed: 1}), rate, tc.to}
			})
			out := runLeads(t, env.c, 0, 1, 1, false)
			if f := failures(out); len(f) > 0 {
				t.Fatalf("the call failed: %s", f[0])
			}
			attempts := env.c.Stats().Attempts
			if attempts != 1 {
				t.Fatalf("Stats().Attempts = %d, want 1", attempts)
			}
			rate.mu.Lock()
			defer rate.mu.Unlock()
			if rate.waits != tc.wantWaits {
				t.Errorf("turns taken at the rate for one attempt = %d, want %d", rate.waits, tc.wantWaits)
			}
		})
	}
}

// TestSimNoStormOfRefusalsWhenTheRateIsSet: --rate auto and --concurrency
// auto against a service that refuses at once past 200 calls/s. While the
// rate set no limit every worker passed it and queued for a place (8 at
// the start, 128 workers); when the first 429 set the rate, each went at
// once as it got a place, refused at once, its place freeing the next: on
// main about a worker's worth of 429s right after the first. Now they take
// their turns at the rate that was set.
func TestSimNoStormOfRefusalsWhenTheRateIsSet(t *testing.T) {
	env := startSim(t, leadsim.Options{RateLimit: 200, RateBurst: 10}, func(c *Config) {
		c.RateAuto = true
		c.ConcurrencyAuto = true
		c.MaxConcurrency = 128
		c.MaxAttempts = 20
	})
	out := runLeads(t, env.c, 0, 160, 128, false)
	if f := failures(out); len(f) > 0 {
		t.Fatalf("%d of %d calls failed, first: %s", len(f), len(out), f[0])
	}
	s := env.c.Stats()
	t.Logf("%d attempts, %d answered 429, rate %.1f (limit found %v)", s.Attempts, s.Status429, s.CurrentRate, s.LimitFound)
	if s.Status429 > 60 {
		t.Errorf("%d of %d attempts answered 429, want at most 60: the calls that waited for a place while the rate set no limit went at once", s.Status429, s.Attempts)
	}
}
