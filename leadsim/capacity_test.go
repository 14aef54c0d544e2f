package leadsim

import (
	"bytes"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// TestCapacityQueueAndShed: with capacity 2 and a queue of 1, two lead
// queries are processed at once, a third waits, a fourth is shed with 503
// and Retry-After; the counters say so, and the one that waited is served
// once a place is free.
func TestCapacityQueueAndShed(t *testing.T) {
	// Parallel: a simulator of its own; its requests wait 2 s (the
	// states it checks hold that long), not on the CPU.
	t.Parallel()
	s := newSim(t, Options{Capacity: 2, QueueLimit: 1, ReadLatency: Latency{Fixed: 2 * time.Second}})
	tok := s.defaultToken(t)
	type answer struct {
		status     int
		retryAfter string
		err        error
	}
	send := func() <-chan answer {
		ch := make(chan answer, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader([]byte(`{"query":"query { lead(id: \"x\") { id } }"}`)))
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				ch <- answer{err: err}
				return
			}
			resp.Body.Close()
			ch <- answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
		}()
		return ch
	}
	waitFor := func(what string, ok func(CapacityStats) bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if ok(s.Stats().Capacity) {
				return
			}
		}
		t.Fatalf("never %s: %+v", what, s.Stats().Capacity)
	}
	a, b := send(), send()
	waitFor("2 in flight", func(c CapacityStats) bool { return c.InFlight == 2 })
	c := send()
	waitFor("1 queued", func(c CapacityStats) bool { return c.Queued == 1 })
	shed := <-send()
	if shed.err != nil || shed.status != http.StatusServiceUnavailable || shed.retryAfter != "1" {
		t.Errorf("request to a full queue = %+v, want 503 with Retry-After 1", shed)
	}
	for i, ch := range []<-chan answer{a, b, c} {
		if got := <-ch; got.err != nil || got.status != http.StatusOK {
			t.Errorf("request %d = %+v, want 200", i, got)
		}
	}
	st := s.Stats()
	cs := st.Capacity
	if cs.Capacity != 2 || cs.QueueLimit != 1 || cs.PeakInFlight != 2 || cs.Shed != 1 || cs.Admitted != 3 || cs.Waited != 1 || cs.Served != 3 || cs.InFlight != 0 || cs.Queued != 0 {
		t.Errorf("capacity stats = %+v, want capacity 2, queue limit 1, peak 2, shed 1, admitted 3, waited 1, served 3, none left", cs)
	}
	if st.Rejections[RejectShed] != 1 || st.Requests[OpLead][http.StatusServiceUnavailable] != 1 {
		t.Errorf("rejections %v, lead answers %v: want one shed 503", st.Rejections, st.Requests[OpLead])
	}
}

// TestCapacityChange: the capacity changes at the times of CapacityChanges,
// on the Now clock, and GET /_sim/stats?requests carries it.
func TestCapacityChange(t *testing.T) {
	s := newSim(t, Options{Capacity: 64, CapacityChanges: []CapacityChange{{30 * time.Second, 32}, {time.Minute, 0}}})
	for _, step := range []struct {
		advance time.Duration
		want    int
	}{{0, 64}, {29 * time.Second, 64}, {time.Second, 32}, {30 * time.Second, 0}} {
		s.Advance(step.advance)
		if got := s.Stats().Capacity.Capacity; got != step.want {
			t.Errorf("capacity after %v more = %d, want %d", step.advance, got, step.want)
		}
	}
}

func TestParseCapacityChanges(t *testing.T) {
	tests := []struct {
		in      string
		want    []CapacityChange
		wantErr bool
	}{
		{"32@30s", []CapacityChange{{30 * time.Second, 32}}, false},
		{"32@30s, 0@1m", []CapacityChange{{30 * time.Second, 32}, {time.Minute, 0}}, false},
		{"32", nil, true},
		{"x@30s", nil, true},
		{"32@soon", nil, true},
		{"1.5@30s", nil, true},
	}
	for _, tc := range tests {
		got, err := ParseCapacityChanges(tc.in)
		if (err != nil) != tc.wantErr || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseCapacityChanges(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestCapacityOptionsChecked(t *testing.T) {
	for _, o := range []Options{
		{Capacity: -1},
		{QueueLimit: -1},
		{CapacityChanges: []CapacityChange{{0, 4}}},
		{CapacityChanges: []CapacityChange{{time.Second, 4}, {time.Second, 8}}},
		{CapacityChanges: []CapacityChange{{time.Second, -4}}},
	} {
		if _, err := o.withDefaults(); err == nil {
			t.Errorf("withDefaults(%+v) accepted it, want an error", o)
		}
	}
}
