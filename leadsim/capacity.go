package leadsim

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CapacityChange is one change of the capacity while the simulator runs.
type CapacityChange struct {
	At       time.Duration // since New
	Capacity int           // GraphQL requests processed at once; 0 = unlimited
}

// ParseCapacityChanges reads --capacity-change: comma-separated K@AT, e.g.
// "32@30s" (32 requests at once from 30 s after the start) or "32@30s,0@1m"
// (and unlimited after a minute).
func ParseCapacityChanges(v string) ([]CapacityChange, error) {
	var out []CapacityChange
	for _, part := range strings.Split(v, ",") {
		k, at, ok := strings.Cut(strings.TrimSpace(part), "@")
		n, err1 := strconv.Atoi(k)
		d, err2 := time.ParseDuration(at)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("capacity change %q: want K@AT, e.g. 32@30s", part)
		}
		out = append(out, CapacityChange{At: d, Capacity: n})
	}
	return out, nil
}

// checkCapacity validates the capacity options of o.
func (o *Options) checkCapacity() error {
	if o.Capacity < 0 {
		return fmt.Errorf("leadsim options: capacity %d: use 0 (unlimited) or more", o.Capacity)
	}
	if o.QueueLimit < 0 {
		return fmt.Errorf("leadsim options: queue limit %d: use 0 (no limit) or more", o.QueueLimit)
	}
	o.CapacityChanges = append([]CapacityChange(nil), o.CapacityChanges...)
	for i, c := range o.CapacityChanges {
		if c.Capacity < 0 {
			return fmt.Errorf("leadsim options: capacity change %d: capacity %d: use 0 (unlimited) or more", i, c.Capacity)
		}
		if c.At <= 0 || (i > 0 && c.At <= o.CapacityChanges[i-1].At) {
			return fmt.Errorf("leadsim options: capacity change %d at %v: times must be after the start and increase", i, c.At)
		}
	}
	return nil
}

// capacityGate lets at most a capacity of GraphQL requests be processed at
// once, the way a service with a fixed pool of workers does: the rest wait
// in a FIFO queue, so that their latency grows with it, and a request that
// finds the queue full (QueueLimit) is shed. It counts what a client
// tuning its concurrency wants to know: the peak in flight, the requests
// shed, the time requests waited and were served. Safe for concurrent use.
type capacityGate struct {
	now        func() time.Time
	started    time.Time
	changes    []CapacityChange
	queueLimit int

	mu         sync.Mutex
	next       int // index of the next change
	capacity   int // 0 = unlimited
	inFlight   int
	queue      []*capWaiter
	peak       int
	shed       int
	admitted   int64         // requests that got a place (waited or not)
	waited     int64         // of them, those that waited in the queue
	waitTotal  time.Duration // their time in the queue
	served     int64         // requests that gave their place back
	serveTotal time.Duration // their time holding it
}

type capWaiter struct {
	ready   chan struct{}
	granted bool // under capacityGate.mu
}

func newCapacityGate(o Options, started time.Time) *capacityGate {
	return &capacityGate{now: o.Now, started: started, changes: o.CapacityChanges,
		queueLimit: o.QueueLimit, capacity: o.Capacity}
}

// errShed is acquire's answer to a request that found the queue full.
var errShed = fmt.Errorf("request queue full")

// acquire takes a place, waiting in the queue for one; it returns the
// function that gives it back, errShed when the queue is full, or ctx's
// error when the client went away while waiting.
func (g *capacityGate) acquire(ctx context.Context) (release func(), err error) {
	g.mu.Lock()
	arrived := g.now()
	g.applyLocked(arrived)
	if g.capacity == 0 || (g.inFlight < g.capacity && len(g.queue) == 0) {
		g.admitLocked()
		g.mu.Unlock()
		return g.releaser(arrived), nil
	}
	if g.queueLimit > 0 && len(g.queue) >= g.queueLimit {
		g.shed++
		g.mu.Unlock()
		return nil, errShed
	}
	w := &capWaiter{ready: make(chan struct{})}
	g.queue = append(g.queue, w)
	g.mu.Unlock()
	select {
	case <-w.ready:
	case <-ctx.Done():
		g.mu.Lock()
		if !w.granted {
			for i, x := range g.queue {
				if x == w {
					g.queue = append(g.queue[:i], g.queue[i+1:]...)
					break
				}
			}
			g.mu.Unlock()
			return nil, ctx.Err()
		}
		g.mu.Unlock()
		// Granted as the client left: give the place back at once.
		g.releaser(g.now())()
		return nil, ctx.Err()
	}
	got := g.now()
	g.mu.Lock()
	g.waited++
	g.waitTotal += got.Sub(arrived)
	g.mu.Unlock()
	return g.releaser(got), nil
}

