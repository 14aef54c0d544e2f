package leadsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestParseLatencyDist reads each kind, writes it back the same, and
// refuses what is not one.
func TestParseLatencyDist(t *testing.T) {
	good := []struct {
		in   string
		want LatencyDist
	}{
		{"bimodal:50ms,2s,0.1", LatencyDist{Kind: DistBimodal, Fast: 50 * time.Millisecond, Slow: 2 * time.Second, Share: 0.1}},
		{"lognormal:100ms,1", LatencyDist{Kind: DistLognormal, Scale: 100 * time.Millisecond, Sigma: 1}},
		{"pareto:50ms,1.5", LatencyDist{Kind: DistPareto, Scale: 50 * time.Millisecond, Alpha: 1.5}},
		{" bimodal:0s, 1s, 1", LatencyDist{Kind: DistBimodal, Slow: time.Second, Share: 1}},
	}
	for _, tc := range good {
		got, err := ParseLatencyDist(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseLatencyDist(%q) = %+v, %v, want %+v", tc.in, got, err, tc.want)
			continue
		}
		if again, err := ParseLatencyDist(got.String()); err != nil || again != got {
			t.Errorf("ParseLatencyDist(%q) = %+v, %v, want %+v again", got.String(), again, err, got)
		}
	}
	for _, bad := range []string{"", "bimodal", "bimodal:50ms,2s", "bimodal:50ms,2s,1.5", "bimodal:-1s,2s,0.1",
		"lognormal:100ms,0", "lognormal:100ms", "pareto:50ms,-1", "pareto:x,1.5", "uniform:1s,2s", "bimodal:50ms,2s,NaN"} {
		if d, err := ParseLatencyDist(bad); err == nil {
			t.Errorf("ParseLatencyDist(%q) = %+v, want an error", bad, d)
		}
	}
}

// TestLatencyDistDraws: the draws have the shape asked for, whatever else
// happens (nothing else is drawn from here).
func TestLatencyDistDraws(t *testing.T) {
	rnd := &lockedRand{r: rand.New(rand.NewPCG(1, 2))}
	draws := func(d LatencyDist) []time.Duration {
		out := make([]time.Duration, 20000)
		for i := range out {
			out[i] = d.draw(rnd)
		}
		slices.Sort(out)
		return out
	}
	q := func(v []time.Duration, p float64) time.Duration { return v[int(p*float64(len(v)-1))] }
	t.Run("bimodal", func(t *testing.T) {
		v := draws(LatencyDist{Kind: DistBimodal, Fast: 50 * time.Millisecond, Slow: 2 * time.Second, Share: 0.1})
		slow := len(v) - slices.Index(v, 2*time.Second)
		if share := float64(slow) / float64(len(v)); math.Abs(share-0.1) > 0.01 || v[0] != 50*time.Millisecond || v[len(v)-1] != 2*time.Second {
			t.Errorf("bimodal 50ms/2s/0.1: %.3f slow, least %v, most %v; want about 0.1, 50ms, 2s", share, v[0], v[len(v)-1])
		}
	})
	t.Run("lognormal", func(t *testing.T) {
		v := draws(LatencyDist{Kind: DistLognormal, Scale: 100 * time.Millisecond, Sigma: 1})
		// The median is the scale; the 84th percentile e times it.
		if m, p84 := q(v, 0.5), q(v, 0.8413); m < 95*time.Millisecond || m > 105*time.Millisecond || p84 < 255*time.Millisecond || p84 > 290*time.Millisecond {
			t.Errorf("lognormal 100ms,1: median %v, p84 %v; want about 100ms and 272ms", m, p84)
		}
	})
	t.Run("pareto", func(t *testing.T) {
		v := draws(LatencyDist{Kind: DistPareto, Scale: 50 * time.Millisecond, Alpha: 1.5})
		// The least is the scale, the median scale × 2^(1/alpha) = 79 ms.
		if v[0] < 50*time.Millisecond || q(v, 0.5) < 75*time.Millisecond || q(v, 0.5) > 84*time.Millisecond {
			t.Errorf("pareto 50ms,1.5: least %v, median %v; want 50ms and about 79ms", v[0], q(v, 0.5))
		}
		if heavy := draws(LatencyDist{Kind: DistPareto, Scale: time.Second, Alpha: 0.05}); heavy[len(heavy)-1] != maxDraw {
			t.Errorf("pareto 1s,0.05: most %v, want the bound %v", heavy[len(heavy)-1], maxDraw)
		}
	})
}

