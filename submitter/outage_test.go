package submitter

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkload/bulkload/internal/fakeclock"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/pace"
)

// waitOutage waits until the client reports an outage going on.
func waitOutage(t *testing.T, c *Client) Outage {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if o, ok := c.CurrentOutage(); ok {
			return o
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no outage began")
	return Outage{}
}

// createAll sends leads from..from+n-1 at once and returns their errors.
func createAll(c *Client, from, n int) ([]Call, []error) {
	calls, errs := make([]Call, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, calls[i], errs[i] = c.Create(context.Background(), simLead(from+i, false), nil) })
	}
	wg.Wait()
	return calls, errs
}

// TestSimOutageWaitedOut: during an outage of the lead endpoint (502 with
// an HTML page) or of the identity provider (503), calls wait without
// using up their attempts, and go on once a probe is answered; the outage
// is recorded with its cause.
func TestSimOutageWaitedOut(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  leadsim.Options
		idp   bool
		cause string
	}{
		{"lead endpoint", leadsim.Options{Outage: leadsim.Window{Start: time.Hour, Dur: time.Hour}}, false, "502 Bad Gateway"},
		{"identity provider", leadsim.Options{TokenOutage: leadsim.Window{Start: time.Hour, Dur: time.Hour}}, true, "503 temporarily_unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeclock.Offset{} // opens and closes leadsim's outage windows at will
			tc.opts.Now, tc.opts.TokenLifetime = clock.Now, 30*time.Minute
			env := startSim(t, tc.opts, func(c *Config) {
				c.Now, c.MaxAttempts, c.OutageThreshold, c.OutageWait = clock.Now, 2, 3, 10*time.Hour // the clock jumps an hour
			})
			if err := env.c.Preflight(context.Background()); err != nil {
				t.Fatal(err)
			}
			clock.Set(time.Hour) // the outage begins; the token has expired
			done := make(chan []error, 1)
			go func() { _, errs := createAll(env.c, 0, 4); done <- errs }()
			o := waitOutage(t, env.c)
			if o.IdentityProvider != tc.idp || o.Cause != tc.cause {
				t.Errorf("outage %+v, want identity provider %v, cause %q", o, tc.idp, tc.cause)
			}
			time.Sleep(50 * time.Millisecond) // rows wait, attempts are not used up
			clock.Set(2 * time.Hour)
			for i, err := range <-done {
				if err != nil {
					t.Errorf("lead %d: %v, want it created once the outage ended", i, err)
				}
			}
			out := env.c.Outages()
			if len(out) != 1 || out[0].End.IsZero() || out[0].GaveUp {
				t.Errorf("outages %+v, want one, waited out", out)
			}
			if st := env.c.Stats(); st.Outages != 1 || st.OutageWaiting {
				t.Errorf("stats: outages %d, waiting %v; want 1, false", st.Outages, st.OutageWaiting)
			}
			if err := env.c.WaitUp(context.Background()); err != nil {
				t.Errorf("WaitUp after the outage: %v", err)
			}
		})
	}
}

// TestSimOutageTooLong: an outage longer than OutageWait ends every call
// waiting for it, and every later wait, with an *OutageError.
func TestSimOutageTooLong(t *testing.T) {
	clock := &fakeclock.Offset{} // opens and closes leadsim's outage windows at will
	env := startSim(t, leadsim.Options{Now: clock.Now, Outage: leadsim.Window{Start: time.Hour, Dur: time.Hour}}, func(c *Config) {
		c.OutageThreshold, c.OutageWait = 2, 200*time.Millisecond
	})
	if err := env.c.Preflight(context.Background()); err != nil {
		t.Fatal(err)
	}
	clock.Set(time.Hour)
	_, errs := createAll(env.c, 0, 3)
	for i, err := range errs {
		var oe *OutageError
		if !errors.As(err, &oe) || oe.Stopped || oe.Wait != 200*time.Millisecond {
			t.Errorf("lead %d: %v, want an *OutageError: longer than the wait", i, err)
		}
	}
	if err := env.c.WaitUp(context.Background()); !IsOutageStop(err) {
		t.Errorf("WaitUp after giving up: %v, want the *OutageError", err)
	}
	if out := env.c.Outages(); len(out) != 1 || !out[0].GaveUp {
		t.Errorf("outages %+v, want one that the run gave up on", out)
	}
}

