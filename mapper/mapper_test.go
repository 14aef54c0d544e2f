package mapper

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/lead"
)

// testNow is the fixed "today" of the tests: 2026-11-22.
func testNow() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }

func newTestMapper(mp *Mapping) *Mapper { return New(Options{Mapping: mp, Now: testNow}) }

// flagHints are the command line's hints (package app's), with which the
// golden rows were written.
func flagHints() Hints {
	return Hints{Encoding: "--encoding windows-1252", DayFirst: "--date-order dmy", MonthFirst: "--date-order mdy"}
}

// TestHints: the rules that advise a setting name it only in the words
// of Options.Hints; without them they name none.
func TestHints(t *testing.T) {
	cells := []struct {
		field     lead.Field
		cell      string
		dayFirst  bool
		want      string
		wantPlain string
	}{
		{lead.Address1, "Zo\xeb", false, "not valid UTF-8 (is the file Latin-1? try --encoding windows-1252)", ruleNotUTF8},
		{lead.DateOfBirth, "13/01/1990", false, "if the file writes the day first (DD/MM/YYYY), pass --date-order dmy", ruleDateDayFirstHint},
		{lead.DateOfBirth, "12/31/1980", true, "if the file writes the month first (MM/DD/YYYY), pass --date-order mdy", ruleDateMonthFirstHint},
	}
	for _, tc := range cells {
		for _, h := range []Hints{flagHints(), {}} {
			m := New(Options{Now: testNow, DayFirst: tc.dayFirst, Hints: h})
			var v lead.Values
			v[tc.field] = tc.cell
			_, errs, _ := m.MapFields(1, &v)
			var rule string
			for _, e := range errs {
				if e.Field == tc.field {
					rule = e.Rule
				}
			}
			switch {
			case h == (Hints{}) && rule != tc.wantPlain:
				t.Errorf("%v %q without hints: rule %q, want %q", tc.field, tc.cell, rule, tc.wantPlain)
			case h == (Hints{}) && strings.Contains(rule, "--"):
				t.Errorf("%v %q without hints: rule %q names a flag", tc.field, tc.cell, rule)
			case h != (Hints{}) && !strings.HasSuffix(rule, tc.want):
				t.Errorf("%v %q with hints: rule %q, want it to end %q", tc.field, tc.cell, rule, tc.want)
			}
		}
	}
}

// validRow is a realistic row as a partner file has it, with the usual
// formatting the mapper normalises.
func validRow() lead.Values {
	var v lead.Values
	v[lead.FirstName] = "Jane"
	v[lead.LastName] = "Doe"
	v[lead.DateOfBirth] = "02/29/1980"
	v[lead.Email] = "jane.doe@example.com"
	v[lead.HomePhone] = "(555) 123-4567"
	v[lead.CellPhone] = "+1 555.987.6543"
	v[lead.Address1] = "1 Main St"
	v[lead.Address2] = "Apt 2"
	v[lead.City] = "Boston"
	v[lead.State] = "ma"
	v[lead.ZipCode] = "02134-1234"
	v[lead.LoanAmount] = "$25,000"
	v[lead.LeadID] = "L-1"
	v[lead.Ref] = "R-1"
	v[lead.TrustedformCertificateID] = "https://cert.example.com/abc"
	v[lead.SocialSecurityNumber] = "123-45-6789"
	v[lead.GrossAnnualIncome] = "85000.00"
	v[lead.MonthlyIncome] = "7,083"
	v[lead.ResidenceTypeID] = "  Home Owner "
	v[lead.IncomeSourceID] = "Employed"
	v[lead.LoanPurposeID] = "1"
	v[lead.TermsConsent] = "Yes"
	v[lead.CoApplicant] = "N"
	v[lead.LeadSourceID] = "77"
	return v
}

func intp(n int) *int    { return &n }
func boolp(b bool) *bool { return &b }

func TestMapValidRow(t *testing.T) {
	v := validRow()
	got, errs := mapRow(newTestMapper(nil), 1, &v)
	if len(errs) != 0 {
		t.Fatalf("Map(validRow) errors = %v, want none", errs)
	}
	want := lead.Input{
		FirstName: "Jane", LastName: "Doe", DateOfBirth: "1980-02-29", Email: "jane.doe@example.com",
		HomePhone: "5551234567", CellPhone: "5559876543", Address1: "1 Main St", Address2: "Apt 2",
		City: "Boston", State: "MA", ZipCode: "02134", LoanAmount: intp(25000), LeadID: "L-1", Ref: "R-1",
		TrustedformCertificateID: "https://cert.example.com/abc", SocialSecurityNumber: "123456789",
		GrossAnnualIncome: intp(85000), MonthlyIncome: intp(7083), ResidenceTypeID: intp(1),
		IncomeSourceID: intp(1), LoanPurposeID: intp(1), TermsConsent: boolp(true), CoApplicant: boolp(false),
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("Map(validRow) = %s, want %s", gj, wj)
	}
}

// wire returns field f of in as the text a file would hold, "" when absent.
func wire(in lead.Input, f lead.Field) string {
	ip := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	}
	bp := func(p *bool) string {
		if p == nil {
			return ""
		}
		return strconv.FormatBool(*p)
	}
	switch f {
	case lead.FirstName:
		return in.FirstName
	case lead.LastName:
		return in.LastName
	case lead.DateOfBirth:
		return in.DateOfBirth
	case lead.Email:
		return in.Email
	case lead.HomePhone:
		return in.HomePhone
	case lead.CellPhone:
		return in.CellPhone
	case lead.Address1:
		return in.Address1
	case lead.Address2:
		return in.Address2
	case lead.City:
		return in.City
	case lead.State:
		return in.State
	case lead.ZipCode:
		return in.ZipCode
	case lead.LoanAmount:
		return ip(in.LoanAmount)
	case lead.LeadID:
		return in.LeadID
	case lead.Ref:
		return in.Ref
	case lead.TrustedformCertificateID:
		return in.TrustedformCertificateID
	case lead.SocialSecurityNumber:
		return in.SocialSecurityNumber
	case lead.GrossAnnualIncome:
		return ip(in.GrossAnnualIncome)
	case lead.MonthlyIncome:
		return ip(in.MonthlyIncome)
	case lead.ResidenceTypeID:
		return ip(in.ResidenceTypeID)
	case lead.IncomeSourceID:
		return ip(in.IncomeSourceID)
	case lead.LoanPurposeID:
		return ip(in.LoanPurposeID)
	case lead.TermsConsent:
		return bp(in.TermsConsent)
	case lead.CoApplicant:
		return bp(in.CoApplicant)
	}
	return ""
}

