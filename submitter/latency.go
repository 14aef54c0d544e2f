package submitter

import (
	"math"
	"sync/atomic"
	"time"
)

// latencyBuckets is the number of buckets of a LatencyCounts: bucket i
// holds latencies up to latencyBound(i), a quarter octave apart from 1 ms
// to about 2 minutes; the last holds everything longer.
const latencyBuckets = 70

// latencyBound is the upper bound of bucket i.
func latencyBound(i int) time.Duration {
	return time.Duration(float64(time.Millisecond) * math.Exp2(float64(i)/4))
}

// latencyBucket is the bucket of d.
func latencyBucket(d time.Duration) int {
	if d <= time.Millisecond {
		return 0
	}
	i := int(math.Ceil(4 * math.Log2(float64(d)/float64(time.Millisecond))))
	return min(i, latencyBuckets-1)
}

// LatencyCounts is a histogram of the latency of answered attempts, since
// New. Subtract two snapshots (Sub) for an interval's, and read its
// percentiles with Quantile; a bucket is 19% wide, which bounds the error.
type LatencyCounts [latencyBuckets]int64

// Sub returns c minus an earlier snapshot.
func (c LatencyCounts) Sub(earlier LatencyCounts) LatencyCounts {
	for i := range c {
		c[i] -= earlier[i]
	}
	return c
}

// Quantile returns the q-quantile (0 < q <= 1) of the latencies counted,
// interpolated within its bucket; 0 when none are.
func (c LatencyCounts) Quantile(q float64) time.Duration {
	var total int64
	for _, n := range c {
		total += n
	}
	if total == 0 {
		return 0
	}
	want := q * float64(total)
	var cum float64
	for i, n := range c {
		if n == 0 {
			continue
		}
		if cum+float64(n) >= want {
			lo := 0.0
			if i > 0 {
				lo = float64(latencyBound(i - 1))
			}
			hi := float64(latencyBound(i))
			return time.Duration(lo + (hi-lo)*(want-cum)/float64(n))
		}
		cum += float64(n)
	}
	return latencyBound(latencyBuckets - 1)
}

// latencyCounters are the counters behind a LatencyCounts.
type latencyCounters [latencyBuckets]atomic.Int64

func (c *latencyCounters) observe(d time.Duration) { c[latencyBucket(d)].Add(1) }

func (c *latencyCounters) load() LatencyCounts {
	var out LatencyCounts
	for i := range c {
		out[i] = c[i].Load()
	}
	return out
}
