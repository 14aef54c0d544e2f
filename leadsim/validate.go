package leadsim

import (
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/bulkload/bulkload/leadsim/graph/leadapi"
)

// Messages of the format violations of createLead: "<field>: <rule>".
// They never quote the value, which may be an SSN or a date of birth.
const (
	ruleDate      = "must be a date in YYYY-MM-DD form"
	ruleRealDate  = "must be a real calendar date (YYYY-MM-DD)"
	rulePhone     = "must be 10 digits"
	ruleSSN       = "must be 9 digits"
	ruleZip       = "must be 5 digits"
	ruleState     = "must be two letters A-Z"
	codeUserInput = "BAD_USER_INPUT"
)

// checkLeadInput returns one BAD_USER_INPUT error per field of in that
// breaks a format of the spec's sections 2 and 8, in schema order, or nil.
// Absent (null) optional fields are not checked; an empty string is a value
// and must meet the format like any other. Money fields are Int in the
// schema, so the executor has already refused anything else.
func checkLeadInput(in *leadapi.LeadInput) []*gqlerror.Error {
	var errs []*gqlerror.Error
	add := func(field, rule string) {
		errs = append(errs, &gqlerror.Error{Message: field + ": " + rule, Extensions: map[string]any{"code": codeUserInput}})
	}
	if rule := dateRule(in.DateOfBirth); rule != "" {
		add("dateOfBirth", rule)
	}
	checks := []struct {
		field string
		value *string
		ok    func(string) bool
		rule  string
	}{
		{"homePhone", in.HomePhone, digits(10), rulePhone},
		{"cellPhone", in.CellPhone, digits(10), rulePhone},
		{"state", in.State, isState, ruleState},
		{"zipCode", in.ZipCode, digits(5), ruleZip},
		{"socialSecurityNumber", in.SocialSecurityNumber, digits(9), ruleSSN},
	}
	for _, c := range checks {
		if c.value != nil && !c.ok(*c.value) {
			add(c.field, c.rule)
		}
	}
	return errs
}

// dateRule returns the rule s breaks as a date of birth, or "".
func dateRule(s string) string {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' || !digits(4)(s[:4]) || !digits(2)(s[5:7]) || !digits(2)(s[8:]) {
		return ruleDate
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		return ruleRealDate
	}
	return ""
}

// digits returns a check that a string is exactly n ASCII digits.
func digits(n int) func(string) bool {
	return func(s string) bool {
		if len(s) != n {
			return false
		}
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return true
	}
}

// isState reports whether s is two ASCII capital letters.
func isState(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}
