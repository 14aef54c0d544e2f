package summary

import (
	"sync"
	"time"
)

// MaxSamples bounds a Timeline's samples: a longer run is downsampled, two
// neighbouring samples merged into one of twice the interval, so that the
// summary (and the report drawn from it) stays small whatever the run's
// length: an 8-hour run keeps 450 samples of 64 seconds.
const MaxSamples = 600

// Timeline is how an upload went over time, one Sample per Interval
// seconds, for the run report's charts ("why was last night slow?"). It is
// recorded by the upload engine and written in the summary JSON, so that
// `bulkload report` draws it from files alone.
type Timeline struct {
	// Start is when the first sample begins; every T and At counts from it.
	Start time.Time `json:"start"`
	// IntervalSeconds is each sample's length: 1, doubled each time the
	// timeline was downsampled.
	IntervalSeconds float64 `json:"intervalSeconds"`
	// Samples are in time order, Samples[i] covering
	// [i*IntervalSeconds, (i+1)*IntervalSeconds) after Start; the last may
	// be shorter (the run ended within it).
	Samples []Sample `json:"samples"`
	// Marks are events to show on the time axis: signals, the circuit
	// breaker, the drain timeout, outages.
	Marks []Mark `json:"marks"`
}

// Sample is one interval of a Timeline. Counts are over the interval; the
// gauges (in flight, limit, rate) are means over the seconds it merged.
type Sample struct {
	// T is when the sample begins, in seconds since Timeline.Start.
	T float64 `json:"t"`
	// Seconds is how long the sample covers (IntervalSeconds but for the
	// last).
	Seconds float64 `json:"seconds"`
	// Answered counts the HTTP attempts the service answered (with data
	// or GraphQL errors): throughput is Answered/Seconds calls per second.
	Answered int64 `json:"answered"`
	// Status429 and Status503 count attempts answered 429 and 503;
	// Retries the attempts after a call's first.
	Status429 int64 `json:"status429"`
	Status503 int64 `json:"status503"`
	Retries   int64 `json:"retries"`
	// Unanswered counts the attempts that got no usable answer from the
	// service: a 5xx other than 503, or no reply at all (refused, reset,
	// timeout). Seconds with only these and no answer make an outage mark.
	Unanswered int64 `json:"unanswered"`
	// InFlight is the mean number of calls in flight over the interval
	// (the attempts' latency that ended in it, over its length: Little's
	// law) and ConcurrencyLimit the limit on them at its end (the
	// client's, which --concurrency auto moves); without the client's,
	// the rows being sent and the workers at the sample's instant.
	InFlight         float64 `json:"inFlight"`
	ConcurrencyLimit float64 `json:"concurrencyLimit"`
	// LatencyP50Ms and LatencyP95Ms are the median and 95th percentile of
	// the answered attempts' latency in milliseconds; 0 when none was
	// answered. Merged samples keep the answer-weighted mean of the
	// medians and the highest 95th percentile (a percentile cannot be
	// merged exactly; the higher one is the safe side for "why slow?").
	LatencyP50Ms float64 `json:"latencyP50Ms"`
	LatencyP95Ms float64 `json:"latencyP95Ms"`
	// RateLimit is the shared call rate in force, calls per second; 0:
	// unlimited.
	RateLimit float64 `json:"rateLimit"`
}

// Mark kinds.
const (
	MarkSignal       = "signal"        // SIGINT or SIGTERM: no new rows taken
	MarkAbort        = "abort"         // a second signal: calls in flight cancelled
	MarkStop         = "stop"          // the run stopped taking rows for a reason of its own
	MarkDrainTimeout = "drain-timeout" // calls still in flight were cancelled
	MarkOutage       = "outage"        // the service was away for Seconds
)

// Mark is one event on a Timeline's time axis.
type Mark struct {
	// At is when it happened, in seconds since Timeline.Start.
	At float64 `json:"t"`
	// Seconds is how long it lasted (an outage); 0 for an instant.
	Seconds float64 `json:"seconds,omitempty"`
	// Kind is one of the Mark kinds above.
	Kind string `json:"kind"`
	// Note says what happened, in words; it never holds lead data.
	Note string `json:"note,omitempty"`
}

// merge folds b, the sample after a, into a.
func (a *Sample) merge(b Sample) {
	w := a.Seconds + b.Seconds
	if w <= 0 {
		w = 1
	}
	if n := a.Answered + b.Answered; n > 0 {
		a.LatencyP50Ms = (a.LatencyP50Ms*float64(a.Answered) + b.LatencyP50Ms*float64(b.Answered)) / float64(n)
	}
	a.LatencyP95Ms = max(a.LatencyP95Ms, b.LatencyP95Ms)
	a.InFlight = (a.InFlight*a.Seconds + b.InFlight*b.Seconds) / w
	a.ConcurrencyLimit = (a.ConcurrencyLimit*a.Seconds + b.ConcurrencyLimit*b.Seconds) / w
	a.RateLimit = (a.RateLimit*a.Seconds + b.RateLimit*b.Seconds) / w
	a.Answered += b.Answered
	a.Status429 += b.Status429
	a.Status503 += b.Status503
	a.Retries += b.Retries
	a.Unanswered += b.Unanswered
	a.Seconds += b.Seconds
}

// TimelineRecorder builds a Timeline from one sample a second, downsampling
// as it grows past MaxSamples. Safe for concurrent use: the sampler adds
// samples while signals and the breaker add marks.
type TimelineRecorder struct {
	mu      sync.Mutex
	t       Timeline
	pending Sample // the seconds of the current interval so far
	has     bool
}