// TestSimHangIsAnOutage: a service that stops answering is an outage as
// soon as one attempt got no reply within --timeout while nothing else was
// answered; the call is ambiguous (its request may have been processed).
func TestSimHangIsAnOutage(t *testing.T) {
	env := startSim(t, leadsim.Options{HangAfter: 1}, func(c *Config) {
		c.CallTimeout, c.OutageWait = 300*time.Millisecond, 400*time.Millisecond
	})
	t.Cleanup(env.srv.Heal)
	if err := env.c.Preflight(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, call, err := env.c.Create(context.Background(), simLead(1, true), nil)
	if !IsOutageStop(err) || !call.Ambiguous || call.Attempts != 1 {
		t.Fatalf("Create during a hang: %v, %+v; want an *OutageError after one ambiguous attempt", err, call)
	}
	if out := env.c.Outages(); len(out) != 1 || out[0].Cause != "no reply within 300ms" {
		t.Errorf("outages %+v, want one: no reply within 300ms", out)
	}
}

// TestSimNoOutageBeforeTheFirstAnswer: before the service has answered
// once, a failure is not waited out: a wrong endpoint fails fast.
func TestSimNoOutageBeforeTheFirstAnswer(t *testing.T) {
	env := startSim(t, leadsim.Options{}, func(c *Config) {
		c.Endpoint, c.MaxAttempts, c.OutageWait = "http://127.0.0.1:1/graphql", 2, time.Hour
	})
	if err := env.c.Preflight(context.Background()); !IsUnreachable(err) {
		t.Fatalf("Preflight: %v, want unreachable", err)
	}
	_, _, err := env.c.Create(context.Background(), simLead(1, false), nil)
	if !IsOutage(err) || IsOutageStop(err) {
		t.Errorf("Create: %v, want an outage-class failure, not a wait", err)
	}
	if out := env.c.Outages(); len(out) != 0 {
		t.Errorf("outages %+v, want none", out)
	}
}

// TestGateNoticesAHang: the gate's rules for timeouts, on a fake clock. An
// attempt is a step: sent (on the wire), then timed out, or answered. A
// hang is declared at once when more than half of the most attempts on the
// wire since the last answer timed out (at least two): whatever the limit,
// one timeout's span after the hang. Fewer are silent (a probe decides) or
// nothing; an answer starts the count over. Timeouts while nothing was
// answered since the attempt was sent, or since the previous timeout, are
// suspect: they teach the limit on calls in flight nothing.
func TestGateNoticesAHang(t *testing.T) {
	type step struct {
		op   string // "send" (n attempts), "timeout" (the n oldest on the wire), "answer" (the oldest)
		n    int
		down bool // after a timeout: the outage is declared
	}
	for _, tc := range []struct {
		name    string
		steps   []step
		silent  bool // the last timeout reports silent
		suspect []bool
	}{
		{"8 in flight, 5 time out", []step{{"send", 8, false}, {"timeout", 4, false}, {"timeout", 1, true}}, false,
			[]bool{true, true, true, true, true}},
		{"8 in flight, refilled as they time out", []step{{"send", 8, false}, {"timeout", 1, false}, {"send", 1, false}, {"timeout", 1, false}, {"send", 1, false},
			{"timeout", 1, false}, {"send", 1, false}, {"timeout", 1, false}, {"send", 1, false}, {"timeout", 1, true}}, false, nil},
		{"an answer starts over", []step{{"send", 8, false}, {"timeout", 4, false}, {"answer", 1, false}, {"send", 4, false}, {"timeout", 3, false}}, false, nil},
		{"one in flight: a probe decides", []step{{"send", 1, false}, {"timeout", 1, false}}, true, []bool{true}},
		{"two in flight", []step{{"send", 2, false}, {"timeout", 2, true}}, false, nil},
		{"answers between timeouts: an overload, not a hang", []step{{"send", 1, false}, {"send", 8, false}, {"timeout", 1, false}, {"answer", 1, false},
			{"timeout", 1, false}, {"answer", 1, false}, {"timeout", 1, false}}, false, []bool{true, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := fakeclock.New(time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC))
			g := newGate(context.Background(), gateConfig{threshold: 0, wait: time.Hour, probeBase: time.Hour, probeMax: time.Hour,
				now: clock.Now, log: slog.New(slog.DiscardHandler)}, func(context.Context) (bool, string, error) {
				return false, "", errors.New("no reply")
			})
			t.Cleanup(g.close)
			g.answered(clock.Now()) // the preflight: armed
			var wire []time.Time    // sent times of the attempts on the wire, oldest first
			var silent bool
			var suspect []bool
			for i, st := range tc.steps {
				clock.Advance(time.Millisecond)
				switch st.op {
				case "send":
					for range st.n {
						g.sending()
						wire = append(wire, clock.Now())
					}
				case "answer":
					g.ended()
					g.answered(wire[0])
					wire = wire[1:]
				case "timeout":
					for range st.n {
						sent := wire[0]
						wire = wire[1:]
						g.ended()
						suspect = append(suspect, g.suspects(sent))
						var down bool
						down, silent = g.failed("no reply within 5s", true, sent)
						if down != g.inOutage() {
							t.Fatalf("step %d: failed says down %v, the gate %v", i, down, g.inOutage())
						}
					}
				}
				if g.inOutage() != st.down {
					t.Fatalf("step %d (%s %d): in an outage %v, want %v", i, st.op, st.n, g.inOutage(), st.down)
				}
				if st.down && !g.parked() {
					t.Errorf("step %d: the outage does not park the attempts", i)
				}
			}
			if silent != tc.silent {
				t.Errorf("the last timeout silent = %v, want %v", silent, tc.silent)
			}
			if tc.suspect != nil && !slices.Equal(suspect, tc.suspect) {
				t.Errorf("timeouts suspect %v, want %v", suspect, tc.suspect)
			}
		})
	}
}

