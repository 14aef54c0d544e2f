package submitter

import (
	"errors"
	"fmt"
	"time"
)

// Defaults of the outage settings of Config.
const (
	// DefaultOutageWait is how long a run waits for a service or identity
	// provider that went away before it stops (exit 4, the rest left for
	// --resume). A restart or a rolling deploy is over in seconds, a
	// database or region failover in one to five minutes; ten minutes
	// rides out the longest of those twice over. An outage longer than
	// that is an incident a person should hear of, and waiting on would
	// only hold a night's window (and the results file's lock) while
	// nothing moves.
	DefaultOutageWait = 10 * time.Minute
	// DefaultOutageThreshold is how many attempts in a row, across all
	// workers, may fail as outages (OutageClass) before the run calls it
	// an outage without another sign.
	DefaultOutageThreshold = 20
	// defaultProbeMax bounds the wait between two probes of an outage, so
	// that the run goes on within seconds of the service's return; one
	// token request or one `{ __typename }` every few seconds is nothing
	// to a recovering service.
	defaultProbeMax = 5 * time.Second
)

// Outage is one span of a run in which the lead endpoint or its identity
// provider was away: no new rows were taken, and the rows in flight waited
// without using up their attempts.
type Outage struct {
	// Start is when the failure that began it happened (the first of the
	// failures in a row, or the token request that failed).
	Start time.Time
	// End is when a probe (or any call) was answered again, or when the run
	// stopped waiting; zero while it lasts.
	End time.Time
	// IdentityProvider reports an outage of the token endpoint; false: of
	// the lead endpoint.
	IdentityProvider bool
	// Cause is the first failure, short: "503 temporarily_unavailable",
	// "502 Bad Gateway", "no reply within 2s", "connection refused".
	Cause string
	// GaveUp reports that the run stopped in this outage: it lasted longer
	// than the outage wait, or the run was stopped while it waited.
	GaveUp bool
}

// Who names what was away: "the identity provider" or "the service".
func (o Outage) Who() string {
	if o.IdentityProvider {
		return "the identity provider"
	}
	return "the service"
}

// Length is how long the outage lasted, or has lasted by now while it goes
// on.
func (o Outage) Length(now time.Time) time.Duration {
	if !o.End.IsZero() {
		return o.End.Sub(o.Start)
	}
	return now.Sub(o.Start)
}

// Waiting is the progress display's sentence while the run waits: "waiting
// for the identity provider (503 temporarily_unavailable since 02:31:07,
// 14 s)".
func (o Outage) Waiting(now time.Time) string {
	return fmt.Sprintf("waiting for %s (%s since %s, %d s)", o.Who(), o.Cause, o.Start.Format(time.TimeOnly), int(o.Length(now).Seconds()))
}

// OutageError is a call's error (in a *CallError's Err), and WaitUp's,
// when the run stopped waiting for the service: an outage lasted longer
// than the outage wait, the run was stopped (StopWaiting) while the call
// waited, or Calls calls in a row failed as if the service were gone while
// it answered the probes (see Config.OutageThreshold). The call's row was
// not refused by the service: the run leaves it for --resume.
type OutageError struct {
	Outage Outage
	// Wait is the outage wait that ran out; 0 when Stopped or Calls.
	Wait time.Duration
	// Stopped reports that the run stopped for another reason (a signal)
	// while the call waited.
	Stopped bool
	// Calls is the number of calls in a row that failed as outages
	// (IsOutage), Last the last one's error, when that stopped the run; 0
	// otherwise. Outage is then the failures' span, not an outage waited
	// out.
	Calls int
	Last  error
}

func (e *OutageError) Error() string {
	o := e.Outage
	if e.Calls > 0 {
		return fmt.Sprintf("%d calls in a row failed as if the service were gone (the last: %v)", e.Calls, e.Last)
	}
	if e.Stopped {
		return fmt.Sprintf("the run stopped while %s was away (%s since %s)", o.Who(), o.Cause, o.Start.Format(time.TimeOnly))
	}
	return fmt.Sprintf("%s has been away since %s (%s), longer than the outage wait of %s", o.Who(), o.Start.Format(time.TimeOnly), o.Cause, e.Wait)
}

// IsOutageStop reports whether err is (or wraps) an *OutageError: the row
// was caught in an outage the run stopped waiting out, not refused.
func IsOutageStop(err error) bool {
	var oe *OutageError
	return errors.As(err, &oe)
}
