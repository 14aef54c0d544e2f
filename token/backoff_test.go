package token

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	base, maxD := 100*time.Millisecond, time.Second
	tests := []struct {
		name    string
		attempt int
		rnd     float64
		want    time.Duration
	}{
		{"first attempt zero draw", 1, 0, 0},
		{"first attempt top draw", 1, 0.999, 99900 * time.Microsecond},
		{"second attempt doubles", 2, 0.5, 100 * time.Millisecond},
		{"third attempt quadruples", 3, 0.5, 200 * time.Millisecond},
		{"capped at max", 10, 0.5, 500 * time.Millisecond},
		{"huge attempt stays capped", 1000, 0.999, 999 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Backoff(tc.attempt, base, maxD, tc.rnd); got != tc.want {
				t.Errorf("Backoff(%d, %v, %v, %v) = %v, want %v", tc.attempt, base, maxD, tc.rnd, got, tc.want)
			}
		})
	}
}