// hangClient starts a simulator that hangs after the preflight (held or
// unread) and a client with limit (0: auto, starting at 8) that waits
// outageWait, with a short timeout and probes that come only after the
// wait (so that every request the hang holds is a call's attempt).
func hangClient(t *testing.T, mode leadsim.HangMode, limit int) *simEnv {
	t.Helper()
	env := startSim(t, leadsim.Options{HangAfter: 1, HangMode: mode}, func(c *Config) {
		c.CallTimeout, c.OutageWait = 300*time.Millisecond, 500*time.Millisecond
		c.BackoffBase, c.BackoffMax = 10*time.Second, 10*time.Second
		c.Concurrency, c.ConcurrencyAuto = limit, limit == 0
	})
	t.Cleanup(env.srv.Heal)
	if err := env.c.Preflight(context.Background()); err != nil {
		t.Fatal(err)
	}
	return env
}

// TestSimHangNoticedInOneTimeout: 64 calls through a limit of 8 (fixed, or
// auto starting there) meet a service that hangs. The first wave of
// attempts times out and the outage is declared then: the calls waiting
// for a place are parked, not sent into the hang, and when the run stops
// waiting every call ends with an *OutageError, none failed. The limit is
// not cut for the hang's timeouts. Before, each wave of timeouts cut the
// limit and the probe waited for a place behind the queued calls: the
// hang held every call's attempts, wave after wave.
func TestSimHangNoticedInOneTimeout(t *testing.T) {
	for _, tc := range []struct {
		mode  leadsim.HangMode
		limit int
	}{{leadsim.HangHeld, 8}, {leadsim.HangUnread, 8}, {leadsim.HangHeld, 0}, {leadsim.HangHeld, 1}} {
		t.Run(fmt.Sprintf("%s limit %d", tc.mode, tc.limit), func(t *testing.T) {
			// The cases side by side, each against a simulator of its
			// own: they wait out a hang, and the test, serial, runs
			// alone.
			t.Parallel()
			env := hangClient(t, tc.mode, tc.limit)
			_, errs := createAll(env.c, 0, 64)
			for i, err := range errs {
				if !IsOutageStop(err) {
					t.Errorf("lead %d: %v, want an *OutageError (parked, or caught on the wire)", i, err)
				}
			}
			limit := cmp.Or(tc.limit, pace.DefaultStartConcurrency)
			// The first wave (the limit), and the calls that took the places
			// of its timeouts before the majority of it had timed out (half
			// of it, a few more as the timeouts race the declaration); at a
			// limit of 1, the probe that confirms the lone timeout and the
			// call that took its place meanwhile.
			if held := env.srv.Stats().Rejections[leadsim.RejectHung]; held > 2*limit+1 {
				t.Errorf("the hang held %d attempts, want at most the first wave and its refills (%d)", held, 2*limit+1)
			}
			if out := env.c.Outages(); len(out) != 1 || out[0].Cause != "no reply within 300ms" || !out[0].GaveUp {
				t.Errorf("outages %+v, want one, no reply within 300ms, given up", out)
			}
			if s := env.c.Stats().Concurrency; s.Limit != limit || s.PressureCuts != 0 {
				t.Errorf("limit %d after %d back-pressure cuts, want %d: a hang's timeouts are no capacity", s.Limit, s.PressureCuts, limit)
			}
		})
	}
}