// admitLocked counts one request that got a place.
func (g *capacityGate) admitLocked() {
	g.inFlight++
	g.admitted++
	g.peak = max(g.peak, g.inFlight)
}

func (g *capacityGate) releaser(from time.Time) func() {
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		now := g.now()
		g.inFlight--
		g.served++
		g.serveTotal += now.Sub(from)
		g.applyLocked(now)
		g.grantLocked(now)
	}
}

// grantLocked gives the free places to the requests waiting longest.
func (g *capacityGate) grantLocked(now time.Time) {
	for len(g.queue) > 0 && (g.capacity == 0 || g.inFlight < g.capacity) {
		w := g.queue[0]
		g.queue[0] = nil
		g.queue = g.queue[1:]
		w.granted = true
		g.admitLocked()
		close(w.ready)
	}
}

// applyLocked applies the capacity changes due by now.
func (g *capacityGate) applyLocked(now time.Time) {
	if g.next >= len(g.changes) {
		return
	}
	el := now.Sub(g.started)
	for g.next < len(g.changes) && el >= g.changes[g.next].At {
		g.capacity = g.changes[g.next].Capacity
		g.next++
	}
	g.grantLocked(now)
}

// CapacityStats are the capacity gate's counters (Stats.Capacity).
type CapacityStats struct {
	// Capacity is the number of requests processed at once now; 0 is
	// unlimited (then the gate only counts).
	Capacity int `json:"capacity"`
	// QueueLimit is the queue's size; 0 is no limit.
	QueueLimit int `json:"queueLimit"`
	// InFlight and Queued are the requests processed and waiting now;
	// PeakInFlight the most processed at once since the start.
	InFlight     int `json:"inFlight"`
	Queued       int `json:"queued"`
	PeakInFlight int `json:"peakInFlight"`
	// Shed counts requests answered 503 because the queue was full.
	Shed int `json:"shed"`
	// Admitted counts requests that got a place, Waited those of them
	// that waited for it; QueueWaitSeconds is the sum of their waits.
	Admitted         int64   `json:"admitted"`
	Waited           int64   `json:"waited"`
	QueueWaitSeconds float64 `json:"queueWaitSeconds"`
	// Served counts the requests that gave their place back and
	// ServiceSeconds the time they held it (the simulated latency and
	// the work).
	Served         int64   `json:"served"`
	ServiceSeconds float64 `json:"serviceSeconds"`
	// MeanQueueWaitMs is the mean wait of every admitted request (those
	// that did not wait count as 0); MeanServiceMs the mean time held.
	MeanQueueWaitMs float64 `json:"meanQueueWaitMs"`
	MeanServiceMs   float64 `json:"meanServiceMs"`
}

func (g *capacityGate) stats() CapacityStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.applyLocked(g.now())
	s := CapacityStats{Capacity: g.capacity, QueueLimit: g.queueLimit, InFlight: g.inFlight, Queued: len(g.queue),
		PeakInFlight: g.peak, Shed: g.shed, Admitted: g.admitted, Waited: g.waited,
		QueueWaitSeconds: g.waitTotal.Seconds(), Served: g.served, ServiceSeconds: g.serveTotal.Seconds()}
	if g.admitted > 0 {
		s.MeanQueueWaitMs = 1e3 * s.QueueWaitSeconds / float64(g.admitted)
	}
	if g.served > 0 {
		s.MeanServiceMs = 1e3 * s.ServiceSeconds / float64(g.served)
	}
	return s
}

// registerCapacityFlags binds --capacity, --queue-limit and
// --capacity-change to o.
func (o *Options) registerCapacityFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.Capacity, "capacity", o.Capacity, "GraphQL requests processed at once; the rest wait in a queue, so their latency grows (0 = unlimited)")
	fs.IntVar(&o.QueueLimit, "queue-limit", o.QueueLimit, "with --capacity, requests that may wait; one more is shed with 503 and Retry-After (0 = no limit)")
	fs.Func("capacity-change", "change --capacity while running: K@AT[,K@AT...], AT counted from the start, e.g. 32@30s (0 = unlimited)", func(v string) error {
		c, err := ParseCapacityChanges(v)
		if err == nil {
			o.CapacityChanges = c
		}
		return err
	})
}
