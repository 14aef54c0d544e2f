package simproc

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Stats is what the drivers read of the simulator's counters (GET
// /_sim/stats?requests).
type Stats struct {
	// Requests are the answers so far by operation and status.
	Requests map[string]map[string]int `json:"requests"`
	// Capacity is the capacity gate's: calls admitted, their time in its
	// queue, calls in flight.
	Capacity struct {
		Admitted         int64   `json:"admitted"`
		QueueWaitSeconds float64 `json:"queueWaitSeconds"`
		InFlight         int     `json:"inFlight"`
	} `json:"capacity"`
}

// Answers are the simulator's GraphQL answers so far (every operation but
// the token's) by class.
type Answers struct {
	OK        int // 2xx
	Throttled int // 429
	Shed      int // 503
	Other     int // any other status
}

// Stats reads the simulator's counters.
func (s *Sim) Stats(c *http.Client) (Stats, error) {
	var st Stats
	resp, err := c.Get(s.Base + "/_sim/stats?requests")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}

// Answers counts st's GraphQL answers by class.
func (st Stats) Answers() Answers {
	var a Answers
	for op, byStatus := range st.Requests {
		if op == "token" {
			continue
		}
		for status, n := range byStatus {
			switch {
			case status == "429":
				a.Throttled += n
			case status == "503":
				a.Shed += n
			case strings.HasPrefix(status, "2"):
				a.OK += n
			default:
				a.Other += n
			}
		}
	}
	return a
}

// Watch reads the simulator's counters (Stats) every 250 ms and hands
// each to f with the time since the upload started, until d has passed or
// the upload has ended (up.Done, where Watch puts back what it takes). A
// read that fails (a slow answer under load) is skipped: the next one will
// do. Watch reports whether the upload ended first.
func (s *Sim) Watch(c *http.Client, up *Upload, d time.Duration, f func(st Stats, t time.Duration)) (ended bool) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(d)
	for {
		select {
		case <-tick.C:
			st, err := s.Stats(c)
			if err != nil {
				continue
			}
			f(st, time.Since(up.Started))
		case <-deadline:
			return false
		case err := <-up.Done:
			up.Done <- err
			return true
		}
	}
}