// toValues turns a mapped Input back into a record, for idempotence.
func toValues(in lead.Input) lead.Values {
	var v lead.Values
	for f := lead.Field(0); f < lead.NumFields; f++ {
		v[f] = wire(in, f)
	}
	return v
}

// ruleCase is one value of one field: want is the normalised wire text
// (when rule is ""), rule the expected rule (when the value is invalid).
type ruleCase struct {
	name string
	in   string
	want string
	rule string
}

// runRuleCases maps validRow with field f set to each case's value and checks
// that field's outcome, and that no other field failed.
func runRuleCases(t *testing.T, f lead.Field, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := validRow()
			v[f] = tc.in
			in, errs := mapRow(newTestMapper(nil), 1, &v)
			var rule string
			for _, e := range errs {
				if e.Field == f {
					rule = e.Rule
				} else {
					t.Errorf("Map(%s=%q) unexpected error %v", f, tc.in, e)
				}
			}
			if rule != tc.rule {
				t.Errorf("Map(%s=%q) rule = %q, want %q", f, tc.in, rule, tc.rule)
			}
			if tc.rule == "" {
				if got := wire(in, f); got != tc.want {
					t.Errorf("Map(%s=%q) = %q, want %q", f, tc.in, got, tc.want)
				}
			}
			checkNoLeak(t, &v, errs)
		})
	}
}

func TestDateOfBirth(t *testing.T) {
	runRuleCases(t, lead.DateOfBirth, []ruleCase{
		{"iso", "1990-01-15", "1990-01-15", ""},
		{"us padded", "01/15/1990", "1990-01-15", ""},
		{"us short", "1/5/1990", "1990-01-05", ""},
		{"us mixed", "12/5/1990", "1990-12-05", ""},
		{"spaces", "  1990-01-15 ", "1990-01-15", ""},
		{"leap day 2000", "2/29/2000", "2000-02-29", ""},
		{"leap day 1980 iso", "1980-02-29", "1980-02-29", ""},
		{"leap day 1900", "2/29/1900", "", ruleDateNotReal},
		{"leap day 2001", "2001-02-29", "", ruleDateNotReal},
		{"feb 30", "02/30/1990", "", ruleDateNotReal},
		{"apr 31", "1990-04-31", "", ruleDateNotReal},
		{"day first", "13/01/1990", "", ruleDateDayFirstHint},
		{"month over 12 and day over 12", "13/13/1990", "", ruleDateNotReal},
		{"month 0", "1990-00-10", "", ruleDateNotReal},
		{"day 0", "0/10/1990", "", ruleDateNotReal},
		{"today", "2026-11-22", "2026-11-22", ""},
		{"tomorrow", "11/23/2026", "", ruleDateFuture},
		{"next year", "2027-01-01", "", ruleDateFuture},
		{"1900-01-01", "1900-01-01", "1900-01-01", ""},
		{"1899", "12/31/1899", "", ruleDateTooOld},
		{"two-digit year", "1/5/90", "", ruleDateTwoDigitYear},
		{"three-digit year", "1/5/990", "", ruleDateFormat},
		{"text", "yesterday", "", ruleDateFormat},
		{"dotted", "15.01.1990", "", ruleDateFormat},
		{"iso short parts", "1990-1-5", "", ruleDateFormat},
		{"datetime", "1990-01-15T00:00:00", "", ruleDateFormat},
		{"slashes iso order", "1990/01/15", "", ruleDateFormat},
		{"letters in iso", "19x0-01-15", "", ruleDateFormat},
		{"empty", "", "", ruleRequired},
		{"blank", "   ", "", ruleRequired},
	})
}

func TestPhones(t *testing.T) {
	cases := []ruleCase{
		{"plain", "5551234567", "5551234567", ""},
		{"parens", "(555) 123-4567", "5551234567", ""},
		{"plus one dots", "+1 555.123.4567", "5551234567", ""},
		{"one dashes", "1-555-123-4567", "5551234567", ""},
		{"eleven digits", "15551234567", "5551234567", ""},
		{"plus one tight", "+15551234567", "5551234567", ""},
		{"spaces", " 555 123 4567 ", "5551234567", ""},
		{"nine digits", "555123456", "", rulePhone},
		{"eleven not one", "25551234567", "", rulePhone},
		{"twelve", "115551234567", "", rulePhone},
		{"uk", "+44 20 7946 0958", "", rulePhone},
		{"plus two", "+2 555 123 4567", "", rulePhone},
		{"plus ten digits", "+5551234567", "", rulePhone},
		{"extension", "555-123-4567 x12", "", rulePhone},
		{"letters", "555-CALL-NOW", "", rulePhone},
		{"plus inside", "555+1234567", "", rulePhone},
		{"slash", "555/123/4567", "", rulePhone},
	}
	runRuleCases(t, lead.HomePhone, cases)
	runRuleCases(t, lead.CellPhone, append(cases, ruleCase{"absent", "", "", ""}))
}

