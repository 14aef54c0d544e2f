package summary

import (
	"errors"
	"fmt"
	"math"
)

// ErrNotWritten is wrapped by Validate's errors: a summary read back (the
// file beside a results file) holds what no run writes, a timeline sample
// before its start or past any run's end, a negative count, an exit
// status no process returns. Such a file was edited or damaged; it is
// refused, never drawn or added up.
var ErrNotWritten = errors.New("holds what no run writes")

// Bounds of what a run writes, well past any real run: the checks keep a
// crafted file from overflowing the arithmetic, not a long run from being
// read.
const (
	// maxSpanSeconds bounds a timeline's length and every time in it:
	// about 31 years.
	maxSpanSeconds = 1e9
	// maxCount bounds every count of rows, calls or cents: sums of a few
	// thousand such files stay far from int64's end.
	maxCount = 1 << 50
	// maxCents bounds an amount in cents: one bid may be up to
	// ParseBid's $999,999,999,999,999.99.
	maxCents = 1 << 60
	// maxGauge bounds a gauge (calls in flight, a rate, a latency in
	// milliseconds, a share).
	maxGauge = 1e12
	// maxTimelineSamples bounds a timeline's samples: a recorder keeps
	// MaxSamples, a merge one more.
	maxTimelineSamples = 2 * MaxSamples
)

// Validate reports whether s is a summary a run may have written: every
// count between 0 and maxCount, an exit status between 0 and 255, every
// gauge finite and not negative, and a valid timeline (Timeline.Validate).
// The error wraps ErrNotWritten and names the first field at fault.
func (s *Summary) Validate() error {
	bad := func(field string, v any) error {
		return fmt.Errorf("%w: %s is %v", ErrNotWritten, field, v)
	}
	if s.ExitCode != nil && (*s.ExitCode < 0 || *s.ExitCode > 255) {
		return bad("exitCode", *s.ExitCode)
	}
	counts := []struct {
		name string
		n    int64
	}{
		{"valid", int64(s.Valid)}, {"invalid", int64(s.Invalid)}, {"processed", int64(s.Processed)},
		{"submitted", int64(s.Submitted)}, {"submitFailed", int64(s.SubmitFailed)}, {"failed", int64(s.Failed)},
		{"unverified", int64(s.Unverified)}, {"created", int64(s.Created)}, {"unknown", int64(s.Unknown)},
		{"notSent", int64(s.NotSent)}, {"skippedOtherShards", int64(s.OtherShards)}, {"rowsRead", int64(s.RowsRead)},
		{"inputRows", int64(s.InputRows)}, {"notReached", int64(s.NotReached)}, {"resumedRows", int64(s.Resumed)},
		{"qualified", int64(s.Qualified)}, {"bidUnparseable", int64(s.BidUnparseable)},
		{"apiCalls", int64(s.APICalls)}, {"retries", int64(s.Retries)}, {"tokensFetched", int64(s.TokensFetched)},
		{"inputBytes", s.InputBytes}, {"inputGrewBytes", s.InputGrewBytes},
		{"noLeadId.count", int64(s.NoLeadID.Count)}, {"keptLeads.count", int64(s.KeptLeads.Count)},
		{"deferred.count", int64(s.Deferred.Count)},
	}
	for _, c := range counts {
		if !countOK(c.n) {
			return bad(c.name, c.n)
		}
	}
	if !centsOK(s.BidCents) {
		return bad("totalBidCents", s.BidCents)
	}
	if len(s.NoLeadID.Rows) > s.NoLeadID.Count {
		return bad("noLeadId.rows", fmt.Sprintf("%d rows named of %d", len(s.NoLeadID.Rows), s.NoLeadID.Count))
	}
	if len(s.KeptLeads.Rows) > s.KeptLeads.Count {
		return bad("keptLeads.rows", fmt.Sprintf("%d rows named of %d", len(s.KeptLeads.Rows), s.KeptLeads.Count))
	}
	if len(s.Deferred.Rows) > s.Deferred.Count {
		return bad("deferred.rows", fmt.Sprintf("%d rows named of %d", len(s.Deferred.Rows), s.Deferred.Count))
	}
	for i, c := range s.ResultCodes {
		if !countOK(int64(c.Count)) || !centsOK(c.BidCents) {
			return bad(fmt.Sprintf("resultCodes[%d]", i), fmt.Sprintf("%+v", c))
		}
	}
	for i, b := range s.BidBuckets {
		if !countOK(int64(b.Count)) || !centsOK(b.BidCents) || !centsOK(b.FromCents) || !centsOK(b.ToCents) {
			return bad(fmt.Sprintf("bidBuckets[%d]", i), fmt.Sprintf("%+v", b))
		}
	}
	for i, c := range s.InvalidColumns {
		if !countOK(int64(c.Count)) {
			return bad(fmt.Sprintf("invalidColumns[%d].count", i), c.Count)
		}
	}
	for i, f := range s.Failures {
		if !countOK(int64(f.Count)) {
			return bad(fmt.Sprintf("failures[%d].count", i), f.Count)
		}
	}
	for i, o := range s.Outages {
		if !gaugeOK(o.Seconds) {
			return bad(fmt.Sprintf("outages[%d].seconds", i), o.Seconds)
		}
	}
	if r := s.Rate; r != nil && (!gaugeOK(r.CallsPerSecond) || !countOK(int64(r.Attempts)) || !countOK(int64(r.Status429))) {
		return bad("rate", fmt.Sprintf("%+v", *r))
	}
	if c := s.Concurrency; c != nil {
		for _, n := range []int{c.Limit, c.Max, c.PeakInFlight, c.LatencyCuts, c.BackPressureCuts} {
			if !countOK(int64(n)) {
				return bad("concurrency", fmt.Sprintf("%+v", *c))
			}
		}
		if !gaugeOK(c.MeanLatencyMs) || !gaugeOK(c.BaseLatencyMs) {
			return bad("concurrency", fmt.Sprintf("%+v", *c))
		}
	}
	if b := s.BoundBy; b != nil && (!gaugeOK(b.ConcurrencyWaitShare) || !gaugeOK(b.RateWaitShare)) {
		return bad("boundBy", fmt.Sprintf("%+v", *b))
	}
	if s.Timeline != nil {
		if p := s.Timeline.problem(); p != "" {
			return fmt.Errorf("%w: timeline.%s", ErrNotWritten, p)
		}
	}
	return nil
}

