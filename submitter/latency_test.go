package submitter

import (
	"testing"
	"time"
)

// TestLatencyQuantile: percentiles read from the histogram fall within a
// bucket (19%) of the true ones, and an interval's histogram is the
// difference of two snapshots.
func TestLatencyQuantile(t *testing.T) {
	var c latencyCounters
	for i := 1; i <= 100; i++ {
		c.observe(time.Duration(i) * time.Millisecond) // 1..100 ms
	}
	before := c.load()
	for range 100 {
		c.observe(2 * time.Second)
	}
	tests := []struct {
		name string
		h    LatencyCounts
		q    float64
		want time.Duration
	}{
		{"median of 1..100 ms", before, 0.5, 50 * time.Millisecond},
		{"p95 of 1..100 ms", before, 0.95, 95 * time.Millisecond},
		{"the interval after: all 2 s", c.load().Sub(before), 0.5, 2 * time.Second},
		{"empty", LatencyCounts{}, 0.5, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.h.Quantile(tc.q)
			if lo, hi := float64(tc.want)/1.19, float64(tc.want)*1.19; float64(got) < lo || float64(got) > hi {
				t.Errorf("Quantile(%v) = %v, want %v within 19%%", tc.q, got, tc.want)
			}
		})
	}
}