func TestSSN(t *testing.T) {
	runRuleCases(t, lead.SocialSecurityNumber, []ruleCase{
		{"plain", "123456789", "123456789", ""},
		{"dashes", "123-45-6789", "123456789", ""},
		{"spaces", "123 45 6789", "123456789", ""},
		{"odd dashes", "12-345-6789", "123456789", ""},
		{"area 899", "899-45-6789", "899456789", ""},
		{"area 665", "665456789", "665456789", ""},
		{"absent", "", "", ""},
		{"eight digits", "12345678", "", ruleSSNDigits},
		{"ten digits", "1234567890", "", ruleSSNDigits},
		{"letters", "12345678X", "", ruleSSNDigits},
		{"dots", "123.45.6789", "", ruleSSNDigits},
		{"area 000", "000-12-3456", "", ruleSSNArea000},
		{"area 666", "666-12-3456", "", ruleSSNArea666},
		{"area 900", "900-12-3456", "", ruleSSNArea9xx},
		{"area 999", "999123456", "", ruleSSNArea9xx},
		{"group 00", "123-00-4567", "", ruleSSNGroup},
		{"serial 0000", "123-45-0000", "", ruleSSNSerial},
	})
}

func TestState(t *testing.T) {
	runRuleCases(t, lead.State, []ruleCase{
		{"upper", "NY", "NY", ""},
		{"lower", "ny", "NY", ""},
		{"mixed", "nY", "NY", ""},
		{"dc", "dc", "DC", ""},
		{"pr", "PR", "PR", ""},
		{"military", "ap", "AP", ""},
		{"name", "new york", "NY", ""},
		{"name spaces", "  New   York ", "NY", ""},
		{"name upper", "CALIFORNIA", "CA", ""},
		{"district", "District of Columbia", "DC", ""},
		{"washington dc", "Washington, D.C.", "DC", ""},
		{"washington", "Washington", "WA", ""},
		{"puerto rico", "Puerto Rico", "PR", ""},
		{"usvi", "U.S. Virgin Islands", "VI", ""},
		{"west virginia", "west-virginia", "WV", ""},
		{"absent", "", "", ""},
		{"unknown code", "XX", "", ruleState},
		{"freely associated", "FM", "", ruleState},
		{"three letters", "NYC", "", ruleState},
		{"one letter", "N", "", ruleState},
		{"name typo", "New Yrok", "", ruleState},
		{"digits", "12", "", ruleState},
		{"unicode", "Nüw York", "", ruleState},
	})
}

func TestZip(t *testing.T) {
	runRuleCases(t, lead.ZipCode, []ruleCase{
		{"five", "02134", "02134", ""},
		{"zip4", "02134-1234", "02134", ""},
		{"nine digits", "021341234", "02134", ""},
		{"absent", "", "", ""},
		{"four", "2134", "", ruleZipShort},
		{"four plus four", "2134-1234", "", ruleZipShort},
		{"eight", "21341234", "", ruleZipShort},
		{"six", "021345", "", ruleZip},
		{"letters", "ABCDE", "", ruleZip},
		{"canadian", "K1A 0B1", "", ruleZip},
		{"zip4 space", "02134 1234", "", ruleZip},
		{"zip4 short", "02134-123", "", ruleZip},
	})
}

func TestTermsConsent(t *testing.T) {
	runRuleCases(t, lead.TermsConsent, []ruleCase{
		{"true", "true", "true", ""},
		{"TRUE", "TRUE", "true", ""},
		{"Yes", "Yes", "true", ""},
		{"y", "y", "true", ""},
		{"Y", "Y", "true", ""},
		{"t", "T", "true", ""},
		{"one", "1", "true", ""},
		{"false", "false", "", ruleConsent},
		{"No", "No", "", ruleConsent},
		{"N", "N", "", ruleConsent},
		{"zero", "0", "", ruleConsent},
		{"absent", "", "", ruleConsent},
		{"blank", "  ", "", ruleConsent},
		{"text", "agreed", "", ruleBool},
		{"two", "2", "", ruleBool},
		{"yess", "yess", "", ruleBool},
	})
}

func TestCoApplicant(t *testing.T) {
	runRuleCases(t, lead.CoApplicant, []ruleCase{
		{"true", "True", "true", ""},
		{"yes", "YES", "true", ""},
		{"false", "False", "false", ""},
		{"N", "N", "false", ""},
		{"f", "f", "false", ""},
		{"zero", "0", "false", ""},
		{"absent", "", "", ""},
		{"text", "maybe", "", ruleBool},
	})
}

func TestMoney(t *testing.T) {
	cases := []ruleCase{
		{"plain", "25000", "25000", ""},
		{"dollar commas", "$25,000", "25000", ""},
		{"cents zero", "25000.00", "25000", ""},
		{"one zero", "25000.0", "25000", ""},
		{"all of it", "$1,250,000.00", "1250000", ""},
		{"zero", "0", "0", ""},
		{"leading zeros", "007", "7", ""},
		{"max", "2147483647", "2147483647", ""},
		{"spaces", " $500 ", "500", ""},
		{"absent", "", "", ""},
		{"cents", "25000.50", "", ruleMoneyWhole},
		{"half", "$25,000.5", "", ruleMoneyWhole},
		{"negative", "-100", "", ruleMoneyNegative},
		{"negative dollar", "-$1,000", "", ruleMoneyNegative},
		{"dollar negative", "$-1,000", "", ruleMoneyNegative},
		{"too large", "2147483648", "", ruleTooLarge},
		{"much too large", "99999999999999999999999", "", ruleTooLarge},
		{"text", "lots", "", ruleMoneyText},
		{"k", "25k", "", ruleMoneyText},
		{"bad groups", "25,00", "", ruleMoneyText},
		{"bad lead group", "2500,000", "", ruleMoneyText},
		{"leading comma", ",000", "", ruleMoneyText},
		{"double comma", "1,,000", "", ruleMoneyText},
		{"trailing dot", "25000.", "", ruleMoneyText},
		{"only dot", ".00", "", ruleMoneyText},
		{"dollar alone", "$", "", ruleMoneyText},
		{"minus alone", "-", "", ruleMoneyText},
		{"exponent", "2.5e4", "", ruleMoneyText},
		{"two dots", "1.0.0", "", ruleMoneyText},
		{"inner space", "25 000", "", ruleMoneyText},
		{"euro", "€25000", "", ruleMoneyText},
	}
	runRuleCases(t, lead.LoanAmount, cases)
	runRuleCases(t, lead.GrossAnnualIncome, cases)
	runRuleCases(t, lead.MonthlyIncome, cases)
}

