package submitter

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkload/bulkload/leadsim"
)

// TestSimStopEndsTheWaitToRetry: a call that waits out a Retry-After (5
// minutes) between its attempts leaves at once when the run stops
// (StopWaiting), interrupted with ErrStopped and no further attempt sent,
// whatever its context: it is not on the wire. That a call waits minutes is
// said once, at WARN. It is Ambiguous when its
// attempt may have reached the service (a proxy's 503 after the commit),
// and a call that gets its answer after the stop does not begin a wait.
func TestSimStopEndsTheWaitToRetry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		opts      leadsim.Options
		reject    string
		ambiguous bool
	}{
		{"503", leadsim.Options{Fail503: 1, Fail503RetryAfter: "300"}, leadsim.RejectFault503, false},
		{"proxy 503 after the commit", leadsim.Options{ProxyReset: 1, ProxyResetRetryAfter: "300"}, leadsim.RejectProxyReset, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			waiting := &lineWatch{want: "msg=retrying", seen: make(chan struct{})}
			env := startSim(t, tc.opts, func(c *Config) {
				c.Logger = slog.New(slog.NewTextHandler(waiting, &slog.HandlerOptions{Level: slog.LevelDebug}))
			})
			done := make(chan error, 1)
			go func() {
				_, _, err := env.c.Create(context.Background(), simLead(1, true), nil)
				done <- err
			}()
			select {
			case err := <-done:
				t.Fatalf("Create ended before its wait to retry: %v", err)
			case <-waiting.seen:
			}
			env.c.StopWaiting()
			err := <-done
			var ce *CallError
			if !errors.As(err, &ce) || !errors.Is(err, ErrStopped) || !IsInterrupted(err) || ce.Ambiguous != tc.ambiguous || ce.Attempts != 1 {
				t.Fatalf("Create = %#v, want interrupted by ErrStopped after 1 attempt, ambiguous %v", err, tc.ambiguous)
			}
			if !strings.Contains(err.Error(), "stopped while waiting to retry") {
				t.Errorf("error %q does not say it stopped while waiting to retry", err)
			}
			// A wait of minutes is not silent: said once, at WARN.
			if n := strings.Count(waiting.String(), "level=WARN msg=\"the service asks calls to wait before their next attempt (Retry-After)"); n != 1 {
				t.Errorf("the log said %d times that calls wait out a Retry-After of 5 minutes, want once:\n%s", n, waiting)
			}
			// The run has stopped: a createLead is not sent now, a
			// submitLead whose turn at the rate is there at once is (it
			// completes a row whose lead exists), and is not retried.
			if _, call, err := env.c.Create(context.Background(), simLead(2, true), nil); !errors.Is(err, ErrStopped) || !IsInterrupted(err) || call.Attempts != 0 {
				t.Errorf("Create after the stop = %v after %d attempts, want ErrStopped, interrupted, unsent", err, call.Attempts)
			}
			if n := env.srv.Stats().Rejections[tc.reject]; n != 1 {
				t.Errorf("%d createLeads answered, want 1: none sent after the stop", n)
			}
			if _, call, err := env.c.Submit(context.Background(), "0b8e1c9a-0000-4000-8000-000000000001", nil); !errors.Is(err, ErrStopped) || call.Attempts != 1 {
				t.Errorf("Submit after the stop = %v after %d attempts, want ErrStopped after its one attempt", err, call.Attempts)
			}
		})
	}
}

