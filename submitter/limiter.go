package submitter

import (
	"context"
	"time"
)

// limiter paces the attempts of every call of a Client (the rateLayer's
// one dependency): rateControl for a fixed --rate, Adaptive for --rate
// auto. Safe for concurrent use.
type limiter interface {
	// Wait blocks until one more attempt may start, or ctx ends.
	Wait(ctx context.Context) error
	// Observe reports one attempt's outcome; lowered is true when it made
	// the shared rate lower (the transport logs it), now is the new rate.
	Observe(o attemptOutcome) (now float64, lowered bool)
	// Rate is the rate in calls per second now; 0 means unlimited.
	Rate() float64
}

// attemptOutcome is what became of one HTTP attempt, as a limiter sees it.
type attemptOutcome struct {
	Start      time.Time     // when the attempt was sent (after Wait)
	Latency    time.Duration // until the reply (or the failure)
	Status     int           // HTTP status; 0 when there was no reply
	RetryAfter time.Duration // the reply's Retry-After, 0 if none
}