func TestResidenceType(t *testing.T) {
	runRuleCases(t, lead.ResidenceTypeID, []ruleCase{
		{"one", "1", "1", ""},
		{"four", "4", "4", ""},
		{"home owner", "  Home Owner ", "1", ""},
		{"homeowner", "HOMEOWNER", "1", ""},
		{"own", "own", "1", ""},
		{"rent", "Rent", "2", ""},
		{"renter", "renter", "2", ""},
		{"family", "Living with Family", "3", ""},
		{"family loose", "living-with-family", "3", ""},
		{"other", "Other", "4", ""},
		{"absent", "", "", ""},
		{"zero", "0", "", ruleResidence},
		{"five", "5", "", ruleResidence},
		{"negative", "-1", "", ruleResidence},
		{"decimal", "1.5", "", ruleResidence},
		{"unknown label", "Castle", "", ruleResidence},
	})
}

func TestIncomeSource(t *testing.T) {
	runRuleCases(t, lead.IncomeSourceID, []ruleCase{
		{"one", "1", "1", ""},
		{"beyond list", "17", "17", ""},
		{"employed", "employed", "1", ""},
		{"social security", "Social Security", "2", ""},
		{"pension", "PENSION", "3", ""},
		{"zero", "0", "", ruleIncomeSource},
		{"too large", "2147483648", "", ruleIncomeSource},
		{"unknown", "Lottery", "", ruleIncomeSource},
	})
}

func TestLoanPurpose(t *testing.T) {
	runRuleCases(t, lead.LoanPurposeID, []ruleCase{
		{"one", "1", "1", ""},
		{"beyond list", "9", "9", ""},
		{"debt", "Debt Consolidation", "1", ""},
		{"home", "home improvement", "2", ""},
		{"zero", "0", "", ruleLoanPurpose},
		{"unknown", "Boat", "", ruleLoanPurpose},
	})
}

func TestEmail(t *testing.T) {
	cases := []ruleCase{
		{"plain", "jane@example.com", "jane@example.com", ""},
		{"case kept", "Jane.Doe@Example.COM", "Jane.Doe@Example.COM", ""},
		{"plus", "jane+leads@example.co.uk", "jane+leads@example.co.uk", ""},
		{"unicode", "jöhn@exämple.com", "jöhn@exämple.com", ""},
		{"absent", "", "", ""},
		{"no at", "jane.example.com", "", ruleEmail},
		{"no dot in domain", "jane@localhost", "", ruleEmail},
		{"two ats", "jane@doe@example.com", "", ruleEmail},
		{"display name", "Jane <jane@example.com>", "", ruleEmail},
		{"space", "jane doe@example.com", "", ruleEmail},
		{"leading dot", ".jane@example.com", "", ruleEmail},
		{"double dot", "jane..doe@example.com", "", ruleEmail},
		{"trailing dot domain", "jane@example.com.", "", ruleEmail},
		{"comment", "jane@example.com (Jane)", "", ruleEmail},
		{"empty local", "@example.com", "", ruleEmail},
		{"quoted local", `"jane doe"@example.com`, "", ruleEmail},
	}
	runRuleCases(t, lead.Email, cases)
	// The fast path agrees with the rule itself.
	for _, tc := range cases {
		if tc.in == "" {
			continue
		}
		if fast, slow := isEmail(tc.in), isEmailSlow(tc.in); fast != slow {
			t.Errorf("isEmail(%q) = %v, isEmailSlow = %v", tc.in, fast, slow)
		}
	}
}

func TestCertificate(t *testing.T) {
	runRuleCases(t, lead.TrustedformCertificateID, []ruleCase{
		{"uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000", ""},
		{"uuid upper", "123E4567-E89B-12D3-A456-426614174000", "123E4567-E89B-12D3-A456-426614174000", ""},
		{"https", "https://cert.example.com/0123abcd", "https://cert.example.com/0123abcd", ""},
		{"http port", "http://cert.example.com:8080/x?y=1", "http://cert.example.com:8080/x?y=1", ""},
		{"absent", "", "", ""},
		{"uuid no dashes", "123e4567e89b12d3a456426614174000", "", ruleCertificate},
		{"uuid braces", "{123e4567-e89b-12d3-a456-426614174000}", "", ruleCertificate},
		{"uuid bad hex", "123e4567-e89b-12d3-a456-42661417400g", "", ruleCertificate},
		{"ftp", "ftp://cert.example.com/x", "", ruleCertificate},
		{"relative", "/cert/x", "", ruleCertificate},
		{"no host", "https:///x", "", ruleCertificate},
		{"port only", "https://:443/x", "", ruleCertificate},
		{"space", "https://cert.example.com/a b", "", ruleCertificate},
		{"text", "certificate", "", ruleCertificate},
	})
}

func TestTextFields(t *testing.T) {
	for _, f := range []lead.Field{lead.FirstName, lead.LastName, lead.Address1, lead.Address2, lead.City, lead.Ref, lead.LeadID} {
		runRuleCases(t, f, []ruleCase{
			{"plain", "Ada", "Ada", ""},
			{"trimmed", "  Ada Lovelace\t", "Ada Lovelace", ""},
			{"unicode", "Zoë", "Zoë", ""},
			{"blank is absent", " \t ", "", ""},
			{"latin-1", "Zo\xeb", "", ruleNotUTF8},
			{"latin-1 after 8 bytes", "Lovelace-Zo\xeb", "", ruleNotUTF8},
			{"latin-1 in 8 bytes", "Zo\xeb Lovelace-Byron", "", ruleNotUTF8},
			{"long unicode trimmed", "  Ada Lovelace-Zoë  ", "Ada Lovelace-Zoë", ""},
			{"no-break spaces trimmed", "\u00a0Ada Lovelace\u00a0", "Ada Lovelace", ""},
			{"long ascii trimmed", "\t  Augusta Ada King  \r\n", "Augusta Ada King", ""},
		})
	}
}

