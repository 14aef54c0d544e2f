package app

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"

	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
)

// Rate is --rate: "auto" (the default: find the service's limit, see
// pace.Adaptive) or a fixed number of calls per second, 0 unlimited.
type Rate struct {
	Auto      bool
	PerSecond float64
}

func (r *Rate) String() string {
	if r.Auto {
		return "auto"
	}
	return strconv.FormatFloat(r.PerSecond, 'f', -1, 64)
}

func (r *Rate) Set(s string) error {
	if s == "auto" {
		*r = Rate{Auto: true}
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("want auto, or calls per second (0: unlimited), not %q", s)
	}
	*r = Rate{PerSecond: f}
	return nil
}

// rateReport is the summary's and the progress line's account of the
// pacing so far.
func rateReport(st submitter.Stats, r Rate) *summary.Rate {
	out := &summary.Rate{Auto: st.Auto, CallsPerSecond: r.PerSecond, Attempts: int(st.Attempts), Status429: int(st.Status429)}
	if st.Auto {
		out.CallsPerSecond, out.LimitFound = st.SettledRate, st.LimitFound
		if st.LimitFound {
			out.Limit = st.RateLimit
		}
	}
	return out
}

// earlierPacing is what the run a --resume continues settled at, from the
// summary beside its results file: the rate limit --rate auto found and
// the limit --concurrency auto settled at, each 0 when it found none, was
// not auto then or is not auto now. A resume starts from them instead of
// climbing again (issue 27: a resume of 1,000 rows spent 10 of its 16 s
// climbing from 20 calls/s).
type earlierPacing struct {
	rateLimit   float64
	concurrency int
}

// readEarlierPacing reads the earlierPacing of the results file at path;
// none when its summary is missing or unreadable (a run killed before it
// wrote one).
func readEarlierPacing(path string, up *UploadOptions, log *slog.Logger) earlierPacing {
	var p earlierPacing
	sum, err := summary.Read(path)
	if err != nil {
		log.Debug("--resume: no summary of the earlier run to start the pacing from", "err", err)
		return p
	}
	if r := sum.Rate; up.Rate.Auto && r != nil && r.Auto && r.LimitFound {
		p.rateLimit = r.Limit
		if p.rateLimit == 0 { // a summary from before the limit was recorded
			p.rateLimit = r.CallsPerSecond / 0.97
		}
		if !(p.rateLimit > 0) || math.IsInf(p.rateLimit, 0) {
			p.rateLimit = 0
		}
	}
	if c := sum.Concurrency; up.Concurrency.Auto && c != nil && c.Auto && c.Settled > 0 {
		p.concurrency = min(c.Settled, up.MaxConcurrency)
	}
	if p.rateLimit > 0 || p.concurrency > 0 {
		log.Info("--resume: pacing starts where the earlier run settled", "rate_limit", p.rateLimit, "concurrency", p.concurrency)
	}
	return p
}