// TestGateCallsInARow: the one outage detector's rule of calls (the
// engine's circuit breaker before): calls of rows that end failing as
// outages count, any other end of a call starts over, a call cut off by
// its context does neither; threshold of them in a row stop the run,
// every wait then returning an *OutageError with the count and the last
// failure. 429s and 503s are throttling, never outages.
func TestGateCallsInARow(t *testing.T) {
	outage := &CallError{Op: "createLead", Message: "send request: connection refused", Retryable: true, Outage: true, Attempts: 5}
	throttled := &CallError{Op: "createLead", Status: 503, Message: "HTTP 503", Retryable: true, Attempts: 5}
	interrupted := &CallError{Op: "createLead", Message: "interrupted: context canceled", Interrupted: true, Err: context.Canceled}
	for _, tc := range []struct {
		name      string
		threshold int
		// end is the error of the n-th call (1-based), or nil.
		end   func(n int) error
		stops int // the call after which waits fail; 0: never (of 40)
	}{
		{"every call an outage: stops at the threshold", 5, func(int) error { return outage }, 5},
		{"a 503 storm is throttling: never", 5, func(int) error { return throttled }, 0},
		{"an answer between outages starts over", 5, func(n int) error {
			if n%4 == 0 {
				return nil
			}
			return outage
		}, 0},
		{"interrupted calls neither count nor start over", 5, func(n int) error {
			if n%2 == 0 {
				return interrupted
			}
			return outage
		}, 9},
		{"no count", 0, func(int) error { return outage }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := fakeclock.New(time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC))
			g := newGate(context.Background(), gateConfig{threshold: tc.threshold, wait: time.Hour, probeBase: time.Hour, probeMax: time.Hour,
				now: clock.Now, log: slog.New(slog.DiscardHandler)}, func(context.Context) (bool, string, error) { return false, "", nil })
			t.Cleanup(g.close)
			g.answered(clock.Now()) // the preflight: armed
			stopped := 0
			for n := 1; n <= 40 && stopped == 0; n++ {
				g.callEnded(tc.end(n))
				if err := g.wait(t.Context()); err != nil {
					stopped = n
					var oe *OutageError
					if !errors.As(err, &oe) || oe.Calls != tc.threshold || oe.Last != outage || oe.Stopped || !IsOutageStop(err) {
						t.Errorf("wait after call %d = %v, want an OutageError of %d calls in a row, the last the outage", n, err, tc.threshold)
					}
				}
			}
			if stopped != tc.stops {
				t.Errorf("waits fail after call %d, want %d (0: never)", stopped, tc.stops)
			}
			if len(g.outages()) != 0 {
				t.Errorf("outages %v, want none waited out", g.outages())
			}
		})
	}
}

// TestFakeCallsInARowStopTheRun: a service that answers the probe's query
// but fails every createLead as if it were gone (a 502 page): each call
// waits out the outage its failures begin, then fails as an outage, while
// the probes find the service answering; the third such call in a row
// stops the run (OutageThreshold 3), and a call sent later is not
// parked: the gate says so to the next WaitUp.
func TestFakeCallsInARowStopTheRun(t *testing.T) {
	f := &fakeService{graphql: func(n int64, w http.ResponseWriter, r *http.Request, auth string) {
		if n == 1 || r.ContentLength < 60 { // the preflight and the probes: { __typename }
			writeJSON(w, 200, `{"data":{"__typename":"Query"}}`)
			return
		}
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html>502 Bad Gateway</html>")
	}}
	c, _ := newFakeClient(t, f, func(cfg *Config) { cfg.MaxAttempts, cfg.OutageThreshold, cfg.OutageWait = 1, 3, time.Minute })
	t.Cleanup(c.Close)
	if err := c.Preflight(context.Background()); err != nil {
		t.Fatalf("Preflight() = %v", err)
	}
	for i := 1; i <= 3; i++ {
		if err := c.WaitUp(context.Background()); err != nil {
			t.Fatalf("WaitUp before call %d = %v, want nil", i, err)
		}
		if _, _, err := c.Create(context.Background(), testInput(), nil); !IsOutage(err) {
			t.Fatalf("call %d = %v, want an outage-class failure", i, err)
		}
	}
	var oe *OutageError
	if err := c.WaitUp(context.Background()); !errors.As(err, &oe) || oe.Calls != 3 || !IsOutage(oe.Last) || !strings.Contains(err.Error(), "3 calls in a row failed as if the service were gone") {
		t.Fatalf("WaitUp after 3 calls = %v, want an OutageError of 3 calls in a row", err)
	}
}

