package main

import (
	"testing"
	"time"
)

// samples makes polls every 250 ms for secs seconds from per-quarter-second
// answers given by f.
func samples(secs int, f func(t time.Duration) (ok, throttled int)) []sample {
	var out []sample
	var cur sample
	for t := 250 * time.Millisecond; t <= time.Duration(secs)*time.Second; t += 250 * time.Millisecond {
		ok, th := f(t)
		cur.t, cur.ok, cur.throttled = t, cur.ok+ok, cur.throttled+th
		out = append(out, cur)
	}
	return out
}

func TestFiguresLimit(t *testing.T) {
	// 300/s limit: 20/s for 5 s, then 270/s (90%) from 5 s, 300/s from 10 s.
	r := result{sc: scenario{limit: 300}, samples: samples(30, func(t time.Duration) (int, int) {
		switch {
		case t <= 5*time.Second:
			return 5, 0
		case t <= 10*time.Second:
			return 68, 0 // 272/s
		}
		return 75, 1
	})}
	r.figures(0)
	if r.t90 < 5*time.Second || r.t90 > 6500*time.Millisecond {
		t.Errorf("t90 = %v, want about 6 s (the first full second at 90%%)", r.t90)
	}
	if r.steady < 299 || r.steady > 301 {
		t.Errorf("steady = %.1f, want 300 (the last third)", r.steady)
	}
	if r.throttled != 80 || r.calls != r.throttled+20*5+20*68+80*75 {
		t.Errorf("throttled %d of %d calls, want 80 of %d", r.throttled, r.calls, r.throttled+20*5+20*68+80*75)
	}
}

func TestFiguresHalve(t *testing.T) {
	// Halves at 20 s: 429s until 21.5 s, then a probe's lone 429 at 30 s.
	r := result{sc: scenario{limit: 300, halveAt: 20 * time.Second}, samples: samples(40, func(t time.Duration) (int, int) {
		switch {
		case t <= 20*time.Second:
			return 72, 0
		case t <= 21500*time.Millisecond:
			return 37, 20
		case t == 30*time.Second:
			return 36, 2
		}
		return 36, 0
	})}
	r.figures(0)
	if r.backUnder != 1500*time.Millisecond {
		t.Errorf("backUnder = %v, want 1.5s (a later probe's 429 does not count)", r.backUnder)
	}
}
