package fakeclock

import (
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	start := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	c := New(start)
	if got := c.Now(); !got.Equal(start) || got.Location() != time.UTC {
		t.Fatalf("Now() = %v, want %v", got, start)
	}
	c.Advance(90 * time.Second)
	if got, want := c.Now(), start.Add(90*time.Second); !got.Equal(want) {
		t.Errorf("after Advance: Now() = %v, want %v", got, want)
	}
	c.Set(start)
	if got := c.Now(); !got.Equal(start) {
		t.Errorf("after Set: Now() = %v, want %v", got, start)
	}
}

func TestOffset(t *testing.T) {
	var c Offset
	if d := c.Now().Sub(time.Now()); d > time.Minute || d < -time.Minute {
		t.Errorf("zero Offset is %v off the wall clock", d)
	}
	c.Set(time.Hour)
	c.Add(time.Hour)
	if d := c.Now().Sub(time.Now()); d < 2*time.Hour-time.Minute || d > 2*time.Hour+time.Minute {
		t.Errorf("Offset after Set(1h), Add(1h) is %v ahead, want about 2h", d)
	}
}