// TestControlCharacters checks that a NUL or another control character is
// refused in every field, and that a tab or line break inside a free-text
// field is read as a space.
func TestControlCharacters(t *testing.T) {
	for f := lead.Field(0); f < lead.NumFields; f++ {
		if f == lead.LeadSourceID {
			continue // never sent, never checked
		}
		t.Run(f.String(), func(t *testing.T) {
			// The control check comes first: the rest of the value
			// need not be valid for the field.
			cases := []ruleCase{
				{"NUL", "A\x00B", "", ruleControl},
				{"NUL at the end", "AB\x00", "", ruleControl},
				{"escape", "\x1b[31mAB", "", ruleControl},
				{"DEL", "A\x7fB", "", ruleControl},
				{"C1 next line", "A\u0085B", "", ruleControl},
				{"C1 across eight bytes", "abcdefg\u0090B", "", ruleControl},
				{"bell in a long value", "AB................\a.", "", ruleControl},
			}
			if isFreeText(f) {
				cases = append(cases,
					ruleCase{"tab", "Ada\tLovelace", "Ada Lovelace", ""},
					ruleCase{"line break", "1 Main St\r\nApt 2", "1 Main St Apt 2", ""},
					ruleCase{"breaks in a run", "Ada \n\t\nLovelace-Byron", "Ada  Lovelace-Byron", ""},
					ruleCase{"tab and NUL", "Ada\tLove\x00lace", "", ruleControl},
					ruleCase{"unicode kept", "Zoë\tMüller", "Zoë Müller", ""},
				)
			} else {
				cases = append(cases,
					ruleCase{"tab", "A\tB", "", ruleControl},
					ruleCase{"line break", "A\r\nB", "", ruleControl},
				)
			}
			runRuleCases(t, f, cases)
		})
	}
}

func TestNotUTF8Everywhere(t *testing.T) {
	for f := lead.Field(0); f < lead.NumFields; f++ {
		t.Run(f.String(), func(t *testing.T) {
			v := validRow()
			v[f] = "M\xfcller"
			_, errs := mapRow(newTestMapper(nil), 1, &v)
			want := Errors{{Field: f, Rule: ruleNotUTF8}}
			if f == lead.LeadSourceID {
				want = nil
			}
			if fmt.Sprint(errs) != fmt.Sprint(want) {
				t.Errorf("Map(%s=latin-1) = %v, want %v", f, errs, want)
			}
		})
	}
}

func TestLeadSourceNeverSent(t *testing.T) {
	for _, val := range []string{"77", "", "not a number", "-1"} {
		v := validRow()
		v[lead.LeadSourceID] = val
		in, errs := mapRow(newTestMapper(nil), 1, &v)
		if len(errs) != 0 {
			t.Errorf("Map(leadSourceId=%q) errors = %v, want none", val, errs)
		}
		b, _ := json.Marshal(in)
		if strings.Contains(string(b), "leadSource") {
			t.Errorf("Map(leadSourceId=%q) = %s, want no leadSourceId", val, b)
		}
	}
}

func TestDuplicateLeadID(t *testing.T) {
	m := newTestMapper(nil)
	rows := []struct {
		leadID string
		dob    string // "" makes the row invalid for another reason
		want   string
	}{
		{"A", "1980-01-01", ""},
		{"B", "", "dateOfBirth: required"}, // registered although invalid
		{"A", "1980-01-01", `leadId is "A": duplicate of row 1`},
		{" B ", "1980-01-01", `leadId is "B": duplicate of row 2`},
		{"a", "1980-01-01", ""}, // leadIds are compared exactly
		{"", "1980-01-01", ""},  // absent leadIds are never duplicates
		{"", "1980-01-01", ""},
		{"A", "", `dateOfBirth: required; leadId is "A": duplicate of row 1`},
	}
	reasons := map[string]bool{}
	for i, r := range rows {
		v := validRow()
		v[lead.LeadID], v[lead.DateOfBirth] = r.leadID, r.dob
		_, errs := mapRow(m, i+1, &v)
		if got := errs.Error(); got != r.want {
			t.Errorf("Map(row %d, leadId=%q) = %q, want %q", i+1, r.leadID, got, r.want)
		}
		for _, e := range errs {
			if e.Field == lead.LeadID {
				reasons[e.Reason()] = true
			}
		}
	}
	// Duplicates of different rows are one reason in the summary.
	if want := map[string]bool{"leadId: " + ruleDuplicate: true}; !reflect.DeepEqual(reasons, want) {
		t.Errorf("duplicates' reasons = %v, want %v", reasons, want)
	}
}

func TestAllErrorsAtOnce(t *testing.T) {
	var v lead.Values
	v[lead.ZipCode] = "1234"
	v[lead.HomePhone] = "12"
	v[lead.SocialSecurityNumber] = "666-12-3456"
	v[lead.LoanAmount] = "1.5"
	v[lead.Email] = "nope"
	_, errs := mapRow(newTestMapper(nil), 1, &v)
	want := `dateOfBirth: required; email is "nope": must be a valid e-mail address (name@example.com); ` +
		`homePhone is "12": must be 10 digits (no country code); ` +
		`zipCode is "1234": must be 5 digits (a spreadsheet may have dropped a leading zero); ` +
		`loanAmount is "1.5": must be whole dollars; socialSecurityNumber: area number 666 is never issued; ` +
		"termsConsent: must be true (the service does not process leads without consent)"
	if got := errs.Error(); got != want {
		t.Errorf("Map(bad row) = %q,\nwant %q", got, want)
	}
	for i := 1; i < len(errs); i++ {
		if errs[i-1].Field >= errs[i].Field {
			t.Errorf("errors not in field order: %v", errs)
		}
	}
	if got, want := errs[0].Error(), "dateOfBirth: required"; got != want {
		t.Errorf("FieldError.Error() = %q, want %q", got, want)
	}
	if got := Errors(nil).Error(); got != "" {
		t.Errorf("Errors(nil).Error() = %q, want empty", got)
	}
}

