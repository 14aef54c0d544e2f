package htmlreport

import (
	"slices"

	"github.com/bulkload/bulkload/summary"
)

// withOutages returns tl with the run's outages as the summary recorded
// them (Summary.Outages: the submitter's outage gate, which knows when the
// service or the identity provider was away and why) in place of the
// outage marks the engine guessed from its samples; tl itself when the
// summary recorded none. The caller owns the copy.
func withOutages(s *summary.Summary, tl *summary.Timeline) *summary.Timeline {
	if len(s.Outages) == 0 || tl == nil {
		return tl
	}
	out := *tl
	out.Marks = slices.DeleteFunc(slices.Clone(tl.Marks), func(m summary.Mark) bool { return m.Kind == summary.MarkOutage })
	for _, o := range s.Outages {
		who, end := "the service was away", "waited out"
		if o.IdentityProvider {
			who = "the identity provider was away"
		}
		if o.StoppedRun {
			end = "the run stopped"
		}
		out.Marks = append(out.Marks, summary.Mark{At: o.Start.Sub(tl.Start).Seconds(), Seconds: o.Seconds, Kind: summary.MarkOutage, Note: who + " (" + o.Cause + "): " + end})
	}
	slices.SortStableFunc(out.Marks, func(a, b summary.Mark) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
	return &out
}
