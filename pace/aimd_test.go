package pace

import (
	"testing"
	"time"

	"github.com/bulkload/bulkload/internal/fakeclock"
)

func TestRateControlAIMD(t *testing.T) {
	clk := fakeclock.New(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC))
	r := NewAIMD(20, clk.Now)
	steps := []struct {
		name    string
		advance time.Duration
		do      func()
		want    float64
	}{
		{"starts at the configured rate", 0, nil, 20},
		{"a 429 halves it", 0, func() { r.on429() }, 10},
		{"a second 429 of the same episode does not", 100 * time.Millisecond, func() { r.on429() }, 10},
		{"no recovery inside the cooldown", 500 * time.Millisecond, func() { r.recoverLocked(clk.Now()) }, 10},
		{"a 429 after the cooldown halves again", time.Second, func() { r.on429() }, 5},
		{"recovers 5% of the ceiling per second", 2 * time.Second, func() { r.recoverLocked(clk.Now()) }, 7},
		{"recovery continues", 10 * time.Second, func() { r.recoverLocked(clk.Now()) }, 17},
		{"never above the ceiling", time.Minute, func() { r.recoverLocked(clk.Now()) }, 20},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			clk.Advance(st.advance)
			if st.do != nil {
				st.do()
			}
			if got := r.rate(); !approx(got, st.want) {
				t.Errorf("rate() = %v, want %v", got, st.want)
			}
			if got := float64(r.lim.Limit()); !approx(got, st.want) {
				t.Errorf("limiter limit = %v, want %v", got, st.want)
			}
		})
	}
}

func TestRateControlFloor(t *testing.T) {
	clk := fakeclock.New(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC))
	r := NewAIMD(2, clk.Now)
	for i := 0; i < 10; i++ {
		clk.Advance(2 * time.Second)
		r.on429()
	}
	if got := r.rate(); got != rateFloor {
		t.Errorf("rate() after 10 episodes of 429 = %v, want the floor %v", got, rateFloor)
	}
}

func TestRateControlUnlimitedLearnsFromObservedRate(t *testing.T) {
	clk := fakeclock.New(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC))
	r := NewAIMD(0, clk.Now)
	// 100 calls per second for 3 seconds.
	for i := 0; i < 300; i++ {
		r.mu.Lock()
		r.observeLocked(clk.Now())
		r.mu.Unlock()
		clk.Advance(10 * time.Millisecond)
	}
	if got := r.rate(); got != 0 {
		t.Fatalf("rate() before any 429 = %v, want 0 (unlimited)", got)
	}
	r.on429()
	if got := r.rate(); got < 40 || got > 60 {
		t.Errorf("rate() after the first 429 at ~100 calls/s = %v, want about 50", got)
	}
	// Back to unlimited after climbing from half to twice the observed
	// rate at 5% of the ceiling per second: 15 s.
	for _, step := range []struct {
		advance time.Duration
		want    float64
	}{{5 * time.Second, 100}, {5 * time.Second, 150}, {5 * time.Second, 0}} {
		clk.Advance(step.advance)
		r.mu.Lock()
		r.recoverLocked(clk.Now())
		r.mu.Unlock()
		if got := r.rate(); (step.want == 0) != (got == 0) || (got != 0 && (got < step.want*0.8 || got > step.want*1.2)) {
			t.Errorf("rate() later = %v, want about %v (0 = unlimited)", got, step.want)
		}
	}
}

func approx(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
