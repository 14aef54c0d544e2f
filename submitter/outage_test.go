package submitter

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/bulkload/bulkload/internal/fakeclock"
	"github.com/bulkload/bulkload/leadsim"
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
		wg.Go(func() { _, calls[i], errs[i] = c.Create(context.Background(), simLead(from+i, false)) })
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
	_, call, err := env.c.Create(context.Background(), simLead(1, true))
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
	_, _, err := env.c.Create(context.Background(), simLead(1, false))
	if !IsOutage(err) || IsOutageStop(err) {
		t.Errorf("Create: %v, want an outage-class failure, not a wait", err)
	}
	if out := env.c.Outages(); len(out) != 0 {
		t.Errorf("outages %+v, want none", out)
	}
}
