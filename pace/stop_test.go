package pace

import (
	"context"
	"errors"
	"testing"
	"time"
)

// waiter is the rate's Wait, as the submitter calls it.
type waiter interface {
	Wait(ctx context.Context, stop <-chan struct{}) error
}

// TestWaitEndsAtStop: a call waiting for its turn at the rate (a pause of
// every call under --rate auto, or a turn far off at a fixed rate) leaves
// when its stop channel is closed, with ErrStopped (issue 27 item 4: at a
// stop, only the calls on the wire wait for the drain), and one whose
// stop is already closed does not wait; a nil stop ends no wait. A fixed
// rate's turn not used is given back to the bucket.
func TestWaitEndsAtStop(t *testing.T) {
	paused := func(t *testing.T) waiter {
		a, _ := newTestAdaptive(AutoConfig{Start: 100})
		for range autoRetryAfterMin {
			a.Observe(Outcome{Start: autoEpoch, Status: 503, RetryAfter: time.Hour})
		}
		if _, p, _ := a.reserve(); !p {
			t.Fatal("not paused by answers that all carry a Retry-After of an hour")
		}
		return a
	}
	farTurn := func(t *testing.T) waiter {
		r := NewAIMD(0.0001, time.Now) // a turn every 10,000 s
		if err := r.Wait(context.Background(), nil); err != nil {
			t.Fatalf("the first turn: %v", err)
		}
		return r
	}
	for _, tc := range []struct {
		name string
		lim  func(*testing.T) waiter
	}{
		{"adaptive paused by Retry-After", paused},
		{"fixed rate, a turn far off", farTurn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := tc.lim(t)
			stop := make(chan struct{})
			done := make(chan error, 1)
			go func() { done <- lim.Wait(context.Background(), stop) }()
			select {
			case err := <-done:
				t.Fatalf("Wait ended before the stop: %v", err)
			case <-time.After(20 * time.Millisecond): // waiting (or about to): either way the stop ends it
			}
			close(stop)
			if err := <-done; !errors.Is(err, ErrStopped) {
				t.Errorf("Wait at the stop = %v, want ErrStopped", err)
			}
			if err := lim.Wait(context.Background(), stop); !errors.Is(err, ErrStopped) {
				t.Errorf("Wait after the stop = %v, want ErrStopped", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			go func() { done <- lim.Wait(ctx, nil) }()
			select {
			case err := <-done:
				t.Fatalf("Wait with no stop ended before its turn: %v", err)
			case <-time.After(20 * time.Millisecond):
			}
			cancel()
			if err := <-done; err == nil || errors.Is(err, ErrStopped) {
				t.Errorf("Wait with no stop, its context cancelled = %v, want the context's error", err)
			}
		})
	}
}

// TestAIMDStopGivesTheTurnBack: a turn taken at a fixed rate and left at
// the stop is given back, as rate.Limiter's Wait gives back one its
// context ended: the bucket is as it was before.
func TestAIMDStopGivesTheTurnBack(t *testing.T) {
	r := NewAIMD(0.0001, time.Now) // a turn every 10,000 s
	stop := make(chan struct{})
	if err := r.Wait(context.Background(), stop); err != nil {
		t.Fatalf("the first turn: %v", err)
	}
	before := r.lim.Tokens()
	done := make(chan error, 1)
	go func() { done <- r.Wait(context.Background(), stop) }()
	for r.lim.Tokens() > before-0.5 { // the second call has booked its turn
		time.Sleep(time.Millisecond)
	}
	close(stop)
	if err := <-done; !errors.Is(err, ErrStopped) {
		t.Fatalf("Wait at the stop = %v, want ErrStopped", err)
	}
	if got := r.lim.Tokens(); got < before-1e-3 {
		t.Errorf("tokens after the stop = %v, want %v as before the second turn: it was not given back", got, before)
	}
}

// TestWaitWithStopAllocatesNothing: the stop costs no allocation per
// call where nothing limits the calls (--rate 0, and --rate auto before
// the service shows a limit), the path of every call of a fast run (issue
// 27 item 7: the client's CPU per call).
func TestWaitWithStopAllocatesNothing(t *testing.T) {
	open, _ := newTestAdaptive(AutoConfig{})
	for n := autoOpening; n <= autoOpeningLast; n *= 2 { // the opening rounds, answered
		for range n {
			if err := open.Wait(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			open.Observe(Outcome{Start: autoEpoch, Status: 200, Latency: time.Millisecond})
		}
	}
	stop := make(chan struct{})
	for _, tc := range []struct {
		name string
		lim  waiter
	}{
		{"AIMD, no rate", NewAIMD(0, time.Now)},
		{"Adaptive, open", open},
	} {
		ctx := context.Background()
		if n := testing.AllocsPerRun(200, func() {
			if err := tc.lim.Wait(ctx, stop); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations a Wait with a stop, want 0", tc.name, n)
		}
	}
}

// TestWaitTakesATurnThereAtOnceAfterTheStop: a closed stop ends only a
// wait. A turn there at once is taken (the submitLead of a row whose
// createLead was on the wire at the stop completes it: nothing holds the
// stop for it); the next, which would wait, is not.
func TestWaitTakesATurnThereAtOnceAfterTheStop(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	open, _ := newTestAdaptive(AutoConfig{})
	held, _ := newTestAdaptive(AutoConfig{Start: 100})
	for _, tc := range []struct {
		name string
		lim  waiter
		next bool // a second turn would wait
	}{
		{"AIMD, no rate", NewAIMD(0, time.Now), false},
		{"AIMD, 1 call/s", NewAIMD(1, time.Now), true},
		{"Adaptive, open", open, false},
		{"Adaptive, 100 calls/s", held, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.lim.Wait(context.Background(), stop); err != nil {
				t.Fatalf("Wait for a turn there at once, after the stop = %v, want it taken", err)
			}
			if !tc.next {
				return
			}
			if err := tc.lim.Wait(context.Background(), stop); !errors.Is(err, ErrStopped) {
				t.Errorf("Wait for a turn that would wait, after the stop = %v, want ErrStopped", err)
			}
		})
	}
}
