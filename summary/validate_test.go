package summary

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// goodTimeline is a timeline as a recorder writes it: three seconds and an
// outage mark.
func goodTimeline(start time.Time) *Timeline {
	r := NewTimelineRecorder(start)
	for i := range 3 {
		r.Add(Sample{Seconds: 1, Answered: int64(10 + i), Status503: 1, InFlight: 4, ConcurrencyLimit: 8, LatencyP50Ms: 20, LatencyP95Ms: 40, RateLimit: 100})
	}
	r.Mark(start.Add(time.Second), 2*time.Second, MarkOutage, "away")
	return r.Timeline()
}

func TestSummaryValidate(t *testing.T) {
	code := func(n int) *int { return &n }
	tests := []struct {
		name string
		edit func(s *Summary)
		want string // "" for valid; else a part of the error
	}{
		{"as written", func(s *Summary) {}, ""},
		{"exit 130", func(s *Summary) { s.ExitCode = code(130) }, ""},
		{"largest bid", func(s *Summary) { s.BidCents = 99999999999999999 }, ""},
		{"exit 256", func(s *Summary) { s.ExitCode = code(256) }, "exitCode is 256"},
		{"exit -1", func(s *Summary) { s.ExitCode = code(-1) }, "exitCode is -1"},
		{"negative processed", func(s *Summary) { s.Processed = -1 }, "processed is -1"},
		{"negative bids", func(s *Summary) { s.BidCents = -5 }, "totalBidCents is -5"},
		{"huge calls", func(s *Summary) { s.APICalls = 1 << 60 }, "apiCalls"},
		{"rows named past the count", func(s *Summary) { s.KeptLeads = RowList{Count: 1, Rows: []int{1, 2}} }, "keptLeads.rows"},
		{"negative code count", func(s *Summary) { s.ResultCodes = []CodeCount{{Code: 1013, Count: -2}} }, "resultCodes[0]"},
		{"negative invalid column", func(s *Summary) { s.InvalidColumns = []InvalidColumn{{Count: -1}} }, "invalidColumns[0].count"},
		{"negative outage", func(s *Summary) { s.Outages = []Outage{{Seconds: -3}} }, "outages[0].seconds"},
		{"negative rate", func(s *Summary) { s.Rate = &Rate{CallsPerSecond: -1} }, "rate"},
		{"huge latency", func(s *Summary) { s.Concurrency = &Concurrency{MeanLatencyMs: 1e300} }, "concurrency"},
		{"sample before the start", func(s *Summary) { s.Timeline.Samples[0].T = -5 }, "timeline.samples[0].t is -5"},
		{"sample past any end", func(s *Summary) { s.Timeline.Samples[2].T = 1e300 }, "timeline.samples[2].t is 1e+300"},
		{"samples out of order", func(s *Summary) { s.Timeline.Samples[1].T = 5 }, "timeline.samples[2].t is 2"},
		{"negative seconds", func(s *Summary) { s.Timeline.Samples[1].Seconds = -1 }, "timeline.samples[1].seconds"},
		{"negative 503s", func(s *Summary) { s.Timeline.Samples[0].Status503 = -1 }, "timeline.samples[0].status503 is -1"},
		{"gauge past the bound", func(s *Summary) { s.Timeline.Samples[0].InFlight = 1e200 }, "timeline.samples[0].inFlight"},
		{"zero interval", func(s *Summary) { s.Timeline.IntervalSeconds = 0 }, "timeline.intervalSeconds is 0"},
		{"too many samples", func(s *Summary) { s.Timeline.Samples = make([]Sample, 2*MaxSamples+1) }, "timeline.samples: 1201"},
		{"mark at 1e300", func(s *Summary) { s.Timeline.Marks[0].At = 1e300 }, "timeline.marks[0]"},
		{"negative mark length", func(s *Summary) { s.Timeline.Marks[0].Seconds = -2 }, "timeline.marks[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Summary{Mode: "upload", RowsRead: 3, Timeline: goodTimeline(time.Unix(1e9, 0))}
			s.Processed = 3
			tc.edit(s)
			err := s.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tc.want != "" && (!errors.Is(err, ErrNotWritten) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate() = %v, want an ErrNotWritten naming %q", err, tc.want)
			}
		})
	}
}

