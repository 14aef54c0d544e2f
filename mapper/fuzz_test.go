package mapper

import (
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/bulkload/bulkload/lead"
)

// rowFromFuzz splits s on "|" into the fields of a record, in Field order.
func rowFromFuzz(s string) lead.Values {
	var v lead.Values
	for i, part := range strings.SplitN(s, "|", int(lead.NumFields)) {
		v[i] = part
	}
	return v
}

// FuzzMap maps arbitrary rows (fields separated by "|", in lead.Field order;
// seed corpus in testdata/fuzz/FuzzMap) and checks that Map never panics,
// never leaks an SSN or a date of birth into an error, and that a row without
// errors satisfies the wire invariants and maps to itself again.
func FuzzMap(f *testing.F) {
	f.Add("Jane|Doe|02/29/1980|jane@example.com|(555) 123-4567|+1 555.987.6543|1 Main St||Boston|ma|02134-1234|$25,000|L-1|R-1|123e4567-e89b-12d3-a456-426614174000|123-45-6789|85000.00|7,083|Home Owner|Employed|1|Yes|N|77")
	f.Add("||13/01/1990||12|||||XX|1234|25000.50|||ftp://x|666-12-3456|-5|abc|9|0|x|no|maybe|")
	f.Add("||1990-01-01|||||||||||||||||||||y|")
	f.Fuzz(func(t *testing.T, s string) {
		v := rowFromFuzz(s)
		in, errs := mapRow(newTestMapper(nil), 1, &v)
		checkNoLeak(t, &v, errs)
		if len(errs) != 0 {
			return
		}
		checkInvariants(t, in)
		again := toValues(in)
		in2, errs2 := mapRow(newTestMapper(nil), 1, &again)
		if len(errs2) != 0 {
			t.Fatalf("Map(Map(%q)) errors = %v, want none", s, errs2)
		}
		if a, b := toValues(in), toValues(in2); a != b {
			t.Fatalf("Map(Map(%q)) = %q, want %q", s, b, a)
		}
	})
}

func checkInvariants(t *testing.T, in lead.Input) {
	t.Helper()
	digits := func(name, s string, n int) {
		if len(s) != n || !allDigits(s) {
			t.Errorf("%s = %q, want %d digits", name, s, n)
		}
	}
	if in.HomePhone != "" {
		digits("homePhone", in.HomePhone, 10)
	}
	if in.CellPhone != "" {
		digits("cellPhone", in.CellPhone, 10)
	}
	if s := in.SocialSecurityNumber; s != "" {
		digits("socialSecurityNumber", s, 9)
		if s[:3] == "000" || s[:3] == "666" || s[0] == '9' || s[3:5] == "00" || s[5:] == "0000" {
			t.Errorf("socialSecurityNumber is not issuable")
		}
	}
	if in.ZipCode != "" {
		digits("zipCode", in.ZipCode, 5)
	}
	if in.State != "" {
		if code, ok := stateCode(in.State); !ok || code != in.State {
			t.Errorf("state = %q, want a code from the table", in.State)
		}
	}
	d, err := time.Parse("2006-01-02", in.DateOfBirth)
	if err != nil || d.Before(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)) || d.After(testNow()) {
		t.Errorf("dateOfBirth is not a YYYY-MM-DD date from 1900 to today")
	}
	if in.TermsConsent == nil || !*in.TermsConsent {
		t.Errorf("termsConsent = %v, want true", in.TermsConsent)
	}
	for name, p := range map[string]*int{"loanAmount": in.LoanAmount, "grossAnnualIncome": in.GrossAnnualIncome, "monthlyIncome": in.MonthlyIncome} {
		if p != nil && (*p < 0 || *p > maxInt32) {
			t.Errorf("%s = %d, want 0..2147483647", name, *p)
		}
	}
	for name, p := range map[string]*int{"incomeSourceId": in.IncomeSourceID, "loanPurposeId": in.LoanPurposeID} {
		if p != nil && (*p < 1 || *p > maxInt32) {
			t.Errorf("%s = %d, want 1..2147483647", name, *p)
		}
	}
	if p := in.ResidenceTypeID; p != nil && (*p < 1 || *p > 4) {
		t.Errorf("residenceTypeId = %d, want 1..4", *p)
	}
	if in.Email != "" && !isEmailSlow(in.Email) {
		t.Errorf("email %q fails net/mail", in.Email)
	}
	for _, s := range toValues(in) {
		if s != strings.TrimSpace(s) {
			t.Errorf("value %q is not trimmed", s)
		}
		for _, r := range s {
			if unicode.IsControl(r) {
				t.Errorf("value %q holds control character %U", s, r)
			}
		}
	}
}

// FuzzEmail checks that the fast path of isEmail agrees with the rule.
func FuzzEmail(f *testing.F) {
	for _, s := range []string{"a@b.co", "a..b@c.d", "\"a b\"@c.d", "a@[1.2.3.4]", "jöhn@exämple.com", "a@b.c (x)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if fast, slow := isEmail(s), isEmailSlow(s); fast != slow {
			t.Errorf("isEmail(%q) = %v, isEmailSlow = %v", s, fast, slow)
		}
	})
}

// FuzzCertificate checks that the fast path of isCertificate for URLs
// agrees with url.Parse.
func FuzzCertificate(f *testing.F) {
	for _, s := range []string{"https://a.b/c", "http://x:80", "HTTPS://X.COM/a?b#c", "https://x/%zz", "https://:1/", "http://a b/", "https://x:/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if isPlainURL(s) && !isURLSlow(s) {
			t.Errorf("isPlainURL(%q) = true, but url.Parse rejects it", s)
		}
	})
}
