package submitter

import (
	"net/http"
	"sync/atomic"
)

// OpStats counts the calls of one operation and what each HTTP attempt
// of them came to. Every attempt lands in exactly one outcome, so the
// outcomes add up to the attempts; Retries are the attempts after each
// call's first.
type OpStats struct {
	Calls, Retries int64
	// OK: a 2xx reply without GraphQL errors.
	OK int64
	// GraphQLError: a reply with GraphQL errors (the service refused the
	// request), whatever its status below 500 but 429.
	GraphQLError int64
	// Throttled: HTTP 429.
	Throttled int64
	// ServerError: any 5xx, 503 included.
	ServerError int64
	// Network: no reply (refused, reset, DNS, TLS, timeout).
	Network int64
	// Other: any other reply (401, 403, other 4xx without GraphQL errors,
	// a body that is not GraphQL or over the size cap).
	Other int64
}

// Attempts is the number of HTTP attempts the outcomes count.
func (s OpStats) Attempts() int64 {
	return s.OK + s.GraphQLError + s.Throttled + s.ServerError + s.Network + s.Other
}

// attemptClass is the OpStats outcome of one attempt.
type attemptClass int

const (
	classOK attemptClass = iota
	classGraphQLError
	classThrottled
	classServerError
	classNetwork
	classOther
	numClasses
)

// classOf is the OpStats outcome of an attempt that ended with resp (and
// the GraphQL errors errs recorded) or with ae.
func classOf(resp *http.Response, errs []GraphQLError, ae *attemptError) attemptClass {
	switch {
	case ae == nil && resp != nil && len(errs) > 0:
		return classGraphQLError
	case ae == nil && resp != nil:
		return classOK
	case ae == nil || ae.status == 0:
		return classNetwork
	case ae.status == http.StatusTooManyRequests:
		return classThrottled
	case ae.status >= 500:
		return classServerError
	case len(ae.errs) > 0:
		return classGraphQLError
	}
	return classOther
}

// ops of the Client, indexing stats.ops.
const (
	opCreate = iota
	opSubmit
	opLead
	opPreflight
	opOther
	numOps
)

func opIndex(op string) int {
	switch op {
	case "createLead":
		return opCreate
	case "submitLead":
		return opSubmit
	case "lead":
		return opLead
	case "preflight":
		return opPreflight
	}
	return opOther
}

// opCounters are the counters behind one OpStats.
type opCounters struct {
	calls, retries atomic.Int64
	outcomes       [numClasses]atomic.Int64
}

func (c *opCounters) load() OpStats {
	o := &c.outcomes
	return OpStats{Calls: c.calls.Load(), Retries: c.retries.Load(),
		OK: o[classOK].Load(), GraphQLError: o[classGraphQLError].Load(), Throttled: o[classThrottled].Load(),
		ServerError: o[classServerError].Load(), Network: o[classNetwork].Load(), Other: o[classOther].Load()}
}

// stats are the Client's counters. Safe for concurrent use.
type stats struct {
	calls, attempts, retries, status429, status401, status503 atomic.Int64
	ops                                                       [numOps]opCounters
	// latency counts the answered attempts by how long they took.
	latency latencyCounters
	// answered counts the attempts the service answered (ok or GraphQL
	// errors): a throttled call that sees it move knows the service works.
	answered atomic.Int64
}