// TestMergeTimelinesLeavesOutInvalid: a timeline no run writes (read back
// from a damaged file) is left out of the merge instead of indexing past
// its samples, whatever is wrong with it.
func TestMergeTimelinesLeavesOutInvalid(t *testing.T) {
	start := time.Unix(1e9, 0)
	for _, tc := range []struct {
		name string
		edit func(tl *Timeline)
	}{
		{"sample before the start", func(tl *Timeline) { tl.Samples[0].T = -5 }},
		{"sample past any end", func(tl *Timeline) { tl.Samples[0].T = 1e300 }},
		{"negative interval", func(tl *Timeline) { tl.IntervalSeconds = -1 }},
		{"infinite seconds", func(tl *Timeline) { tl.Samples[1].Seconds = math.Inf(1) }},
		{"NaN time", func(tl *Timeline) { tl.Samples[1].T = math.NaN() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := goodTimeline(start.Add(time.Second))
			tc.edit(bad)
			good := goodTimeline(start)
			got := MergeTimelines([]*Timeline{good, bad, nil})
			if got != good {
				t.Errorf("MergeTimelines(good, bad, nil) = %+v, want the good one alone", got)
			}
		})
	}
	// Starts 9,000 years apart: more than a time.Duration holds.
	far := goodTimeline(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
	old := goodTimeline(time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC))
	got := MergeTimelines([]*Timeline{far, old})
	if n := len(got.Samples); n == 0 || n > MaxSamples+1 {
		t.Fatalf("%d samples, want 1 to %d", n, MaxSamples+1)
	}
	if last := got.Samples[len(got.Samples)-1]; last.Answered != far.Samples[0].Answered+far.Samples[1].Answered+far.Samples[2].Answered {
		t.Errorf("the last sample holds %d answers, want the later timeline's %d", last.Answered, 33)
	}
}

// FuzzMergeTimelines merges timelines decoded from any JSON, as bulkload
// report merges those of the files beside results files: it never panics,
// keeps at most MaxSamples+1 samples of finite, non-negative figures, and
// every answer of every valid timeline is counted once.
func FuzzMergeTimelines(f *testing.F) {
	a, b := goodTimeline(time.Unix(1e9, 0)), goodTimeline(time.Unix(1e9+3600, 0))
	seed, _ := json.Marshal([]*Timeline{a, b})
	f.Add(seed)
	f.Add([]byte(`[{"start":"2026-01-01T00:00:00Z","intervalSeconds":1,"samples":[{"t":-5,"seconds":1,"answered":3}]},{"start":"2026-01-01T00:00:00Z","intervalSeconds":1,"samples":[{"t":0,"seconds":1}]}]`))
	f.Add([]byte(`[{"start":"0001-01-01T00:00:00Z","intervalSeconds":1e9,"samples":[{"t":1e300,"seconds":1e300}],"marks":[{"t":1e300}]},{"start":"9999-12-31T23:59:59Z","intervalSeconds":0.001,"samples":[{"t":0,"seconds":0.5,"answered":1}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tls []*Timeline
		if json.Unmarshal(data, &tls) != nil {
			return
		}
		var want int64
		valid := 0
		for _, tl := range tls {
			if tl != nil && tl.Validate() == nil {
				valid++
				for _, s := range tl.Samples {
					want += s.Answered
				}
			}
		}
		got := MergeTimelines(tls)
		if valid == 0 {
			if got != nil {
				t.Fatalf("MergeTimelines of no valid timeline = %+v, want nil", got)
			}
			return
		}
		if len(got.Samples) > MaxSamples+1 {
			t.Fatalf("%d samples, want at most %d", len(got.Samples), MaxSamples+1)
		}
		var answered int64
		for i, s := range got.Samples {
			for _, g := range []float64{s.T, s.Seconds, s.InFlight, s.ConcurrencyLimit, s.RateLimit, s.LatencyP50Ms, s.LatencyP95Ms} {
				if math.IsNaN(g) || math.IsInf(g, 0) || g < 0 {
					t.Fatalf("sample %d %+v: a figure is %v", i, s, g)
				}
			}
			answered += s.Answered
		}
		if answered != want {
			t.Fatalf("merged samples count %d answers, the timelines %d", answered, want)
		}
	})
}
