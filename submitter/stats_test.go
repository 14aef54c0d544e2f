package submitter

import (
	"context"
	"testing"
	"time"

	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/redact"
)

// TestSimStatsByOutcome: the client's per-operation outcome counts agree,
// attempt for attempt, with what the simulator answered, under 429s,
// 503s, 500s, dropped connections and GraphQL errors.
func TestSimStatsByOutcome(t *testing.T) {
	t.Parallel()
	env := startSim(t, leadsim.Options{Fail503: 0.15, Fail500: 0.05, DropAfter: 0.05, RateLimit: 300, RateBurst: 2,
		Seed: 11, SigningKey: sharedKey(t)}, func(cfg *Config) { cfg.MaxAttempts = 10 })
	out := runLeads(t, env.c, 0, 40, 8, true)
	ctx := context.Background()
	submits := 0
	for _, o := range out {
		if o.err == nil && o.res.ID != "" {
			env.c.Submit(ctx, o.res.ID, redact.New(o.in))
			submits++
		}
	}
	const unknown = 3
	for range unknown {
		if _, _, err := env.c.Submit(ctx, "no-such-lead", nil); err == nil {
			t.Fatalf("Submit(no-such-lead) = nil error, want a GraphQL error")
		}
	}
	if _, _, err := env.c.Lead(ctx, out[0].res.ID, redact.New(out[0].in)); err != nil && out[0].err == nil {
		t.Fatalf("Lead(%s) = %v", out[0].res.ID, err)
	}

	st := env.c.Stats()
	req := env.srv.Stats().Requests
	for _, tc := range []struct {
		op    string
		got   OpStats
		calls int
	}{
		{leadsim.OpCreateLead, st.CreateLead, len(out)},
		{leadsim.OpSubmitLead, st.SubmitLead, submits + unknown},
		{"lead", st.Lead, 1},
	} {
		r := req[tc.op]
		if tc.got.Calls != int64(tc.calls) {
			t.Errorf("%s: Calls = %d, want %d", tc.op, tc.got.Calls, tc.calls)
		}
		if tc.got.OK+tc.got.GraphQLError != int64(r[200]) || tc.got.Throttled != int64(r[429]) ||
			tc.got.ServerError != int64(r[500]+r[503]) || tc.got.Network != int64(r[0]) || tc.got.Other != 0 {
			t.Errorf("%s: client counted %+v, the simulator answered %v", tc.op, tc.got, r)
		}
		if tc.got.Retries != tc.got.Attempts()-tc.got.Calls {
			t.Errorf("%s: Retries = %d, want attempts %d - calls %d", tc.op, tc.got.Retries, tc.got.Attempts(), tc.got.Calls)
		}
	}
	// Dropped submits that went through are refused when sent again.
	if st.SubmitLead.GraphQLError < unknown {
		t.Errorf("submitLead GraphQL errors = %d, want at least %d (the unknown ids)", st.SubmitLead.GraphQLError, unknown)
	}
	if st.CreateLead.Throttled == 0 || st.CreateLead.ServerError == 0 || st.CreateLead.Network == 0 {
		t.Errorf("createLead outcomes %+v: want some 429s, 5xx and dropped connections from this seed", st.CreateLead)
	}
	total := st.CreateLead.Attempts() + st.SubmitLead.Attempts() + st.Lead.Attempts() + st.Preflight.Attempts()
	if total != st.Attempts || st.TokensFetched != int64(env.srv.Stats().TokensIssued) {
		t.Errorf("attempts by outcome add up to %d, Attempts = %d; tokens fetched %d, issued %d",
			total, st.Attempts, st.TokensFetched, env.srv.Stats().TokensIssued)
	}
}

// TestSumClock: the calls' waits between attempts sum those ended and
// those under way at the moment asked, so that a Retry-After of minutes
// counts while it is waited out (the house check's rahuge: the progress
// line said "bound by input" while every 503's row waited).
func TestSumClock(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	var c sumClock
	steps := []struct {
		name string
		do   func()
		now  float64
		want time.Duration
	}{
		{"none", func() {}, 0, 0},
		{"one under way", func() { c.enter(at(1)) }, 6, 5 * time.Second},
		{"two under way", func() { c.enter(at(4)) }, 6, 7 * time.Second},
		{"the first ends", func() { c.leave(at(1), at(7)) }, 8, 10 * time.Second},
		{"the second ends", func() { c.leave(at(4), at(9)) }, 100, 11 * time.Second},
		{"a third, long, under way", func() { c.enter(at(200)) }, 3800, 3611 * time.Second},
	}
	for _, s := range steps {
		s.do()
		if got := c.total(at(s.now)); got != s.want {
			t.Errorf("%s: total(%vs) = %v, want %v", s.name, s.now, got, s.want)
		}
	}
}
