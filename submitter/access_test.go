package submitter

import (
	"context"
	"errors"
	"testing"

	"github.com/bulkload/bulkload/leadsim"
)

// tokenRequests counts the simulator's token answers.
func tokenRequests(env *simEnv) int {
	n := 0
	for _, c := range env.srv.Stats().Requests[leadsim.OpToken] {
		n += c
	}
	return n
}

// TestSimAccessDenied: the lead endpoint refusing the application's
// access is an *AccessError (IsFatal), whatever its shape: a 401 that the
// token fetched after it does not cure, FORBIDDEN to createLead or
// submitLead (Lead.Write revoked). Once seen, every later call returns it
// at once, with no token request and no attempt. A lead read refused for
// want of Lead.Read is the row's, not the run's.
func TestSimAccessDenied(t *testing.T) {
	t.Run("tokens rejected", func(t *testing.T) {
		env := startSim(t, leadsim.Options{RejectTokensAfter: 1}, nil)
		if _, _, err := env.c.Create(context.Background(), simLead(1, false), nil); err != nil {
			t.Fatalf("first createLead: %v", err)
		}
		_, call, err := env.c.Create(context.Background(), simLead(2, false), nil)
		var de *AccessError
		if !errors.As(err, &de) || !IsFatal(err) || de.Status != 401 || call.Attempts != 2 {
			t.Fatalf("createLead after the API stopped taking tokens = %v (%d attempts), want an *AccessError after 2 attempts (one with a fresh token)", err, call.Attempts)
		}
		tokens, sent := tokenRequests(env), env.srv.Stats().Requests[leadsim.OpCreateLead]
		for i := range 5 {
			if _, _, err := env.c.Create(context.Background(), simLead(3+i, false), nil); !errors.As(err, &de) {
				t.Fatalf("createLead after the refusal = %v, want the *AccessError", err)
			}
		}
		if got := tokenRequests(env); got != tokens || sum(env.srv.Stats().Requests[leadsim.OpCreateLead]) != sum(sent) {
			t.Errorf("%d token requests and %v createLead answers after the refusal (were %d, %v), want none more", got, env.srv.Stats().Requests[leadsim.OpCreateLead], tokens, sent)
		}
	})
	t.Run("Lead.Write revoked", func(t *testing.T) {
		env := startSim(t, leadsim.Options{RevokeWriteAfter: 1}, nil)
		if _, _, err := env.c.Create(context.Background(), simLead(1, false), nil); err != nil {
			t.Fatalf("first createLead: %v", err)
		}
		_, _, err := env.c.Create(context.Background(), simLead(2, false), nil)
		var de *AccessError
		if !errors.As(err, &de) || de.Code != "FORBIDDEN" {
			t.Fatalf("createLead without Lead.Write = %v, want an *AccessError FORBIDDEN", err)
		}
		if _, _, err := env.c.Submit(context.Background(), "x", nil); !errors.As(err, &de) {
			t.Errorf("submitLead after the refusal = %v, want the *AccessError", err)
		}
	})
	t.Run("denied codes are a setting", func(t *testing.T) {
		env := startSim(t, leadsim.Options{RevokeWriteAfter: 1}, func(c *Config) { c.DeniedCodes = []string{"UNAUTHENTICATED"} })
		env.c.Create(context.Background(), simLead(1, false), nil)
		_, _, err := env.c.Create(context.Background(), simLead(2, false), nil)
		var ce *CallError
		if IsFatal(err) || !errors.As(err, &ce) || ce.Code != "FORBIDDEN" {
			t.Errorf("createLead answered FORBIDDEN, not a denied code = %v, want a row's *CallError", err)
		}
	})
	t.Run("lead read without Lead.Read", func(t *testing.T) {
		writer := leadsim.DefaultClient()
		writer.Roles = []string{leadsim.RoleWrite}
		env := startSim(t, leadsim.Options{Clients: []leadsim.Client{writer}}, nil)
		res, _, err := env.c.Create(context.Background(), simLead(1, false), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := env.c.Lead(context.Background(), res.ID, nil); err == nil || IsFatal(err) {
			t.Errorf("lead read without Lead.Read = %v, want a row's error, not fatal", err)
		}
		if _, _, err := env.c.Create(context.Background(), simLead(2, false), nil); err != nil {
			t.Errorf("createLead after a refused read = %v, want it sent", err)
		}
	})
}
