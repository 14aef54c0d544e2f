package submitter

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/bulkload/bulkload/leadsim"
)

// TestSimStopEndsTheWaitToRetry: a call that waits out a Retry-After (5
// minutes) between its attempts leaves at once when the run stops
// (StopWaiting), interrupted with ErrStopped and no further attempt sent,
// whatever its context: it is not on the wire. It is Ambiguous when its
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
			// The run has stopped: a call answered now does not wait.
			if _, _, err := env.c.Create(context.Background(), simLead(2, true), nil); !errors.Is(err, ErrStopped) {
				t.Errorf("Create after the stop = %v, want ErrStopped after its first answer", err)
			}
			if n := env.srv.Stats().Rejections[tc.reject]; n != 2 {
				t.Errorf("%d createLeads answered, want 2: one attempt each, none after the stop", n)
			}
		})
	}
}

// lineWatch is a log's writer that closes seen at the first line holding
// want.
type lineWatch struct {
	want string
	seen chan struct{}
	once sync.Once
}

func (w *lineWatch) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}