func TestAbsentFieldsOmitted(t *testing.T) {
	var v lead.Values
	v[lead.DateOfBirth] = "1980-01-01"
	v[lead.TermsConsent] = "y"
	v[lead.FirstName] = "   "
	v[lead.LoanAmount] = " "
	v[lead.ResidenceTypeID] = ""
	in, errs := mapRow(newTestMapper(nil), 1, &v)
	if len(errs) != 0 {
		t.Fatalf("Map(minimal) errors = %v", errs)
	}
	b, _ := json.Marshal(in)
	if got, want := string(b), `{"dateOfBirth":"1980-01-01","termsConsent":true}`; got != want {
		t.Errorf("Map(minimal) = %s, want %s", got, want)
	}
}

func TestJSONShape(t *testing.T) {
	v := validRow()
	v[lead.Address2], v[lead.CellPhone], v[lead.MonthlyIncome] = "", "", ""
	in, errs := mapRow(newTestMapper(nil), 1, &v)
	if len(errs) != 0 {
		t.Fatalf("Map(validRow) errors = %v", errs)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"address2", "cellPhone", "monthlyIncome", "leadSourceId"} {
		if _, ok := got[absent]; ok {
			t.Errorf("json %s has %s, want it omitted", b, absent)
		}
	}
	for _, k := range []string{"loanAmount", "grossAnnualIncome", "residenceTypeId", "incomeSourceId", "loanPurposeId"} {
		if _, ok := got[k].(float64); !ok {
			t.Errorf("json %s: %s = %#v, want a JSON number", b, k, got[k])
		}
	}
	if got["termsConsent"] != true {
		t.Errorf("json %s: termsConsent = %#v, want true", b, got["termsConsent"])
	}
	if got["coApplicant"] != false {
		t.Errorf("json %s: coApplicant = %#v, want false", b, got["coApplicant"])
	}
	for _, k := range []string{"dateOfBirth", "socialSecurityNumber", "zipCode", "homePhone", "state"} {
		if _, ok := got[k].(string); !ok {
			t.Errorf("json %s: %s = %#v, want a JSON string", b, k, got[k])
		}
	}
}

func TestMappingValuesApplied(t *testing.T) {
	mp := &Mapping{Values: map[lead.Field]map[string]string{
		lead.ResidenceTypeID: {"Own": "1", "Rent": "2", "Mum's": "3"},
		lead.TermsConsent:    {"I agree": "true", "Declined": "false"},
		lead.State:           {"N/A": ""},
		lead.LoanPurposeID:   {"Bills": "Debt Consolidation"},
	}}
	cases := []struct {
		f        lead.Field
		in, want string
		rule     string
	}{
		{lead.ResidenceTypeID, "own", "1", ""},
		{lead.ResidenceTypeID, "  RENT ", "2", ""},
		{lead.ResidenceTypeID, "MUM'S", "3", ""},
		{lead.ResidenceTypeID, "4", "4", ""}, // unmapped values still pass the rules
		{lead.TermsConsent, "i AGREE", "true", ""},
		{lead.TermsConsent, "declined", "", ruleConsent},
		{lead.State, "n/a", "", ""},
		{lead.LoanPurposeID, "bills", "1", ""},
	}
	for _, tc := range cases {
		t.Run(tc.f.String()+" "+tc.in, func(t *testing.T) {
			v := validRow()
			v[tc.f] = tc.in
			in, errs := mapRow(newTestMapper(mp), 1, &v)
			var rule string
			for _, e := range errs {
				rule = e.Rule
			}
			if got := wire(in, tc.f); got != tc.want || rule != tc.rule {
				t.Errorf("Map(%s=%q) = %q, %q, want %q, %q", tc.f, tc.in, got, rule, tc.want, tc.rule)
			}
		})
	}
}

func TestLookupFoldNonASCII(t *testing.T) {
	m := map[string]string{"ärger": "x"}
	long := strings.Repeat("a", 100)
	m[long] = "y"
	for in, want := range map[string]string{"ÄRGER": "x", strings.ToUpper(long): "y", "other": ""} {
		if got, _ := lookupFold(m, in); got != want {
			t.Errorf("lookupFold(%q) = %q, want %q", in, got, want)
		}
	}
}

// checkNoLeak fails when an error message contains the row's SSN or date of
// birth, or when a rule is not one of the fixed rules.
func checkNoLeak(t *testing.T, v *lead.Values, errs Errors) {
	t.Helper()
	all := errs.Error()
	for _, e := range errs {
		if !isKnownRule(e.Rule) {
			t.Errorf("rule %q is not a fixed rule", e.Rule)
		}
		if rest, ok := strings.CutPrefix(e.Detail, ruleDuplicatePrefix); e.Detail != "" && (!ok || e.Rule != ruleDuplicate || !allDigits(rest)) {
			t.Errorf("detail %q of rule %q is not a duplicate's row", e.Detail, e.Rule)
		}
	}
	for _, e := range errs {
		if e.Value == "" {
			continue
		}
		if e.Field.Sensitive() {
			t.Errorf("error %q shows the value of the sensitive field %s", e.Error(), e.Field)
		}
		for _, f := range []lead.Field{lead.SocialSecurityNumber, lead.DateOfBirth} {
			if own := strings.TrimSpace(v[f]); len(own) >= 4 && strings.Contains(strings.TrimSuffix(e.Value, "..."), own) {
				t.Errorf("error %q shows a value that holds the row's %s", e.Error(), f)
			}
		}
	}
	for _, f := range []lead.Field{lead.SocialSecurityNumber, lead.DateOfBirth} {
		s := strings.TrimSpace(v[f])
		if looksSensitive(s) && strings.Contains(withoutShownValues(all, errs), s) {
			t.Errorf("errors %q contain the %s", all, f)
		}
	}
}