// NewTimelineRecorder starts a timeline at start.
func NewTimelineRecorder(start time.Time) *TimelineRecorder {
	return &TimelineRecorder{t: Timeline{Start: start, IntervalSeconds: 1, Samples: []Sample{}, Marks: []Mark{}}}
}

// Add records one sample, s.Seconds long, starting where the last ended.
func (r *TimelineRecorder) Add(s Sample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.has {
		s.T = float64(len(r.t.Samples)) * r.t.IntervalSeconds
		r.pending, r.has = s, true
	} else {
		r.pending.merge(s)
	}
	// A sampler's tick comes a little early or late: half a second of
	// slack keeps one tick one sample.
	if r.pending.Seconds > r.t.IntervalSeconds-0.5 {
		r.flushLocked()
	}
}

func (r *TimelineRecorder) flushLocked() {
	if !r.has {
		return
	}
	r.t.Samples = append(r.t.Samples, r.pending)
	r.has = false
	if len(r.t.Samples) < MaxSamples {
		return
	}
	half := r.t.Samples[:0]
	for i := 0; i+1 < len(r.t.Samples); i += 2 {
		s := r.t.Samples[i]
		s.merge(r.t.Samples[i+1])
		half = append(half, s)
	}
	r.t.Samples = half
	r.t.IntervalSeconds *= 2
}

// Mark records an event at, with an optional length.
func (r *TimelineRecorder) Mark(at time.Time, length time.Duration, kind, note string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.t.Marks = append(r.t.Marks, Mark{At: at.Sub(r.t.Start).Seconds(), Seconds: length.Seconds(), Kind: kind, Note: note})
}

// Timeline returns the timeline so far, the current interval's seconds
// included as a shorter last sample. The caller owns the copy.
func (r *TimelineRecorder) Timeline() *Timeline {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.t
	t.Samples = append([]Sample{}, r.t.Samples...)
	if r.has {
		t.Samples = append(t.Samples, r.pending)
	}
	t.Marks = append([]Mark{}, r.t.Marks...)
	return &t
}

// MergeTimelines puts the timelines of several runs (the shards of a
// backfill, run side by side or one after another) on one time axis from
// the earliest start: counts add up, and so do the gauges (rows in flight,
// concurrency, rate: shards run their own pools), each weighted by the
// share of an interval it covers; latency keeps the answer-weighted mean of
// the medians and the highest 95th percentile. The interval is the
// longest of theirs, doubled until at most MaxSamples cover the whole.
// Marks keep their time. A timeline that fails Validate (read back from a
// damaged file) is left out. Nil for no timeline; one is returned as is.
func MergeTimelines(tls []*Timeline) *Timeline {
	var ok []*Timeline
	for _, tl := range tls {
		if tl != nil && tl.Validate() == nil {
			ok = append(ok, tl)
		}
	}
	switch len(ok) {
	case 0:
		return nil
	case 1:
		return ok[0]
	}
	start, every := ok[0].Start, 1.0
	for _, tl := range ok {
		if tl.Start.Before(start) {
			start = tl.Start
		}
		every = max(every, tl.IntervalSeconds)
	}
	// Offsets in seconds from the earliest start, exactly: starts further
	// apart than a time.Duration holds (292 years) are a crafted file's,
	// but must not wrap around.
	offsets := make([]float64, len(ok))
	total := 0.0
	for i, tl := range ok {
		offsets[i] = secondsSince(tl.Start, start)
		span := 0.0
		if n := len(tl.Samples); n > 0 {
			span = tl.Samples[n-1].T + tl.Samples[n-1].Seconds
		}
		total = max(total, offsets[i]+span)
	}
	for total/every > MaxSamples {
		every *= 2
	}
	n := int(total/every) + 1
	out := &Timeline{Start: start, IntervalSeconds: every, Samples: make([]Sample, n), Marks: []Mark{}}
	p50w := make([]float64, n)
	for i := range out.Samples {
		out.Samples[i].T = float64(i) * every
	}
	for k, tl := range ok {
		off := offsets[k]
		for _, s := range tl.Samples {
			i := min(max(int((off+s.T)/every), 0), n-1)
			o := &out.Samples[i]
			share := s.Seconds / every
			o.Answered += s.Answered
			o.Status429 += s.Status429
			o.Status503 += s.Status503
			o.Retries += s.Retries
			o.Unanswered += s.Unanswered
			o.InFlight += s.InFlight * share
			o.ConcurrencyLimit += s.ConcurrencyLimit * share
			o.RateLimit += s.RateLimit * share
			o.LatencyP95Ms = max(o.LatencyP95Ms, s.LatencyP95Ms)
			p50w[i] += s.LatencyP50Ms * float64(s.Answered)
		}
		for _, m := range tl.Marks {
			m.At += off
			out.Marks = append(out.Marks, m)
		}
	}
	for i := range out.Samples {
		o := &out.Samples[i]
		o.Seconds = max(0, min(every, total-o.T))
		if o.Answered > 0 {
			o.LatencyP50Ms = p50w[i] / float64(o.Answered)
		}
	}
	return out
}

// secondsSince is t - from in seconds, without time.Duration's bound.
func secondsSince(t, from time.Time) float64 {
	return float64(t.Unix()-from.Unix()) + float64(t.Nanosecond()-from.Nanosecond())/1e9
}