// lineWatch is a log's writer that closes seen at the first line holding
// want, and keeps every line.
type lineWatch struct {
	want string
	seen chan struct{}
	once sync.Once
	mu   sync.Mutex
	text strings.Builder
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.text.Write(p)
	w.mu.Unlock()
	if strings.Contains(string(p), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *lineWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.text.String()
}

// TestSimRetryAfterLongerThanTheCallWaits: a call asked to come back
// (Retry-After) later than it waits between its attempts
// (Config.MaxRetryWait), in any form, or whose waits would sum past that,
// ends at once with a *DeferredError, not retried; it is Ambiguous when
// its attempt may have reached the service. Calls so ended, in a row, stop
// the run as the service sending every caller away.
func TestSimRetryAfterLongerThanTheCallWaits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		opts          leadsim.Options
		bound         time.Duration // 0: the default
		attempts      int
		retryAfter    time.Duration // the DeferredError's; -1: about 2 h
		waited        time.Duration
		ambiguous     bool
		words, reject string
	}{
		{"seconds", leadsim.Options{Fail503: 1, Fail503RetryAfter: "7200"}, 0, 1, 2 * time.Hour, 0, false, "come back in 2h0m0s (Retry-After)", leadsim.RejectFault503},
		{"fractional", leadsim.Options{Fail503: 1, Fail503RetryAfter: "7200.5"}, 0, 1, 2*time.Hour + 500*time.Millisecond, 0, false, "come back in 2h0m0.5s", leadsim.RejectFault503},
		{"huge", leadsim.Options{Fail503: 1, Fail503RetryAfter: "99999999999999999999"}, 0, 1, maxRetryAfter, 0, false, "come back in a week or more", leadsim.RejectFault503},
		{"HTTP-date", leadsim.Options{Fail503: 1, Fail503RetryAfter: "date+2h"}, 0, 1, -1, 0, false, "(Retry-After), longer than the run waits for it (10m0s)", leadsim.RejectFault503},
		{"sane, over the bound", leadsim.Options{Fail503: 1, Fail503RetryAfter: "2"}, time.Second, 1, 2 * time.Second, 0, false, "come back in 2s (Retry-After), longer than the run waits for it (1s)", leadsim.RejectFault503},
		{"the sum over the bound", leadsim.Options{Fail503: 1, Fail503RetryAfter: "0.04"}, 100 * time.Millisecond, 3, 40 * time.Millisecond, 80 * time.Millisecond, false, "after 80ms waited already", leadsim.RejectFault503},
		{"proxy 503 after the commit", leadsim.Options{ProxyReset: 1, ProxyResetRetryAfter: "7200"}, 0, 1, 2 * time.Hour, 0, true, "come back in 2h0m0s", leadsim.RejectProxyReset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := startSim(t, tc.opts, func(c *Config) { c.MaxRetryWait = tc.bound })
			_, call, err := env.c.Create(context.Background(), simLead(1, true), nil)
			var ce *CallError
			var de *DeferredError
			if !errors.As(err, &ce) || !errors.As(err, &de) || !IsDeferred(err) || IsInterrupted(err) || IsOutage(err) || IsFatal(err) {
				t.Fatalf("Create = %v, want a *CallError wrapping a *DeferredError, nothing else", err)
			}
			if ce.Attempts != tc.attempts || call.Attempts != tc.attempts || ce.Ambiguous != tc.ambiguous || de.Waited != tc.waited {
				t.Errorf("Create = %d attempts (call %d), ambiguous %v, waited %v; want %d, %v, %v", ce.Attempts, call.Attempts, ce.Ambiguous, de.Waited, tc.attempts, tc.ambiguous, tc.waited)
			}
			if tc.retryAfter >= 0 && de.RetryAfter != tc.retryAfter || tc.retryAfter < 0 && (de.RetryAfter < time.Hour || de.RetryAfter > 3*time.Hour) {
				t.Errorf("RetryAfter = %v, want %v (-1: about 2 h)", de.RetryAfter, tc.retryAfter)
			}
			if !strings.Contains(err.Error(), tc.words) || !strings.Contains(err.Error(), "not retried") {
				t.Errorf("error %q: want it to say %q, and not retried", err, tc.words)
			}
			if n := env.srv.Stats().Rejections[tc.reject]; n != tc.attempts {
				t.Errorf("%d createLeads answered, want %d", n, tc.attempts)
			}
		})
	}
	t.Run("every call sent away", func(t *testing.T) {
		t.Parallel()
		env := startSim(t, leadsim.Options{Fail503: 1, Fail503RetryAfter: "7200"}, func(c *Config) { c.OutageThreshold = 3 })
		for i := range 3 {
			if err := env.c.WaitUp(context.Background()); err != nil {
				t.Fatalf("WaitUp before call %d = %v, want nil", i+1, err)
			}
			if _, _, err := env.c.Create(context.Background(), simLead(i, true), nil); !IsDeferred(err) {
				t.Fatalf("Create %d = %v, want deferred", i+1, err)
			}
		}
		var oe *OutageError
		if err := env.c.WaitUp(context.Background()); !errors.As(err, &oe) || !oe.Deferred || oe.Calls != 3 || !strings.Contains(err.Error(), "sends every call away") {
			t.Errorf("WaitUp after 3 deferred calls in a row = %v, want the run stopped: every call sent away", err)
		}
	})
}