// withoutShownValues returns the error text all with every value an error
// shows (FieldError.Value, quoted as Error quotes it) cut out. The values
// shown are checked on their own above (never a sensitive field's, never
// holding the row's SSN or date of birth); the rest of the text must not
// hold them either. Matching the text as a whole is fooled by quoting: the
// e-mail cell 0000000000000, quoted, holds the SSN cell `"000000000`.
func withoutShownValues(all string, errs Errors) string {
	for _, e := range errs {
		if e.Value != "" {
			all = strings.ReplaceAll(all, fmt.Sprintf("%q", e.Value), "[value]")
		}
	}
	return all
}

// looksSensitive reports whether s holds enough digits to be (part of) an
// SSN or a date; shorter text may match the fixed wording by chance.
func looksSensitive(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			n++
		}
	}
	return n >= 6
}

func isKnownRule(r string) bool {
	if r == ruleDuplicate {
		return true
	}
	// The rules that name a setting, worded with the command line's hints.
	if a, b, c := flagHints().rules(); r == a || r == b || r == c {
		return true
	}
	switch r {
	case ruleNotUTF8, ruleRequired, ruleDateFormat, ruleDateTwoDigitYear, ruleDateNotReal,
		ruleDateFormatDayFirst, ruleDateNotRealDayFirst,
		ruleDateFuture, ruleDateTooOld, rulePhone, ruleSSNDigits, ruleSSNArea000, ruleSSNArea666,
		ruleSSNArea9xx, ruleSSNGroup, ruleSSNSerial, ruleState, ruleZip, ruleZipShort, ruleBool,
		ruleConsent, ruleMoneyText, ruleMoneyWhole, ruleMoneyNegative, ruleTooLarge, ruleResidence,
		ruleIncomeSource, ruleLoanPurpose, ruleEmail, ruleCertificate, ruleControl,
		ruleDateDayFirstHint, ruleDateMonthFirstHint:
		return true
	}
	return false
}

// TestShownValues checks which bad values an error shows: a value of a
// field that is not sensitive, so a person sees what is wrong, but never an
// SSN or a date of birth, nor a value that looks like one in another
// column (a shifted column puts them anywhere).
func TestShownValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f     lead.Field
		in    string
		shown string
	}{
		{"zip", lead.ZipCode, "8002", "8002"},
		{"state", lead.State, " Calif. ", "Calif."},
		{"email", lead.Email, "jane@", "jane@"},
		{"phone", lead.HomePhone, "555-1234", "555-1234"},
		{"phone of ten digits kept", lead.CellPhone, "+44 555 123 4567", "+44 555 123 4567"},
		{"ssn", lead.SocialSecurityNumber, "666-12-3456", ""},
		{"ssn short", lead.SocialSecurityNumber, "12-34", ""},
		{"dob", lead.DateOfBirth, "13/13/1980", ""},
		{"dob text", lead.DateOfBirth, "yesterday", ""},
		{"an SSN in the phone column", lead.HomePhone, "123-45-6789", ""},
		{"an SSN without dashes", lead.ZipCode, "123456789x", ""},
		{"a date in the zip column", lead.ZipCode, "1980-01-02", ""},
		{"a slashed date", lead.LoanAmount, "2/3/80", ""},
		{"eight digits in a row", lead.ZipCode, "19800102", ""},
		{"six digits in a row", lead.ZipCode, "010280", ""},
		{"the row's own date of birth", lead.Email, "dob 1x2y3z4", ""}, // see below: the row's DOB is 1x2y3z4
		{"money with dots", lead.LoanAmount, "25.000,50", "25.000,50"},
		{"long value cut", lead.Email, strings.Repeat("é", 30), strings.Repeat("é", 20) + "..."},
		{"not UTF-8", lead.City, "M\xfcller", ""},
		{"control character", lead.City, "Bos\x00ton", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := validRow()
			v[tc.f] = tc.in
			if tc.name == "the row's own date of birth" {
				// Not a date nor nine digits: only the row's own value
				// tells that the e-mail cell holds it.
				v[lead.DateOfBirth] = "1x2y3z4"
			}
			_, errs := mapRow(newTestMapper(nil), 1, &v)
			var got *FieldError
			for i := range errs {
				if errs[i].Field == tc.f {
					got = &errs[i]
				}
			}
			if got == nil {
				t.Fatalf("Map(%s=%q) errors = %v, want one for %s", tc.f, tc.in, errs, tc.f)
			}
			if got.Value != tc.shown {
				t.Errorf("Map(%s=%q) shows %q, want %q", tc.f, tc.in, got.Value, tc.shown)
			}
		})
	}
}

