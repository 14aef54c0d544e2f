package summary

import (
	"math"
	"testing"
	"time"
)

// TestTimelineDownsamples: a long run keeps at most MaxSamples samples,
// each of a power-of-two interval, and the counts add up to what was
// recorded; percentiles merge to the highest p95.
func TestTimelineDownsamples(t *testing.T) {
	tests := []struct {
		name      string
		seconds   int
		wantEvery float64
	}{
		{"short run keeps every second", 90, 1},
		{"exactly the bound halves once", MaxSamples, 2},
		{"eight hours", 8 * 3600, 64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewTimelineRecorder(time.Unix(0, 0))
			var answered, throttled int64
			for i := range tc.seconds {
				s := Sample{Seconds: 1, Answered: int64(i % 7), Status429: int64(i % 3), LatencyP50Ms: 10, LatencyP95Ms: float64(i % 100), InFlight: 4, ConcurrencyLimit: 8, RateLimit: 100}
				answered += s.Answered
				throttled += s.Status429
				r.Add(s)
			}
			r.Mark(time.Unix(5, 0), 20*time.Second, MarkOutage, "away")
			tl := r.Timeline()
			if len(tl.Samples) > MaxSamples {
				t.Errorf("%d samples, want at most %d", len(tl.Samples), MaxSamples)
			}
			if tl.IntervalSeconds != tc.wantEvery {
				t.Errorf("interval %v, want %v", tl.IntervalSeconds, tc.wantEvery)
			}
			var gotA, got429 int64
			var secs float64
			for i, s := range tl.Samples {
				gotA += s.Answered
				got429 += s.Status429
				secs += s.Seconds
				if want := float64(i) * tl.IntervalSeconds; s.T != want {
					t.Fatalf("sample %d at t=%v, want %v", i, s.T, want)
				}
				if s.InFlight != 4 || s.ConcurrencyLimit != 8 || s.RateLimit != 100 {
					t.Fatalf("sample %d gauges %+v, want the means 4, 8, 100", i, s)
				}
			}
			if gotA != answered || got429 != throttled || math.Abs(secs-float64(tc.seconds)) > 1e-6 {
				t.Errorf("samples add up to %d answered, %d 429s, %v s; want %d, %d, %d", gotA, got429, secs, answered, throttled, tc.seconds)
			}
			if tc.seconds >= 100 {
				if p95 := tl.Samples[0].LatencyP95Ms; tc.wantEvery > 1 && p95 < tl.IntervalSeconds-1 {
					t.Errorf("merged p95 %v, want the highest of the merged seconds", p95)
				}
			}
			if len(tl.Marks) != 1 || tl.Marks[0].At != 5 || tl.Marks[0].Seconds != 20 {
				t.Errorf("marks %+v, want the outage at 5 s for 20 s", tl.Marks)
			}
		})
	}
}
