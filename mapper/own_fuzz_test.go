package mapper

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/redact"
)

// ownContexts are the text around a value in a cell or an error: none, a
// quote, a label glued or spaced.
var ownContexts = [][2]string{{"", ""}, {`"`, `"`}, {"column x is ", "."}, {"SSN:", ";"}, {"dob=", ""}, {"(", ")"}, {"x", "y"}, {"E_", "_x"}}

// FuzzOwnValuesHidden takes the mapper's own parsers as the oracle: for
// any string s that normSSN reads as an SSN or normDate as a date of birth
// (month first or day first), a row whose own SSN or date of birth it is
// (its own cell written in a form the mapper reads, chosen by form) never
// shows s, in any context, in another column's error (shownValue), and
// package redact, given the row's values as the upload sends them, cuts s
// out: no digits of the SSN in order are left, and s is gone.
//
//	go test ./mapper -run '^$' -fuzz FuzzOwnValuesHidden -fuzztime 10m
func FuzzOwnValuesHidden(f *testing.F) {
	for _, s := range []string{"231-45-6789", "231 45 6789", "231456789", "2-3-1-4-5-6-7-8-9", " 231  45 6789", "1980-01-02", "01/02/1980", "1/2/1980", "02/01/1980", "12/31/1999"} {
		f.Add(s, uint8(0), uint8(0), false)
		f.Add(s, uint8(1), uint8(2), true)
	}
	f.Fuzz(func(t *testing.T, s string, form, ctx uint8, dayFirst bool) {
		m := New(Options{Now: testNow, DayFirst: dayFirst})
		var a arena
		v := validRow()
		v[lead.DateOfBirth] = "1980-02-29" // read alike in either order
		ssn, ssnOK := normSSN(s, &a)
		if ssnOK == "" {
			// The row's own cell, written as the mapper reads it.
			switch form % 3 {
			case 0:
				v[lead.SocialSecurityNumber] = ssn
			case 1:
				v[lead.SocialSecurityNumber] = ssn[:3] + "-" + ssn[3:5] + "-" + ssn[5:]
			default:
				v[lead.SocialSecurityNumber] = ssn[:3] + " " + ssn[3:5] + " " + ssn[5:]
			}
		}
		iso, dobOK := normDate(s, m.today, dayFirst, &a)
		if dobOK == "" {
			y, mo, d := iso[:4], iso[5:7], iso[8:]
			switch {
			case form%3 == 0:
				v[lead.DateOfBirth] = iso
			case dayFirst:
				v[lead.DateOfBirth] = fmt.Sprintf("%s/%s/%s", d, mo, y)
			default:
				v[lead.DateOfBirth] = fmt.Sprintf("%s/%s/%s", mo, d, y)
			}
			if got, rule := normDate(v[lead.DateOfBirth], m.today, dayFirst, &a); rule != "" || got != iso {
				t.Fatalf("the row's own cell %q reads as %q (%s), want %q", v[lead.DateOfBirth], got, rule, iso)
			}
		}
		if ssnOK != "" && dobOK != "" {
			return // s is neither: nothing of the row's own to find
		}
		c := ownContexts[int(ctx)%len(ownContexts)]
		cell := c[0] + s + c[1]
		if got := m.shownValue(lead.State, cell, &v); got != "" {
			t.Fatalf("shownValue(%q) with SSN %q, dateOfBirth %q = %q, want it hidden", cell, v[lead.SocialSecurityNumber], v[lead.DateOfBirth], got)
		}
		// The redaction of the service's answers: the row's values as the
		// upload sends them (the mapped SSN and date).
		in, errs := mapRow(m, 1, &v)
		if len(errs) != 0 {
			t.Fatalf("the row with SSN %q, dateOfBirth %q is invalid: %v", v[lead.SocialSecurityNumber], v[lead.DateOfBirth], errs)
		}
		out := redact.NewOwn(in.SocialSecurityNumber, in.DateOfBirth).Cut(cell, false)
		if ssnOK == "" && strings.Contains(stripSSNSeps(out), ssn) {
			t.Fatalf("Cut(%q) = %q: the SSN %s is still there", cell, out, ssn)
		}
		if strings.Contains(out, strings.TrimSpace(s)) {
			t.Fatalf("Cut(%q) = %q: %q is still there", cell, out, s)
		}
	})
}

// stripSSNSeps removes every character redact.IsSSNSep accepts between
// digits.
func stripSSNSeps(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if !redact.IsSSNSep(s[i]) {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
