package leadsim

import (
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestCreateLeadFormats(t *testing.T) {
	var logs strings.Builder
	s := newSim(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	tok := s.defaultToken(t)
	with := func(leadID string, kv ...any) map[string]any {
		in := applicant(leadID, "123450400")
		for i := 0; i+1 < len(kv); i += 2 {
			in[kv[i].(string)] = kv[i+1]
		}
		return in
	}
	tests := []struct {
		name  string
		input map[string]any
		want  []string // messages, in field order; none: the lead is created
	}{
		{"valid", with("f-ok"), nil},
		{"valid, optional fields absent", map[string]any{"dateOfBirth": "2000-02-29", "termsConsent": true, "leadId": "f-min"}, nil},
		{"valid, consent false", with("f-noconsent", "termsConsent", false, "socialSecurityNumber", "123450401"), nil},
		{"dateOfBirth US order", with("f-dob-us", "dateOfBirth", "01/01/1980"), []string{"dateOfBirth: must be a date in YYYY-MM-DD form"}},
		{"dateOfBirth without zero padding", with("f-dob-pad", "dateOfBirth", "1980-1-1"), []string{"dateOfBirth: must be a date in YYYY-MM-DD form"}},
		{"dateOfBirth with time", with("f-dob-time", "dateOfBirth", "1980-01-01T00:00:00Z"), []string{"dateOfBirth: must be a date in YYYY-MM-DD form"}},
		{"dateOfBirth empty", with("f-dob-empty", "dateOfBirth", ""), []string{"dateOfBirth: must be a date in YYYY-MM-DD form"}},
		{"dateOfBirth February 30", with("f-dob-feb", "dateOfBirth", "1980-02-30"), []string{"dateOfBirth: must be a real calendar date (YYYY-MM-DD)"}},
		{"dateOfBirth month 13", with("f-dob-13", "dateOfBirth", "1980-13-01"), []string{"dateOfBirth: must be a real calendar date (YYYY-MM-DD)"}},
		{"dateOfBirth February 29 of a common year", with("f-dob-29", "dateOfBirth", "1981-02-29"), []string{"dateOfBirth: must be a real calendar date (YYYY-MM-DD)"}},
		{"SSN with dashes", with("f-ssn-dash", "socialSecurityNumber", "123-45-9999"), []string{"socialSecurityNumber: must be 9 digits"}},
		{"SSN of 8 digits", with("f-ssn-8", "socialSecurityNumber", "12345678"), []string{"socialSecurityNumber: must be 9 digits"}},
		{"SSN of 10 digits", with("f-ssn-10", "socialSecurityNumber", "1234567890"), []string{"socialSecurityNumber: must be 9 digits"}},
		{"SSN empty", with("f-ssn-empty", "socialSecurityNumber", ""), []string{"socialSecurityNumber: must be 9 digits"}},
		{"SSN with non-ASCII digits", with("f-ssn-uni", "socialSecurityNumber", "12345678\u0669"), []string{"socialSecurityNumber: must be 9 digits"}},
		{"homePhone with country code", with("f-hp", "homePhone", "15551234567"), []string{"homePhone: must be 10 digits"}},
		{"homePhone formatted", with("f-hp-fmt", "homePhone", "(555) 123-4567"), []string{"homePhone: must be 10 digits"}},
		{"cellPhone with plus", with("f-cp", "cellPhone", "+5551234567"), []string{"cellPhone: must be 10 digits"}},
		{"zipCode ZIP+4", with("f-zip", "zipCode", "12345-6789"), []string{"zipCode: must be 5 digits"}},
		{"zipCode of 4 digits", with("f-zip4", "zipCode", "2345"), []string{"zipCode: must be 5 digits"}},
		{"state lower case", with("f-st-lc", "state", "ny"), []string{"state: must be two letters A-Z"}},
		{"state name", with("f-st-name", "state", "New York"), []string{"state: must be two letters A-Z"}},
		{"state with digit", with("f-st-d", "state", "N1"), []string{"state: must be two letters A-Z"}},
		{"every field wrong, consent false", with("f-all",
			"dateOfBirth", "01/01/1980", "homePhone", "555-123-4567", "cellPhone", "1", "state", "n", "zipCode", "1234",
			"socialSecurityNumber", "123-45-9999", "termsConsent", false), []string{
			"dateOfBirth: must be a date in YYYY-MM-DD form",
			"homePhone: must be 10 digits",
			"cellPhone: must be 10 digits",
			"state: must be two letters A-Z",
			"zipCode: must be 5 digits",
			"socialSecurityNumber: must be 9 digits",
		}},
	}
	refused := 0
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := s.Stats().LeadsCreated
			r := s.post(t, "/graphql", tok, createDoc, map[string]any{"input": tc.input})
			if r.status != http.StatusOK {
				t.Fatalf("createLead(%s) status = %d %s, want 200", tc.name, r.status, r.raw)
			}
			var got []string
			for _, e := range r.Errors {
				got = append(got, e.Message)
				if c, _ := e.Extensions["code"].(string); c != "BAD_USER_INPUT" {
					t.Errorf("createLead(%s) error %q has code %q, want BAD_USER_INPUT", tc.name, e.Message, c)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("createLead(%s) errors = %q, want %q (body %s)", tc.name, got, tc.want, r.raw)
			}
			created := s.Stats().LeadsCreated - before
			if tc.want == nil {
				if created != 1 || string(r.Data["createLead"]) == "null" {
					t.Errorf("createLead(%s) created %d leads, data %s; want 1 lead", tc.name, created, r.Data["createLead"])
				}
				return
			}
			refused++
			if created != 0 || string(r.Data["createLead"]) != "null" {
				t.Errorf("createLead(%s) created %d leads, data %s; want none and null", tc.name, created, r.Data["createLead"])
			}
			for k, v := range tc.input {
				if sv, ok := v.(string); ok && len(sv) > 2 && k != "leadId" && strings.Contains(r.raw, sv) {
					t.Errorf("createLead(%s) answer quotes the %s value: %s", tc.name, k, r.raw)
				}
			}
		})
	}
	st := s.Stats()
	if got := st.Rejections[RejectBadUserInput]; got != refused {
		t.Errorf("Rejections[%s] = %d, want %d", RejectBadUserInput, got, refused)
	}
	if got := st.ResultCodes[CodeConsentMissing]; got != 1 {
		t.Errorf("ResultCodes[1001] = %d, want 1 (consent false with valid formats only)", got)
	}
	if got := st.CreateCalls["f-all"]; got != 1 {
		t.Errorf("CreateCalls[f-all] = %d, want 1 (a refused call is still a call)", got)
	}
	for _, secret := range []string{"123-45-9999", "01/01/1980", "1980-02-30"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("logs contain %q: %s", secret, logs.String())
		}
	}
	// A refused SSN is not registered: the same SSN, well formed, is new.
	if l := s.create(t, tok, applicant("f-after", "123459999")); l.ResultCode == CodeDuplicate {
		t.Errorf("createLead after a refused 123-45-9999 = %d %q, want not a duplicate", l.ResultCode, l.Note)
	}
}