// TestGateLateAnswerDoesNotEndTheOutage: an outage begun by a probe that
// got no answer dates from its first failure (the attempt sent at a); an
// attempt sent after a but served before the service went away (the
// network does not keep the order of two connections) answers late. That
// answer says nothing about the service now: the outage goes on, and
// only an answer to an attempt sent once it was declared ends it. Before,
// such an answer ended it at once: the rows then spent their attempts on
// the gateway's 502s and one ended failed (cmd/bulkload's
// TestUploadOutageLongerThanWait: 'row 5 ended failed (createLead: HTTP
// 502 Bad Gateway after 6 attempts)', and an outage of 0.05 s before the
// one that stopped the run).
func TestGateLateAnswerDoesNotEndTheOutage(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 11, 27, 0, 48, 0, 0, time.UTC))
	g := newGate(context.Background(), gateConfig{threshold: 20, wait: time.Hour, probeBase: time.Hour, probeMax: time.Hour,
		now: clock.Now, log: slog.New(slog.DiscardHandler)}, func(context.Context) (bool, string, error) {
		return false, "", errors.New("502 Bad Gateway")
	})
	t.Cleanup(g.close)
	g.answered(clock.Now()) // the preflight: armed
	clock.Advance(time.Millisecond)
	a := clock.Now() // answered 502 by the gateway
	clock.Advance(time.Millisecond)
	b := clock.Now() // served just before the service went away
	clock.Advance(time.Millisecond)
	if down, _ := g.failed("502 Bad Gateway", false, a); down {
		t.Fatal("one 502 began an outage without its probe")
	}
	if !g.confirm(context.Background(), "502 Bad Gateway", a) {
		t.Fatal("a probe that got no answer began no outage")
	}
	clock.Advance(time.Millisecond)
	g.answered(b)
	if !g.inOutage() {
		t.Fatal("the late answer to an attempt sent before the outage was declared ended it")
	}
	if out := g.outages(); len(out) != 1 || !out[0].Start.Equal(a) {
		t.Errorf("outages %+v, want one from %v, the first failure", out, a)
	}
	clock.Advance(time.Millisecond)
	g.answered(clock.Now())
	if g.inOutage() {
		t.Error("an answer to an attempt sent during the outage did not end it")
	}
}

// TestReorderedAnswerAtAnOutageIsNoAnswer: the service goes away between
// two calls' arrivals, the later-sent one having arrived first: call B,
// sent after call A's first attempt, is answered; A's attempt, and every
// request after it, meets the gateway's 502. A's last attempt fails while
// nothing sent after it was answered: a probe decides, and the run waits
// out the outage (here: stops waiting, OutageWait being short) instead of
// failing the row. Before, B's answer counted as 'answered since A's
// trouble began' for all of A's attempts, no probe was sent, and A ended
// 'HTTP 502 Bad Gateway after 5 attempts' in an outage (cmd/bulkload's
// TestUploadOutageLongerThanWait, about 1 run in 25 at --concurrency 2).
func TestReorderedAnswerAtAnOutageIsNoAnswer(t *testing.T) {
	bArrived := make(chan struct{})
	var down atomic.Bool
	f := &fakeService{graphql: func(n int64, w http.ResponseWriter, r *http.Request, auth string) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case bytes.Contains(body, []byte("__typename")) && !down.Load():
			writeJSON(w, 200, `{"data":{"__typename":"Query"}}`)
		case bytes.Contains(body, []byte(`"B"`)) && !down.Load():
			close(bArrived)
			writeJSON(w, 200, okCreate)
		case bytes.Contains(body, []byte(`"A"`)) && !down.Load():
			<-bArrived
			down.Store(true) // the service goes away as A's attempt arrives
			fallthrough
		default:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<html><body><h1>502 Bad Gateway</h1></body></html>")
		}
	}}
	c, _ := newFakeClient(t, f, func(cfg *Config) {
		cfg.MaxAttempts, cfg.OutageThreshold, cfg.OutageWait = 3, 100, 50*time.Millisecond
	})
	if err := c.Preflight(context.Background()); err != nil {
		t.Fatalf("Preflight() = %v", err)
	}
	a, b := testInput(), testInput()
	a.LeadID, b.LeadID = "A", "B"
	errA := make(chan error, 1)
	go func() {
		_, _, err := c.Create(context.Background(), a, nil)
		errA <- err
	}()
	// B goes out after A's first attempt (A's request waits at the service
	// for B's), and is answered first.
	for f.calls.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	if _, _, err := c.Create(context.Background(), b, nil); err != nil {
		t.Fatalf("Create(B) = %v, want its answer", err)
	}
	if err := <-errA; !IsOutageStop(err) {
		t.Errorf("Create(A) = %v, want an *OutageError: the service went away", err)
	}
	if out := c.Outages(); len(out) != 1 || !out[0].GaveUp {
		t.Errorf("outages %+v, want one, given up", out)
	}
}
