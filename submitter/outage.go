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
	// DefaultMaxRetryWait is how long one call may wait between its
	// attempts in all (Config.MaxRetryWait): a Retry-After longer than
	// that, or one that would take the call's waits past it, is not waited
	// out. It is the outage wait's: a service that asks a call to come
	// back later than the run would wait for it if it were away is, for
	// that call, away longer than the run waits.
	DefaultMaxRetryWait = DefaultOutageWait
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
	// out. Deferred reports that those calls were each asked to come
	// back later than the run waits (IsDeferred), not failed.
	Calls    int
	Last     error
	Deferred bool
}

func (e *OutageError) Error() string {
	o := e.Outage
	if e.Calls > 0 && e.Deferred {
		return fmt.Sprintf("the service sends every call away: %d calls in a row were asked to come back later than the run waits for it (the last: %v)", e.Calls, e.Last)
	}
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

// DeferredError is a call's error (in a *CallError's Err) when the service
// asked it to come back (Retry-After) later than the call waits between
// its attempts (Config.MaxRetryWait), or when its backoff would take it
// past that: the call ends at once, not retried, and its row is not the
// service's refusal nor a failure; the caller leaves it for a later run
// (unless an earlier attempt may have reached the service: Ambiguous).
type DeferredError struct {
	// RetryAfter is the service's Retry-After (at most a week: one beyond
	// reads as a week); 0 when the backoff alone would exceed Bound.
	RetryAfter time.Duration
	// Waited is what the call had waited between its attempts before.
	Waited time.Duration
	// Bound is Config.MaxRetryWait.
	Bound time.Duration
}

func (e *DeferredError) Error() string {
	if e.RetryAfter == 0 {
		return fmt.Sprintf("its retries' backoff would take its waits past the %s the run waits for the service", e.Bound)
	}
	ra := e.RetryAfter.String()
	if e.RetryAfter >= maxRetryAfter {
		ra = "a week or more"
	}
	if e.Waited > 0 {
		return fmt.Sprintf("the service asked to come back in %s (Retry-After) after %s waited already, longer than the run waits for it (%s)", ra, e.Waited.Round(time.Millisecond), e.Bound)
	}
	return fmt.Sprintf("the service asked to come back in %s (Retry-After), longer than the run waits for it (%s)", ra, e.Bound)
}

// IsDeferred reports whether err is (or wraps) a *DeferredError: the call
// was not retried because the service asked it to come back later than
// the run waits.
func IsDeferred(err error) bool {
	var de *DeferredError
	return errors.As(err, &de)
}
