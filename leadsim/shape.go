package leadsim

import (
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Shapes of a real service that do not depend on its load: latency drawn
// from a bimodal or heavy-tailed distribution (a slow credit bureau behind
// some calls), and a Retry-After on the injected 503s (one bad backend
// behind a load balancer). A client that takes them for congestion slows
// down for nothing; bench/shapes.sh measures it against them.

// Kinds of a LatencyDist.
const (
	DistBimodal   = "bimodal"   // Fast, or Slow for a share Share of the calls
	DistLognormal = "lognormal" // median Scale, shape Sigma
	DistPareto    = "pareto"    // at least Scale, tail index Alpha
)

// maxDraw bounds one draw of a heavy-tailed distribution: a pareto draw
// can be hours, and no service holds a call that long.
const maxDraw = time.Minute

// LatencyDist is a latency drawn for each call from a distribution,
// whatever the load. The zero value draws nothing (0).
type LatencyDist struct {
	Kind string // "" (none), DistBimodal, DistLognormal or DistPareto
	// Bimodal: Fast, or Slow for a random Share of the calls.
	Fast, Slow time.Duration
	Share      float64
	// Lognormal: the median Scale and the shape Sigma (the standard
	// deviation of the latency's logarithm). Pareto: the least latency
	// Scale and the tail index Alpha (the tail is heavier as Alpha nears
	// 1; at or below 2 its variance is infinite). Draws are at most a
	// minute.
	Scale time.Duration
	Sigma float64
	Alpha float64
}

// String is d as ParseLatencyDist reads it; "" for none.
func (d LatencyDist) String() string {
	switch d.Kind {
	case DistBimodal:
		return fmt.Sprintf("%s:%v,%v,%g", d.Kind, d.Fast, d.Slow, d.Share)
	case DistLognormal:
		return fmt.Sprintf("%s:%v,%g", d.Kind, d.Scale, d.Sigma)
	case DistPareto:
		return fmt.Sprintf("%s:%v,%g", d.Kind, d.Scale, d.Alpha)
	}
	return ""
}

// ParseLatencyDist reads a latency distribution: bimodal:FAST,SLOW,SHARE
// (e.g. bimodal:50ms,2s,0.1: 50 ms, or 2 s for a random 10% of the calls),
// lognormal:MEDIAN,SIGMA (e.g. lognormal:100ms,1) or pareto:MIN,ALPHA
// (e.g. pareto:50ms,1.5).
func ParseLatencyDist(v string) (LatencyDist, error) {
	kind, args, _ := strings.Cut(strings.TrimSpace(v), ":")
	parts := strings.Split(args, ",")
	bad := func(want string) (LatencyDist, error) {
		return LatencyDist{}, fmt.Errorf("latency distribution %q: want %s", v, want)
	}
	dur := func(s string) (time.Duration, bool) {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		return d, err == nil && d >= 0
	}
	num := func(s string) (float64, bool) {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	switch kind {
	case DistBimodal:
		const want = "bimodal:FAST,SLOW,SHARE, e.g. bimodal:50ms,2s,0.1 (SHARE in [0,1])"
		if len(parts) != 3 {
			return bad(want)
		}
		fast, ok1 := dur(parts[0])
		slow, ok2 := dur(parts[1])
		share, ok3 := num(parts[2])
		if !ok1 || !ok2 || !ok3 || share < 0 || share > 1 {
			return bad(want)
		}
		return LatencyDist{Kind: kind, Fast: fast, Slow: slow, Share: share}, nil
	case DistLognormal:
		const want = "lognormal:MEDIAN,SIGMA, e.g. lognormal:100ms,1 (SIGMA > 0)"
		if len(parts) != 2 {
			return bad(want)
		}
		median, ok1 := dur(parts[0])
		sigma, ok2 := num(parts[1])
		if !ok1 || !ok2 || sigma <= 0 {
			return bad(want)
		}
		return LatencyDist{Kind: kind, Scale: median, Sigma: sigma}, nil
	case DistPareto:
		const want = "pareto:MIN,ALPHA, e.g. pareto:50ms,1.5 (ALPHA > 0)"
		if len(parts) != 2 {
			return bad(want)
		}
		least, ok1 := dur(parts[0])
		alpha, ok2 := num(parts[1])
		if !ok1 || !ok2 || alpha <= 0 {
			return bad(want)
		}
		return LatencyDist{Kind: kind, Scale: least, Alpha: alpha}, nil
	}
	return bad("bimodal:FAST,SLOW,SHARE, lognormal:MEDIAN,SIGMA or pareto:MIN,ALPHA")
}

// check reports a distribution that New must refuse.
func (d LatencyDist) check() error {
	switch d.Kind {
	case "":
		return nil
	case DistBimodal:
		if d.Fast < 0 || d.Slow < 0 || !(d.Share >= 0 && d.Share <= 1) {
			return fmt.Errorf("bimodal latency %v: use durations >= 0 and a share in [0,1]", d)
		}
	case DistLognormal:
		if d.Scale < 0 || !(d.Sigma > 0) || math.IsInf(d.Sigma, 0) {
			return fmt.Errorf("lognormal latency %v: use a median >= 0 and a sigma > 0", d)
		}
	case DistPareto:
		if d.Scale < 0 || !(d.Alpha > 0) || math.IsInf(d.Alpha, 0) {
			return fmt.Errorf("pareto latency %v: use a least latency >= 0 and an alpha > 0", d)
		}
	default:
		return fmt.Errorf("latency distribution kind %q: use %s, %s or %s", d.Kind, DistBimodal, DistLognormal, DistPareto)
	}
	return nil
}

// draw is one call's latency from d.
func (d LatencyDist) draw(rnd *lockedRand) time.Duration {
	var x float64 // nanoseconds
	switch d.Kind {
	case DistBimodal:
		if rnd.Float64() < d.Share {
			return d.Slow
		}
		return d.Fast
	case DistLognormal:
		x = float64(d.Scale) * math.Exp(d.Sigma*rnd.NormFloat64())
	case DistPareto:
		x = float64(d.Scale) / math.Pow(1-rnd.Float64(), 1/d.Alpha) // 1-U is in (0,1]
	default:
		return 0
	}
	if !(x < float64(maxDraw)) {
		return maxDraw
	}
	return time.Duration(x)
}

// distFlag binds a LatencyDist to a flag.
type distFlag struct{ d *LatencyDist }

func (f distFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

func (f distFlag) Set(v string) error {
	d, err := ParseLatencyDist(v)
	if err == nil {
		*f.d = d
	}
	return err
}

// retryAfterForm is a Retry-After value as Options.Fail503RetryAfter
// takes it: delta seconds, whole ("2"), fractional ("1.5", not in RFC 9110
// but sent by some services) or beyond any clock ("99999999999999999999"),
// or "date+DUR", an HTTP-date DUR after the answer ("date+2s").
var retryAfterForm = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// checkRetryAfter reports a Retry-After form (Fail503RetryAfter,
// ProxyResetRetryAfter, RateLimitRetryAfter) that New must refuse.
func checkRetryAfter(v string) error {
	if v == "" || retryAfterForm.MatchString(v) {
		return nil
	}
	if d, ok := strings.CutPrefix(v, "date+"); ok {
		if _, err := time.ParseDuration(d); err == nil {
			return nil
		}
	}
	return fmt.Errorf("Retry-After %q: want delta seconds (2, 1.5, 99999999999999999999) or date+DURATION (date+2s, an HTTP-date)", v)
}

// retryAfterValue is the header of an injected 503 (or a 429 of
// RateLimitRetryAfter) answered at now.
func retryAfterValue(form string, now time.Time) string {
	if d, ok := strings.CutPrefix(form, "date+"); ok {
		dur, _ := time.ParseDuration(d) // checked by New
		return now.Add(dur).UTC().Format(http.TimeFormat)
	}
	return form
}
