package leadsim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestCreditScore(t *testing.T) {
	tests := []struct {
		ssn       string
		wantScore int
		wantCode  int
	}{
		{"123450000", 300, CodeComplete},
		{"123450299", 599, CodeComplete},
		{"123450300", 600, 1013},
		{"123450349", 649, 1013},
		{"123450350", 650, 1014},
		{"123450400", 700, 1015},
		{"123450450", 750, 1016},
		{"123450500", 800, 1017},
		{"123450550", 850, 1017},
		{"123450551", 300, CodeComplete},
		{"123459999", 300 + 9999%551, CodeComplete},
		{"123-45-0400", 700, 1015},
		{"12345abcd", 300 + 2345%551, CodeComplete},
		{"12", 312, CodeComplete},
		{"", 300, CodeComplete},
	}
	for _, tc := range tests {
		t.Run(tc.ssn, func(t *testing.T) {
			got := CreditScore(tc.ssn)
			if got != tc.wantScore {
				t.Fatalf("CreditScore(%q) = %d, want %d", tc.ssn, got, tc.wantScore)
			}
			code := CodeComplete
			if got >= 600 {
				code = QualifiedCode(got)
			}
			if code != tc.wantCode {
				t.Errorf("code of score %d = %d, want %d", got, code, tc.wantCode)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestCreateLeadOutcomes(t *testing.T) {
	s := newSim(t, Options{})
	tok := s.defaultToken(t)
	first := s.create(t, tok, applicant("first", "999990300"))
	contactFirst := s.create(t, tok, map[string]any{"dateOfBirth": "1980-01-01", "email": "dup@example.com", "homePhone": "5551234567", "termsConsent": true, "leadId": "c-first"})

	noConsent := applicant("no-consent", "999990450")
	noConsent["termsConsent"] = false
	absentConsent := applicant("absent-consent", "999990451")
	delete(absentConsent, "termsConsent")
	noSSN := applicant("no-ssn", "")
	noLeadID := applicant("x", "888880000")
	delete(noLeadID, "leadId")

	tests := []struct {
		name     string
		input    map[string]any
		wantCode int
		wantNote string
		wantBid  *string
	}{
		{"consent false", noConsent, 1001, "Terms consent not given; lead not processed", nil},
		{"consent absent", absentConsent, 1001, "Terms consent not given; lead not processed", nil},
		{"duplicate by SSN", applicant("dup-ssn", "999990300"), 1002, "Duplicate of lead " + first.ID, nil},
		{"duplicate by email and phone", map[string]any{"dateOfBirth": "1980-01-01", "email": "dup@example.com", "homePhone": "5551234567", "termsConsent": true, "socialSecurityNumber": "777770500", "leadId": "c-dup"}, 1002, "Duplicate of lead " + contactFirst.ID, nil},
		{"same email other phone", map[string]any{"dateOfBirth": "1980-01-01", "email": "dup@example.com", "homePhone": "5559999999", "termsConsent": true, "leadId": "c-other"}, 1020, NoteNoSSN, nil},
		{"no SSN", noSSN, 1020, "Processing complete: no SSN, credit report not pulled; not qualified", nil},
		{"low score", applicant("low", "123450299"), 1020, "Processing complete: credit score below 600; not qualified", nil},
		{"no leadId", noLeadID, 1020, NoteLowScore, nil},
		{"1013", applicant("q13", "123450349"), 1013, "Qualified; awaiting submission", ptr("$15.00")},
		{"1014", applicant("q14", "123450350"), 1014, NoteQualifiedManual, ptr("$22.50")},
		{"1015", applicant("q15", "123450400"), 1015, NoteQualifiedManual, ptr("$30.00")},
		{"1016", applicant("q16", "123450450"), 1016, NoteQualifiedManual, ptr("$37.50")},
		{"1017", applicant("q17", "123450550"), 1017, NoteQualifiedManual, ptr("$45.00")},
		{"consent-refused SSN is not registered", applicant("after-refusal", "999990450"), 1016, NoteQualifiedManual, ptr("$37.50")},
	}
	ids := map[string]bool{first.ID: true, contactFirst.ID: true}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := s.create(t, tok, tc.input)
			if l.ResultCode != tc.wantCode || l.Note != tc.wantNote {
				t.Errorf("createLead(%s) = %d %q, want %d %q", tc.name, l.ResultCode, l.Note, tc.wantCode, tc.wantNote)
			}
			if (l.BidValue == nil) != (tc.wantBid == nil) || (l.BidValue != nil && *l.BidValue != *tc.wantBid) {
				t.Errorf("createLead(%s).bidValue = %v, want %v", tc.name, deref(l.BidValue), deref(tc.wantBid))
			}
			wantPartner, hasID := tc.input["leadId"].(string)
			if (l.PartnerLeadID == nil) == hasID || (hasID && *l.PartnerLeadID != wantPartner) {
				t.Errorf("createLead(%s).partnerLeadId = %v, want %q", tc.name, deref(l.PartnerLeadID), wantPartner)
			}
			if len(l.ID) != 36 || ids[l.ID] {
				t.Errorf("createLead(%s).id = %q, want a new UUID", tc.name, l.ID)
			}
			ids[l.ID] = true
			if ssn, _ := tc.input["socialSecurityNumber"].(string); ssn != "" && strings.Contains(l.Note, ssn) {
				t.Errorf("note %q contains the SSN", l.Note)
			}
		})
	}
	st := s.Stats()
	if st.LeadsCreated != len(tests)+2 || st.ResultCodes[1002] != 2 || st.ResultCodes[1001] != 2 || st.CreateCalls["q13"] != 1 {
		t.Errorf("Stats = created %d codes %v calls[q13] %d, want %d created, two 1001, two 1002, one call", st.LeadsCreated, st.ResultCodes, st.CreateCalls["q13"], len(tests)+2)
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

const submitDoc = `mutation($id: String!) { submitLead(id: $id) { id resultCode note bidValue } }`

func TestSubmitLead(t *testing.T) {
	other := Client{ID: "other", Secret: "o", Roles: []string{RoleWrite, RoleRead}, Granted: true}
	s := newSim(t, Options{Clients: []Client{DefaultClient(), other}})
	tok := s.defaultToken(t)
	qualified := s.create(t, tok, applicant("s-q", "222220400"))
	low := s.create(t, tok, applicant("s-low", "222220001"))
	foreign := s.create(t, s.token(t, "other", "o"), applicant("s-foreign", "222220450"))

	tests := []struct {
		name     string
		id       string
		wantErr  string
		wantNote string
	}{
		{"qualified", qualified.ID, "", "Submitted"},
		{"again", qualified.ID, "lead " + qualified.ID + " already submitted", ""},
		{"not qualified", low.ID, "lead " + low.ID + " is not qualified (resultCode 1020)", ""},
		{"unknown", "00000000-0000-0000-0000-000000000000", "lead 00000000-0000-0000-0000-000000000000 not found", ""},
		{"other partner's lead", foreign.ID, "lead " + foreign.ID + " not found", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.post(t, "/graphql", tok, submitDoc, map[string]any{"id": tc.id})
			if r.status != http.StatusOK {
				t.Fatalf("submitLead status %d, want 200: %s", r.status, r.raw)
			}
			if tc.wantErr != "" {
				if len(r.Errors) != 1 || r.Errors[0].Message != tc.wantErr || r.code() != "SUBMIT_REFUSED" {
					t.Errorf("submitLead(%s) = %s, want error %q SUBMIT_REFUSED", tc.name, r.raw, tc.wantErr)
				}
				return
			}
			var l wireLead
			if err := json.Unmarshal(r.Data["submitLead"], &l); err != nil || len(r.Errors) > 0 {
				t.Fatalf("submitLead(%s) = %s, want the lead", tc.name, r.raw)
			}
			if l.ID != tc.id || l.Note != tc.wantNote || l.ResultCode != qualified.ResultCode {
				t.Errorf("submitLead(%s) = %+v, want id %s note %q", tc.name, l, tc.id, tc.wantNote)
			}
		})
	}
	st := s.Stats()
	if st.Submissions != 1 || st.Rejections[RejectSubmitRefused] != 4 || st.Requests[OpSubmitLead][200] != 5 {
		t.Errorf("Stats: submissions %d, refused %d, submitLead 200s %d; want 1, 4, 5", st.Submissions, st.Rejections[RejectSubmitRefused], st.Requests[OpSubmitLead][200])
	}
	// lead(id) reads the submitted state back.
	r := s.post(t, "/graphql", tok, `query($id: String!) { lead(id: $id) { id resultCode note bidValue } }`, map[string]any{"id": qualified.ID})
	var l wireLead
	if err := json.Unmarshal(r.Data["lead"], &l); err != nil || l.Note != NoteSubmitted || l.ResultCode != 1015 || deref(l.BidValue) != "$30.00" {
		t.Errorf("lead(%s) = %s, want resultCode 1015, note Submitted, bid $30.00", qualified.ID, r.raw)
	}
}

func TestAutoSubmit(t *testing.T) {
	auto := Client{ID: "auto", Secret: "a", Roles: []string{RoleWrite}, Granted: true, AutoSubmit: true}
	s := newSim(t, Options{Clients: []Client{auto}})
	tok := s.token(t, "auto", "a")
	l := s.create(t, tok, applicant("auto-1", "333330500"))
	if l.ResultCode != 1017 || l.Note != NoteQualifiedAuto || deref(l.BidValue) != "$45.00" {
		t.Fatalf("createLead for an auto partner = %+v, want 1017 %q $45.00", l, NoteQualifiedAuto)
	}
	low := s.create(t, tok, applicant("auto-2", "333330000"))
	r := s.post(t, "/graphql", tok, submitDoc, map[string]any{"id": l.ID})
	if r.code() != "SUBMIT_REFUSED" || !strings.Contains(r.Errors[0].Message, "already submitted") {
		t.Errorf("submitLead of an auto-submitted lead = %s, want SUBMIT_REFUSED already submitted", r.raw)
	}
	st := s.Stats()
	if st.Submissions != 1 || st.AutoSubmissions != 1 || low.ResultCode != CodeComplete {
		t.Errorf("Stats: submissions %d auto %d, want 1 and 1", st.Submissions, st.AutoSubmissions)
	}
}

func TestPermissions(t *testing.T) {
	s := newSim(t, Options{Clients: []Client{
		{ID: "reader", Secret: "r", Roles: []string{RoleRead}, Granted: true},
		{ID: "writer", Secret: "w", Roles: []string{RoleWrite}, Granted: true},
	}})
	reader, writer := s.token(t, "reader", "r"), s.token(t, "writer", "w")
	tests := []struct {
		name, token, query string
		vars               map[string]any
		wantCode           string
	}{
		{"create without Lead.Write", reader, createDoc, map[string]any{"input": applicant("p-1", "444440400")}, "FORBIDDEN"},
		{"submit without Lead.Write", reader, submitDoc, map[string]any{"id": "x"}, "FORBIDDEN"},
		{"read without Lead.Read", writer, `query { lead(id: "x") { id } }`, nil, "FORBIDDEN"},
		{"read with Lead.Read", reader, `query { lead(id: "x") { id } }`, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.post(t, "/graphql", tc.token, tc.query, tc.vars)
			if r.status != http.StatusOK || r.code() != tc.wantCode {
				t.Errorf("%s = %d %s, want 200 code %q", tc.name, r.status, r.raw, tc.wantCode)
			}
		})
	}
	st := s.Stats()
	if st.Rejections[RejectForbidden] != 3 || st.CreateCalls["p-1"] != 0 {
		t.Errorf("Stats: forbidden %d, calls[p-1] %d; want 3, 0", st.Rejections[RejectForbidden], st.CreateCalls["p-1"])
	}
}

func TestCreditReport(t *testing.T) {
	s := newSim(t, Options{})
	tok := s.defaultToken(t)
	pulled := s.create(t, tok, applicant("cr-1", "555550001"))
	notPulled := s.create(t, tok, applicant("cr-2", ""))
	const doc = `query($id: String!) { creditReport(id: $id) { id status } }`

	r := s.post(t, "/debt-core/graphql", tok, doc, map[string]any{"id": pulled.ID})
	var cr struct{ ID, Status string }
	if err := json.Unmarshal(r.Data["creditReport"], &cr); err != nil || cr.Status != "COMPLETE" || len(cr.ID) != 36 || cr.ID == pulled.ID {
		t.Fatalf("creditReport(lead id) = %s, want a COMPLETE report with its own id", r.raw)
	}
	tests := []struct {
		name, id string
		wantNull bool
	}{
		{"by report id", cr.ID, false},
		{"lead without credit pull", notPulled.ID, true},
		{"unknown", "nope", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.post(t, "/debt-core/graphql", tok, doc, map[string]any{"id": tc.id})
			if gotNull := string(r.Data["creditReport"]) == "null"; gotNull != tc.wantNull || len(r.Errors) > 0 {
				t.Errorf("creditReport(%s) = %s, want null %v", tc.name, r.raw, tc.wantNull)
			}
		})
	}
	if r := s.post(t, "/debt-core/graphql", "", doc, map[string]any{"id": cr.ID}); r.status != http.StatusUnauthorized {
		t.Errorf("creditReport without a token = %d, want 401", r.status)
	}
	if r := s.post(t, "/debt-core/graphql", tok, createDoc, map[string]any{"input": applicant("cr-3", "")}); r.status != http.StatusUnprocessableEntity {
		t.Errorf("createLead on the debt core endpoint = %d, want 422", r.status)
	}
}
