package leadsim

import (
	"net/http"
	"strings"
	"testing"
)

func TestEchoPII(t *testing.T) {
	forms := []string{"123-45-0400", "123 45 0400", "123450400", "01/02/1990", "1/2/90", "1990-01-02", "19900102", "January 2, 1990"}
	hasAll := func(what, text string) {
		t.Helper()
		for _, f := range forms {
			if !strings.Contains(text, f) {
				t.Errorf("%s = %q: no echo of %q", what, text, f)
			}
		}
	}
	s := newSim(t, Options{EchoPII: true})
	tok := s.defaultToken(t)
	q := s.create(t, tok, applicant("e-1", "123450400"))
	hasAll("createLead note", q.Note)
	hasAll("createLead bidValue", deref(q.BidValue))
	if !strings.HasPrefix(q.Note, NoteQualifiedManual+" [") || !strings.HasPrefix(deref(q.BidValue), "$30.00 (") {
		t.Errorf("createLead = note %q bid %q, want the usual note and bid with the echo after them", q.Note, deref(q.BidValue))
	}
	dup := s.create(t, tok, applicant("e-2", "123450400"))
	if !strings.HasPrefix(dup.Note, NoteDuplicatePrefix+q.ID+" [") {
		t.Errorf("duplicate note = %q, want %q then the echo", dup.Note, NoteDuplicatePrefix+q.ID)
	}

	r := s.post(t, "/graphql", tok, submitDoc, map[string]any{"id": q.ID})
	hasAll("submitLead note", string(r.Data["submitLead"]))
	r = s.post(t, "/graphql", tok, submitDoc, map[string]any{"id": q.ID})
	if len(r.Errors) != 1 || !strings.HasPrefix(r.Errors[0].Message, "lead "+q.ID+" already submitted [") || !strings.HasPrefix(r.code(), "SUBMIT_REFUSED:") {
		t.Errorf("submitLead again = %s, want SUBMIT_REFUSED with the echo", r.raw)
	}
	hasAll("submitLead error", r.Errors[0].Message)
	if c := r.code(); !strings.Contains(c, "123-45-0400") || !strings.Contains(c, "01/02/1990") || !strings.Contains(c, "19900102") {
		t.Errorf("submitLead error code = %q, want the echo", c)
	}
	r = s.post(t, "/graphql", tok, `query($id: String!) { lead(id: $id) { note } }`, map[string]any{"id": q.ID})
	hasAll("lead note", string(r.Data["lead"]))

	bad := applicant("e-3", "123450400")
	bad["zipCode"] = "1"
	r = s.post(t, "/graphql", tok, createDoc, map[string]any{"input": bad})
	if len(r.Errors) != 1 || !strings.HasPrefix(r.code(), "BAD_USER_INPUT:") {
		t.Fatalf("createLead with a bad zip = %s, want BAD_USER_INPUT with the echo", r.raw)
	}
	hasAll("BAD_USER_INPUT message", r.Errors[0].Message)

	f := newSim(t, Options{EchoPII: true, Fail500: 1})
	r = f.post(t, "/graphql", f.defaultToken(t), createDoc, map[string]any{"input": applicant("e-4", "123450400")})
	if r.status != http.StatusInternalServerError || !strings.HasPrefix(r.code(), "INTERNAL_SERVER_ERROR:") {
		t.Fatalf("createLead under Fail500 = %d %s, want 500 with the echo", r.status, r.raw)
	}
	hasAll("500 message", r.Errors[0].Message)

	// Off by default: no note carries the SSN.
	plain := newSim(t, Options{})
	if l := plain.create(t, plain.defaultToken(t), applicant("e-5", "123450400")); l.Note != NoteQualifiedManual || deref(l.BidValue) != "$30.00" {
		t.Errorf("without EchoPII: note %q bid %q, want %q and $30.00", l.Note, deref(l.BidValue), NoteQualifiedManual)
	}
}
