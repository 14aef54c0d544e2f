package app

import (
	"fmt"
	"math"
	"strconv"

	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
)

// rateFlag is --rate: "auto" (the default: find the service's limit, see
// submitter.Adaptive) or a fixed number of calls per second, 0 unlimited.
type rateFlag struct {
	Auto      bool
	perSecond float64
}

func (r *rateFlag) String() string {
	if r.Auto {
		return "auto"
	}
	return strconv.FormatFloat(r.perSecond, 'f', -1, 64)
}

func (r *rateFlag) Set(s string) error {
	if s == "auto" {
		*r = rateFlag{Auto: true}
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("want auto, or calls per second (0: unlimited), not %q", s)
	}
	*r = rateFlag{perSecond: f}
	return nil
}

// rateReport is the summary's and the progress line's account of the
// pacing so far.
func rateReport(st submitter.Stats, r rateFlag) *summary.Rate {
	out := &summary.Rate{Auto: st.Auto, CallsPerSecond: r.perSecond, Attempts: int(st.Attempts), Status429: int(st.Status429)}
	if st.Auto {
		out.CallsPerSecond, out.LimitFound = st.SettledRate, st.LimitFound
	}
	return out
}
