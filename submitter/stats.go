package submitter

import "sync/atomic"

// stats are the Client's counters. Safe for concurrent use.
type stats struct {
	calls, attempts, retries, status429, status401 atomic.Int64
}
