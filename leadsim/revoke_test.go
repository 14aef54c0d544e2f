package leadsim

import (
	"net/http"
	"testing"
)

// TestRevokeWriteAfter: after N createLead requests an administrator
// revokes Lead.Write and the tokens issued before: the next call is
// answered 401, a fresh token lacks the role (FORBIDDEN), and a grant
// restores it.
func TestRevokeWriteAfter(t *testing.T) {
	s := newSim(t, Options{RevokeWriteAfter: 2})
	tok := s.defaultToken(t)
	s.create(t, tok, applicant("L-1", "123456789"))
	s.create(t, tok, applicant("L-2", "123456780")) // the second goes through
	r := s.post(t, "/graphql", tok, createDoc, map[string]any{"input": applicant("L-3", "123456781")})
	if r.status != http.StatusUnauthorized || r.code() != "UNAUTHENTICATED" {
		t.Fatalf("createLead with a token issued before the revocation: %d %s, want 401 UNAUTHENTICATED", r.status, r.raw)
	}
	fresh := s.defaultToken(t)
	r = s.post(t, "/graphql", fresh, createDoc, map[string]any{"input": applicant("L-3", "123456781")})
	if r.status != http.StatusOK || r.code() != "FORBIDDEN" {
		t.Fatalf("createLead with a fresh token: %d %s, want FORBIDDEN", r.status, r.raw)
	}
	if err := s.GrantRoles(DefaultClientID, RoleWrite, RoleRead); err != nil {
		t.Fatal(err)
	}
	s.create(t, s.defaultToken(t), applicant("L-3", "123456781"))
	if n := s.Stats().Rejections[RejectForbidden]; n != 1 {
		t.Errorf("%d FORBIDDEN answers counted, want 1", n)
	}
}

// TestRejectTokensAfter: after N lead endpoint requests every token is
// answered 401, one issued a moment ago too; the identity provider goes on
// issuing them.
func TestRejectTokensAfter(t *testing.T) {
	s := newSim(t, Options{RejectTokensAfter: 1})
	s.create(t, s.defaultToken(t), applicant("L-1", "123456789"))
	for range 3 {
		r := s.post(t, "/graphql", s.defaultToken(t), createDoc, map[string]any{"input": applicant("L-2", "123456780")})
		if r.status != http.StatusUnauthorized || r.code() != "UNAUTHENTICATED" {
			t.Fatalf("createLead with a fresh token: %d %s, want 401 UNAUTHENTICATED", r.status, r.raw)
		}
	}
}
