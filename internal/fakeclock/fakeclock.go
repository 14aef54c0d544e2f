// Package fakeclock gives tests clocks they move by hand, to pass as a
// Now func() time.Time to the code under test.
package fakeclock

import (
	"sync"
	"sync/atomic"
	"time"
)

// Clock stands still at the time it was given until the test moves it.
// It is safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a Clock that reads t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock d ahead.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Offset is the wall clock plus an offset the test moves: time passes as
// usual, and the test jumps it ahead (to open a simulator's outage window,
// say). The zero Offset is the wall clock. It is safe for concurrent use.
type Offset struct{ d atomic.Int64 }

// Now is the wall clock plus the offset.
func (c *Offset) Now() time.Time { return time.Now().Add(time.Duration(c.d.Load())) }

// Set makes the offset d.
func (c *Offset) Set(d time.Duration) { c.d.Store(int64(d)) }

// Add moves the clock d further ahead.
func (c *Offset) Add(d time.Duration) { c.d.Add(int64(d)) }
