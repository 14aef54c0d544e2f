package htmlreport

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/summary"
)

func TestYTicks(t *testing.T) {
	for _, tc := range []struct {
		vmax float64
		want string
	}{
		{0, "0 0.2 0.4 0.6 0.8 1.0"}, // nothing to draw: 0 to 1
		{1, "0 0.2 0.4 0.6 0.8 1.0"},
		{2.3, "0 0.5 1.0 1.5 2.0 2.5"},
		{3, "0 1 2 3"},
		{4.7, "0 1 2 3 4 5"},
		{47.9, "0 10 20 30 40 50"},
		{81, "0 20 40 60 80 100"},
		{1234, "0 500 1,000 1,500"},
		{0.03, "0 0.01 0.02 0.03"},
		{math.NaN(), "0 0.2 0.4 0.6 0.8 1.0"},
	} {
		ticks := yTicks(tc.vmax)
		var got []string
		for _, v := range ticks {
			got = append(got, tickText(v, ticks[1]))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("yTicks(%v) = %q, want %q", tc.vmax, strings.Join(got, " "), tc.want)
		}
		if !math.IsNaN(tc.vmax) && ticks[len(ticks)-1] < tc.vmax {
			t.Errorf("yTicks(%v) ends at %v, below the value", tc.vmax, ticks[len(ticks)-1])
		}
	}
}

func TestTimeTicks(t *testing.T) {
	for _, tc := range []struct {
		span float64
		want string
	}{
		{2.457, "0:00.0 0:00.5 0:01.0 0:01.5 0:02.0"},
		{1, "0:00.0 0:00.2 0:00.4 0:00.6 0:00.8 0:01.0"},
		{5, "0:00 0:01 0:02 0:03 0:04 0:05"},
		{83, "0:00 0:15 0:30 0:45 1:00 1:15"},
		{600, "0:00 2:00 4:00 6:00 8:00 10:00"},
		{8 * 3600, "0:00 2:00:00 4:00:00 6:00:00 8:00:00"},
	} {
		ticks, step := timeTicks(tc.span)
		var got []string
		for _, v := range ticks {
			got = append(got, clockTick(v, step))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("timeTicks(%v) = %q, want %q", tc.span, strings.Join(got, " "), tc.want)
		}
	}
}

// TestChartAxesAndFigures renders the report of a short run (81 calls in
// 2.457 s, the answers falling between the second's ticks) as the run
// wrote its summary: no time tick repeats (they read 0:00 0:00 0:01 0:01
// 0:02), every value tick is a multiple of its step (they read 0, 0.2,
// 0.5, 0.8, 1), the in-flight legend's peak is the summary's (it said
// "peak 0"), and the verdict's calls and elapsed time are the summary's.
func TestChartAxesAndFigures(t *testing.T) {
	start := time.Date(2026, 11, 26, 22, 36, 5, 0, time.UTC)
	s := &summary.Summary{Mode: "upload", RowsRead: 50, Start: start, End: start.Add(2457 * time.Millisecond), APICalls: 81,
		Concurrency: &summary.Concurrency{Auto: true, Limit: 3, PeakInFlight: 3}}
	tr := summary.NewTimelineRecorder(start)
	for _, smp := range []summary.Sample{
		{Seconds: 1.05, Answered: 26, InFlight: 0.03, ConcurrencyLimit: 2, LatencyP50Ms: 0.65, LatencyP95Ms: 2.3, RateLimit: 28.6},
		{Seconds: 1, Answered: 35, InFlight: 0.02, ConcurrencyLimit: 2, LatencyP50Ms: 0.53, LatencyP95Ms: 1.5, RateLimit: 40.1},
		{Seconds: 0.4, Answered: 19, InFlight: 0.01, ConcurrencyLimit: 3, LatencyP50Ms: 0.5, LatencyP95Ms: 0.95, RateLimit: 45.8},
	} {
		tr.Add(smp)
	}
	s.Timeline = tr.Timeline()
	var b strings.Builder
	if err := Render(&b, &Report{Summary: s}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	figs := regexp.MustCompile(`(?s)<figure class="chart" id="chart-(throughput|inflight|latency|errors)".*?</figure>`).FindAllStringSubmatch(page, -1)
	if len(figs) != 4 {
		t.Fatalf("%d timeline charts, want 4", len(figs))
	}
	for _, f := range figs {
		xs := texts(f[0], "xtick")
		if len(xs) < 3 || len(slices.Compact(slices.Clone(xs))) != len(xs) {
			t.Errorf("chart %s: time ticks %q, want 3 or more, none repeated", f[1], xs)
		}
		ys := texts(f[0], "ytick")
		var vals []float64
		for _, y := range ys {
			v, err := strconv.ParseFloat(strings.ReplaceAll(y, ",", ""), 64)
			if err != nil {
				t.Fatalf("chart %s: value tick %q: %v", f[1], y, err)
			}
			vals = append(vals, v)
		}
		if len(vals) < 3 {
			t.Fatalf("chart %s: value ticks %q", f[1], ys)
		}
		step := vals[1] - vals[0]
		for i, v := range vals {
			if math.Abs(v-float64(i)*step) > step*1e-6 {
				t.Errorf("chart %s: value ticks %q are not round steps of %v", f[1], ys, step)
				break
			}
		}
	}
	if !strings.Contains(figs[1][0], "in flight (mean over each second; peak: the most at once) (peak 3)") {
		t.Errorf("the in-flight legend does not give the summary's peak of 3:\n%s", figs[1][0])
	}
	if want := "81 API calls in 2.457s: 33.0 a second on average"; !strings.Contains(page, want) {
		t.Errorf("the verdict does not say %q (the summary's calls and elapsed time)", want)
	}
}

// texts returns the text of the chart's <text> elements of class cls.
func texts(fig, cls string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<text class="axis `+cls+`"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(fig, -1) {
		out = append(out, m[1])
	}
	return out
}
