package main

import (
	"testing"
	"time"
)

// polls makes polls every 250 ms for secs seconds from per-quarter-second
// figures given by f: 2xx answers, 503s, requests admitted and their
// total queue wait in seconds.
func polls(secs int, f func(t time.Duration) (ok, shed int, admitted int64, wait float64)) []sample {
	var out []sample
	var cur sample
	for t := 250 * time.Millisecond; t <= time.Duration(secs)*time.Second; t += 250 * time.Millisecond {
		ok, shed, adm, wait := f(t)
		cur.t, cur.ok, cur.r503, cur.admitted, cur.waitSeconds = t, cur.ok+ok, cur.r503+shed, cur.admitted+adm, cur.waitSeconds+wait
		out = append(out, cur)
	}
	return out
}

func TestFiguresCapacity(t *testing.T) {
	// K 64, L 1 s: 16/s for 4 s, then 64/s, each request waiting 100 ms
	// (10% of L); one 503 a second in the first 4 s.
	r := result{sc: scenario{lat: time.Second, capacity: 64, aim: 64}, samples: polls(30, func(t time.Duration) (int, int, int64, float64) {
		if t <= 4*time.Second {
			s := 0
			if t%time.Second == 0 {
				s = 1
			}
			return 4, s, 4, 0.4
		}
		return 16, 0, 16, 1.6
	})}
	r.figures(0)
	if r.steady < 63 || r.steady > 65 {
		t.Errorf("steady = %.1f, want 64", r.steady)
	}
	if r.waitPct < 9.9 || r.waitPct > 10.1 {
		t.Errorf("queue wait = %.2f%% of L, want 10%%", r.waitPct)
	}
	if r.t90 < 4*time.Second || r.t90 > 5500*time.Millisecond {
		t.Errorf("t90 = %v, want about 5 s (the first full second at 90%%)", r.t90)
	}
	if want := 100 * 4.0 / float64(r.calls); r.share503 != want {
		t.Errorf("503 share = %.3f%%, want %.3f%%", r.share503, want)
	}
}

func TestFiguresChange(t *testing.T) {
	// The capacity halves at 20 s; requests wait 500 ms (50% of L) until
	// 23 s, then 50 ms (5%).
	r := result{sc: scenario{lat: time.Second, capacity: 64, capAfter: 32, changeAt: 20 * time.Second, aim: 32}, samples: polls(40, func(t time.Duration) (int, int, int64, float64) {
		switch {
		case t <= 20*time.Second:
			return 16, 0, 16, 0
		case t <= 23*time.Second:
			return 8, 0, 8, 4
		}
		return 8, 0, 8, 0.4
	})}
	r.figures(0)
	if r.backUnder != 3*time.Second {
		t.Errorf("backUnder = %v, want 3s", r.backUnder)
	}
}
