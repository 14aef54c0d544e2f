package pace

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// AIMD tuning of the shared rate.
const (
	rateFloor        = 0.5             // calls per second; never slower than this after 429s
	rateCooldown     = time.Second     // 429s within this of a decrease are the same episode
	rateRecoverShare = 0.05            // per second without 429, add this share of the ceiling
	rateWindow       = 2 * time.Second // window of the observed call rate
)

// AIMD is the one rate.Limiter shared by every call of a Client (a fixed
// --rate, or none until a 429), and its additive-increase/multiplicative-decrease controller: a 429 halves the
// rate for every worker, and each second without a 429 gives back 5% of the
// ceiling until the ceiling is reached. The ceiling is the configured rate.
// With no configured rate, calls are not limited until a 429; then the rate
// becomes half the call rate observed, the ceiling twice it, and once the
// rate has climbed back to the ceiling the calls are unlimited again. Safe
// for concurrent use.
type AIMD struct {
	now        func() time.Time
	configured float64

	mu           sync.Mutex
	lim          *rate.Limiter
	ceiling      float64 // 0 = unlimited
	current      float64 // 0 = unlimited
	lastDecrease time.Time
	lastAdjust   time.Time
	winStart     time.Time
	winCount     int
	observed     float64 // calls per second in the last complete window
}

// NewAIMD returns the AIMD of a configured rate in calls per second (0:
// unlimited until a 429), on the clock now.
func NewAIMD(configured float64, now func() time.Time) *AIMD {
	r := &AIMD{now: now, configured: configured, ceiling: configured, current: configured}
	if configured > 0 {
		r.lim = rate.NewLimiter(rate.Limit(configured), 1)
	} else {
		r.lim = rate.NewLimiter(rate.Inf, 1)
	}
	return r
}

// ErrStopped is a rate's Wait's answer (AIMD, Adaptive) when its stop
// channel was closed before the rate allowed the attempt: the attempt is
// not to be made.
var ErrStopped = errors.New("stopped while waiting for the rate")

// wait blocks until the shared rate allows one more HTTP attempt, or ctx
// ends, or stop is closed (ErrStopped): a turn there at once is taken
// whether stop is closed or not, and none is waited for once it is. A
// turn taken and not used (ctx, stop) is given back to the bucket, as
// rate.Limiter's Wait does.
func (r *AIMD) wait(ctx context.Context, stop <-chan struct{}) error {
	r.mu.Lock()
	now := r.now()
	r.observeLocked(now)
	r.recoverLocked(now)
	unlimited := r.current == 0
	r.mu.Unlock()
	if unlimited {
		return ctx.Err()
	}
	if stop == nil {
		return r.lim.Wait(ctx)
	}
	t0 := time.Now() // the bucket's clock: rate.Limiter's Wait reads it too
	res := r.lim.ReserveN(t0, 1)
	d := res.DelayFrom(t0)
	if d <= 0 {
		return nil
	}
	select {
	case <-stop:
		res.Cancel()
		return ErrStopped
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		res.Cancel()
		return ctx.Err()
	case <-stop:
		res.Cancel()
		return ErrStopped
	}
}

// observeLocked counts one call towards the observed call rate.
func (r *AIMD) observeLocked(now time.Time) {
	if r.winStart.IsZero() {
		r.winStart = now
	}
	if el := now.Sub(r.winStart); el >= rateWindow {
		r.observed = float64(r.winCount) / el.Seconds()
		r.winStart, r.winCount = now, 0
	}
	r.winCount++
}

// observedLocked is the recent call rate in calls per second.
func (r *AIMD) observedLocked(now time.Time) float64 {
	if r.winCount > 0 {
		el := max(now.Sub(r.winStart), rateWindow/20)
		cur := float64(r.winCount) / el.Seconds()
		if cur > r.observed {
			return cur
		}
	}
	return r.observed
}

// recoverLocked raises the rate additively towards the ceiling.
func (r *AIMD) recoverLocked(now time.Time) {
	if r.current == 0 || r.current >= r.ceiling || now.Sub(r.lastDecrease) < rateCooldown {
		return
	}
	inc := rateRecoverShare * r.ceiling * now.Sub(r.lastAdjust).Seconds()
	if inc <= 0 {
		return
	}
	r.current = min(r.ceiling, r.current+inc)
	r.lastAdjust = now
	if r.configured == 0 && r.current >= r.ceiling {
		r.current, r.ceiling = 0, 0
		r.lim.SetLimit(rate.Inf)
		return
	}
	r.lim.SetLimit(rate.Limit(r.current))
}

// on429 halves the shared rate, once per episode of 429s.
func (r *AIMD) on429() (newRate float64, changed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if !r.lastDecrease.IsZero() && now.Sub(r.lastDecrease) < rateCooldown {
		return r.current, false
	}
	if r.current == 0 {
		obs := r.observedLocked(now)
		if obs < 2*rateFloor {
			obs = 2 * rateFloor
		}
		r.ceiling = 2 * obs
		r.current = obs
	}
	r.current = max(r.current/2, min(rateFloor, r.ceiling))
	r.lastDecrease, r.lastAdjust = now, now
	r.lim.SetLimit(rate.Limit(r.current))
	return r.current, true
}

// rate is the current calls per second, 0 when unlimited.
func (r *AIMD) rate() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current
}

// Wait blocks until the shared rate allows one more HTTP attempt, or ctx
// ends, or stop is closed (ErrStopped; a nil stop never is).
func (r *AIMD) Wait(ctx context.Context, stop <-chan struct{}) error { return r.wait(ctx, stop) }

// Observe lowers the rate on a 429; nothing else moves it.
func (r *AIMD) Observe(o Outcome) (float64, bool) {
	if o.Status == http.StatusTooManyRequests {
		return r.on429()
	}
	return r.rate(), false
}

// Rate is the rate in calls per second now; 0 means unlimited.
func (r *AIMD) Rate() float64 { return r.rate() }