// TestCreateLatencyDistApplies: createLead sleeps the distribution's draw
// (an hour here, so the answer cannot come before the client gives up),
// and submitLead's own latency is left alone.
func TestCreateLatencyDistApplies(t *testing.T) {
	s := newSim(t, Options{CreateLatency: Latency{Dist: LatencyDist{Kind: DistBimodal, Slow: time.Hour, Share: 1}}})
	tok := s.defaultToken(t)
	if r := s.post(t, "/graphql", tok, `query { lead(id: "x") { id } }`, nil); r.status != http.StatusOK {
		t.Fatalf("lead query = %d, want 200 at once", r.status)
	}
	b, _ := json.Marshal(map[string]any{"query": createDoc, "variables": map[string]any{"input": applicant("slow-1", "")}})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/graphql", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("createLead under a 1h latency draw answered %d, want it held", resp.StatusCode)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("createLead under a 1h latency draw: %v, want the client's deadline", err)
	}
}

// TestFail503RetryAfter: the injected 503s carry the Retry-After asked
// for, in each form, and none without it; New refuses what is no form.
func TestFail503RetryAfter(t *testing.T) {
	tests := []struct{ form, want string }{
		{"", ""},
		{"2", "2"},
		{"1.5", "1.5"},
		{"99999999999999999999", "99999999999999999999"},
		{"date+2s", "Sun, 22 Nov 2026 05:00:02 GMT"}, // the test clock's start plus 2 s
	}
	for _, tc := range tests {
		t.Run(tc.form, func(t *testing.T) {
			s := newSim(t, Options{Fail503: 1, Fail503RetryAfter: tc.form})
			tok := s.defaultToken(t)
			r := s.post(t, "/graphql", tok, createDoc, map[string]any{"input": applicant("ra-1", "")})
			if r.status != http.StatusServiceUnavailable {
				t.Fatalf("createLead = %d, want 503", r.status)
			}
			if got := r.header.Get("Retry-After"); got != tc.want {
				t.Errorf("Retry-After = %q, want %q", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"-1", "2s", "1e3", "date+x", "soon"} {
		if s, err := New(Options{Fail503: 0.1, Fail503RetryAfter: bad, SigningKey: testKey(t)}); err == nil {
			s.Close()
			t.Errorf("New(Fail503RetryAfter %q) succeeded, want an error", bad)
		}
		if s, err := New(Options{ProxyReset: 0.1, ProxyResetRetryAfter: bad, SigningKey: testKey(t)}); err == nil {
			s.Close()
			t.Errorf("New(ProxyResetRetryAfter %q) succeeded, want an error", bad)
		}
	}
}

// TestFaultOp: FaultOp keeps the injected faults to one operation. With
// every call failing, a createLead goes through and its submitLead is
// answered 503 with the Retry-After (submitLead), or the createLead is
// answered 503 (createLead); New refuses any other operation.
func TestFaultOp(t *testing.T) {
	s := newSim(t, Options{Fail503: 1, Fail503RetryAfter: "300", FaultOp: OpSubmitLead})
	tok := s.defaultToken(t)
	l := s.create(t, tok, applicant("fo-1", "123450400"))
	if l.ID == "" {
		t.Fatalf("createLead = %+v, want a lead: only submitLead is faulted", l)
	}
	r := s.post(t, "/graphql", tok, submitDoc, map[string]any{"id": l.ID})
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "300" {
		t.Errorf("submitLead = %d Retry-After %q, want 503 and 300", r.status, r.header.Get("Retry-After"))
	}
	if st := s.Stats(); st.Submissions != 0 || st.Rejections[RejectFault503] != 1 {
		t.Errorf("Stats: %d submissions, %d 503s; want 0 and 1", st.Submissions, st.Rejections[RejectFault503])
	}

	s = newSim(t, Options{Fail503: 1, FaultOp: OpCreateLead})
	tok = s.defaultToken(t)
	r = s.post(t, "/graphql", tok, createDoc, map[string]any{"input": applicant("fo-2", "")})
	if r.status != http.StatusServiceUnavailable {
		t.Errorf("createLead = %d, want 503", r.status)
	}

	for _, bad := range []string{"lead", "CreateLead", "both"} {
		if s, err := New(Options{Fail503: 0.1, FaultOp: bad, SigningKey: testKey(t)}); err == nil {
			s.Close()
			t.Errorf("New(FaultOp %q) succeeded, want an error", bad)
		}
	}
}