// Validate reports whether tl is a timeline a run may have written: an
// interval above 0; at most maxTimelineSamples samples, in time order,
// each starting at or after the timeline's start and ending within
// maxSpanSeconds of it, with counts between 0 and maxCount and gauges
// finite and not negative; marks within maxSpanSeconds of the start. The
// error wraps ErrNotWritten and names the first sample or mark at fault.
func (tl *Timeline) Validate() error {
	if p := tl.problem(); p != "" {
		return fmt.Errorf("%w: %s", ErrNotWritten, p)
	}
	return nil
}

// problem is what makes tl one no run writes, "" for none.
func (tl *Timeline) problem() string {
	if !(tl.IntervalSeconds > 0 && tl.IntervalSeconds <= maxSpanSeconds) {
		return fmt.Sprintf("intervalSeconds is %v (want above 0, at most %v)", tl.IntervalSeconds, float64(maxSpanSeconds))
	}
	if len(tl.Samples) > maxTimelineSamples {
		return fmt.Sprintf("samples: %d of them, more than %d", len(tl.Samples), maxTimelineSamples)
	}
	after := 0.0
	for i, s := range tl.Samples {
		if p := s.problem(after); p != "" {
			return fmt.Sprintf("samples[%d].%s", i, p)
		}
		after = s.T
	}
	for i, m := range tl.Marks {
		if !(math.Abs(m.At) <= maxSpanSeconds) || !gaugeOK(m.Seconds) || m.Seconds > maxSpanSeconds {
			return fmt.Sprintf("marks[%d] is at t %v for %v seconds (want both within %v)", i, m.At, m.Seconds, float64(maxSpanSeconds))
		}
	}
	return ""
}

// problem is what makes s, a sample that follows one starting at after,
// one no run writes; "" for none.
func (s Sample) problem(after float64) string {
	switch {
	case !(s.T >= after && s.T <= maxSpanSeconds):
		return fmt.Sprintf("t is %v (want %v to %v, in time order)", s.T, after, float64(maxSpanSeconds))
	case !(s.Seconds >= 0 && s.T+s.Seconds <= maxSpanSeconds):
		return fmt.Sprintf("seconds is %v (want 0 or more, ending within %v)", s.Seconds, float64(maxSpanSeconds))
	}
	counts := []struct {
		name string
		n    int64
	}{{"answered", s.Answered}, {"status429", s.Status429}, {"status503", s.Status503}, {"retries", s.Retries}, {"unanswered", s.Unanswered}}
	for _, c := range counts {
		if !countOK(c.n) {
			return fmt.Sprintf("%s is %d", c.name, c.n)
		}
	}
	gauges := []struct {
		name string
		g    float64
	}{{"inFlight", s.InFlight}, {"concurrencyLimit", s.ConcurrencyLimit}, {"latencyP50Ms", s.LatencyP50Ms}, {"latencyP95Ms", s.LatencyP95Ms}, {"rateLimit", s.RateLimit}}
	for _, g := range gauges {
		if !gaugeOK(g.g) {
			return fmt.Sprintf("%s is %v", g.name, g.g)
		}
	}
	return ""
}

func countOK(n int64) bool   { return n >= 0 && n <= maxCount }
func centsOK(c int64) bool   { return c >= 0 && c <= maxCents }
func gaugeOK(g float64) bool { return g >= 0 && g <= maxGauge } // false for NaN