// TestShownValuesHideOwnInEveryForm: a cell that holds the row's own date
// of birth or SSN written in any form package redact finds (the month's
// name, underscores, the other order, a 2-digit year) is never shown, also
// when the row's own cell holds it in a form the mapper does not read; a
// date or number that is not the row's own, and not shaped like an SSN
// or a date, still is.
func TestShownValuesHideOwnInEveryForm(t *testing.T) {
	for _, tc := range []struct {
		name, dob, ssn string
		dayFirst       bool
		in, shown      string
	}{
		{"month name", "01/02/1980", "231-45-6789", false, "Jan 2 1980", ""},
		{"month name and comma", "01/02/1980", "231-45-6789", false, "January 2, 1980", ""},
		{"day first, month name", "1980-01-02", "231-45-6789", false, "2 January 1980", ""},
		{"abbreviation, 2-digit year", "1980-01-02", "231-45-6789", false, "02-JAN-80", ""},
		{"underscores", "1980-01-02", "231-45-6789", false, "Jan_2_1980", ""},
		{"ssn with underscores", "1980-01-02", "231-45-6789", false, "231_45_6789", ""},
		{"ssn glued to a code", "1980-01-02", "231 45 6789", false, "E_SSN_231_45_6789x", ""},
		{"dmy input, month name", "02/01/1980", "231-45-6789", true, "Jan 2nd 1980", ""},
		{"own cell not read by the mapper", "Jan 2 1980", "231-45-6789", false, "2 January 1980", ""},
		{"own cell packed", "19800102", "231-45-6789", false, "January 2, 1980", ""},
		{"another person's birthday", "1980-01-02", "231-45-6789", false, "Jan 3 1980", "Jan 3 1980"},
		{"the same day another year", "1980-01-02", "231-45-6789", false, "January 2, 1981", "January 2, 1981"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := validRow()
			v[lead.DateOfBirth], v[lead.SocialSecurityNumber], v[lead.State] = tc.dob, tc.ssn, tc.in
			m := New(Options{Now: testNow, DayFirst: tc.dayFirst})
			_, errs := mapRow(m, 1, &v)
			var got *FieldError
			for i := range errs {
				if errs[i].Field == lead.State {
					got = &errs[i]
				}
			}
			if got == nil {
				t.Fatalf("Map(state=%q) errors = %v, want one for state", tc.in, errs)
			}
			if got.Value != tc.shown {
				t.Errorf("Map(state=%q) with dateOfBirth %q, SSN %q shows %q, want %q", tc.in, tc.dob, tc.ssn, got.Value, tc.shown)
			}
		})
	}
}

func TestNoSensitiveValueInErrors(t *testing.T) {
	bad := []struct{ ssn, dob string }{
		{"000-12-3456", "13/01/1990"},
		{"666123456", "2/29/1900"},
		{"912-34-5678", "11/23/2026"},
		{"123-00-4567", "12/31/1899"},
		{"123-45-0000", "1/5/90"},
		{"12345678", "1990-13-01"},
		{"123456789X", "19900101"},
		{"1234567890", "1990/01/01"},
		{"123-45-678\xff", "1990-01-0\xff"},
	}
	for _, tc := range bad {
		v := validRow()
		v[lead.SocialSecurityNumber], v[lead.DateOfBirth] = tc.ssn, tc.dob
		_, errs := mapRow(newTestMapper(nil), 1, &v)
		if len(errs) != 2 {
			t.Errorf("Map(ssn, dob) = %v, want 2 errors", errs)
		}
		for _, out := range []string{errs.Error(), fmt.Sprint(errs), fmt.Sprintf("%+v", errs), fmt.Sprintf("%#v", errs)} {
			for _, s := range []string{tc.ssn, tc.dob, strings.ReplaceAll(tc.ssn, "-", "")} {
				if strings.Contains(out, s) {
					t.Errorf("error output %q contains a sensitive value", out)
				}
			}
		}
		checkNoLeak(t, &v, errs)
	}
}

func TestDayFirstDates(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }
	cases := []struct {
		name, in, want, rule string
		dayFirst             bool
	}{
		{"us order", "12/31/1980", "1980-12-31", "", false},
		{"day first", "31/12/1980", "1980-12-31", "", true},
		{"day first short", "5/1/1980", "1980-01-05", "", true},
		{"us order short", "5/1/1980", "1980-05-01", "", false},
		{"day first rejects us order", "12/31/1980", "", ruleDateMonthFirstHint, true},
		{"day first rejects a month over 12", "31/31/1980", "", ruleDateNotRealDayFirst, true},
		{"us order rejects day first", "31/12/1980", "", ruleDateDayFirstHint, false},
		{"iso either way", "1980-12-31", "1980-12-31", "", true},
		{"day first format rule", "31.12.1980", "", ruleDateFormatDayFirst, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Options{Now: now, DayFirst: tc.dayFirst})
			var v lead.Values
			v[lead.DateOfBirth] = tc.in
			v[lead.TermsConsent] = "yes"
			in, errs := mapRow(m, 1, &v)
			var rule string
			for _, e := range errs {
				if e.Field == lead.DateOfBirth {
					rule = e.Rule
				}
			}
			if in.DateOfBirth != tc.want && tc.rule == "" || rule != tc.rule {
				t.Errorf("Map(dateOfBirth %q, DayFirst %v) = %q, rule %q; want %q, rule %q", tc.in, tc.dayFirst, in.DateOfBirth, rule, tc.want, tc.rule)
			}
		})
	}
}

// TestStateTables checks that the names normState knows name exactly the
// codes it accepts, each code at least once.
func TestStateTables(t *testing.T) {
	named := map[string]bool{}
	for name, code := range stateNames() {
		if c, ok := stateCode(code); !ok || c != code {
			t.Errorf("stateNames()[%q] = %q, not a code of stateCodes", name, code)
		}
		var buf [48]byte
		if key := string(stateNameKey(&buf, name)); key != name {
			t.Errorf("state name %q is not written as stateNameKey writes it (%q)", name, key)
		}
		named[code] = true
	}
	for i := 0; i < len(stateCodes); i += 2 {
		if code := stateCodes[i : i+2]; !named[code] {
			t.Errorf("code %s has no name in stateNames", code)
		}
	}
	if len(stateCodes) != 2*59 {
		t.Errorf("stateCodes has %d codes, want 59", len(stateCodes)/2)
	}
}

// mapRow maps one row as source does: MapFields, IDKey, PrefetchIDs (over
// a batch of one) and CheckDuplicate, from one goroutine in input order.
func mapRow(m *Mapper, row int, v *lead.Values) (lead.Input, Errors) {
	in, errs, idShown := m.MapFields(row, v)
	key := m.IDKey(in.LeadID)
	m.PrefetchIDs([]IDKey{key})
	return in, m.CheckDuplicate(row, key, idShown, errs)
}
