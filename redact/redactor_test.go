package redact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/lead"
)

// redactLead is the lead of the redaction tests: SSN 123-45-6789, born
// 7 July 1977.
func redactLead() lead.Input {
	return lead.Input{SocialSecurityNumber: "123456789", DateOfBirth: "1977-07-07", LeadID: "L-100"}
}

func TestRedactorString(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		// The lead's SSN, whatever the separators.
		{"ssn dashes", "SSN 123-45-6789 on file", "SSN [REDACTED] on file"},
		{"ssn spaces", "ssn 123 45 6789.", "ssn [REDACTED]."},
		{"ssn dots", "123.45.6789", "[REDACTED]"},
		{"ssn plain", "ssn=123456789;", "ssn=[REDACTED];"},
		{"ssn glued to letters", "SSN123456789x", "SSN[REDACTED]x"},
		{"ssn odd separators", "1 2 3-4 5.6 7/8_9", "[REDACTED]"},
		{"ssn inside a longer number", "acct 0123456789", "acct 0[REDACTED]"},
		{"ssn twice", "123456789 and 123-45-6789", "[REDACTED] and [REDACTED]"},
		// The lead's date of birth, every common way.
		{"dob iso", "dob 1977-07-07", "dob [REDACTED]"},
		{"dob iso unpadded", "1977/7/7", "[REDACTED]"},
		{"dob mdy slashes", "dob 07/07/1977 ok", "dob [REDACTED] ok"},
		{"dob mdy short", "born 7/7/77", "born [REDACTED]"},
		{"dob dmy dots", "07.07.1977", "[REDACTED]"},
		{"dob dashes 2-digit year", "07-07-77", "[REDACTED]"},
		{"dob spaces", "07 07 1977", "[REDACTED]"},
		{"dob packed ymd", "dob:19770707", "dob:[REDACTED]"},
		{"dob packed mdy", "07071977", "[REDACTED]"},
		{"dob packed short", "070777", "[REDACTED]"},
		{"dob packed yymmdd", "770707", "[REDACTED]"},
		{"dob month name", "born July 7, 1977.", "born [REDACTED]."},
		{"dob abbreviation ordinal", "Jul 7th 1977", "[REDACTED]"},
		{"dob day first name", "7 July 1977", "[REDACTED]"},
		{"dob oracle style", "07-JUL-77", "[REDACTED]"},
		{"dob year first name", "1977 Jul 07", "[REDACTED]"},
		{"dob glued", "dob07/07/1977", "dob[REDACTED]"},
		{"dob in a code", "E_DOB_July_7_1977_x", "E_DOB_[REDACTED]_x"},
		// Anybody's SSN-shaped number.
		{"other ssn dashes", "see 987-65-4321", "see [REDACTED]"},
		{"other ssn plain", "ssn:987654321", "ssn:[REDACTED]"},
		{"other ssn spaces", "987 65 4321", "[REDACTED]"},
		{"other ssn letters around", "SSN987654321end", "SSN[REDACTED]end"},
		{"other ssn with an ordinal suffix", "000000000th and 987-65-4321st", "[REDACTED]th and [REDACTED]st"},
		// What must survive.
		{"uuid", "Duplicate of lead 3f2a1b4c-1234-4567-8901-246813579024", "Duplicate of lead 3f2a1b4c-1234-4567-8901-246813579024"},
		// The lead's own SSN digits go even from a UUID: a UUID holds them
		// by chance about once in 10^9 leads, and then the note's lead id
		// is lost rather than the SSN kept.
		{"lead's ssn inside a uuid", "lead 3f2a1b4c-1234-4567-8901-123456789012", "lead 3f2a1b4c-1234-4567-8901-[REDACTED]012"},
		{"uuid with a 9-digit run", "lead 0f8e7d6c-5b4a-4321-a0b1-c987654321de done", "lead 0f8e7d6c-5b4a-4321-a0b1-c987654321de done"},
		{"phone dashes", "call 555-123-4567", "call 555-123-4567"},
		{"phone parens", "(555) 123-4567", "(555) 123-4567"},
		{"phone plain", "5551234567", "5551234567"},
		{"phone international", "+1 555 123 4567", "+1 555 123 4567"},
		{"zip plus 4", "ZIP 90210-1234", "ZIP 90210-1234"},
		{"other dates", "on 2026-11-22 and 07/08/1977 and 8 July 1977", "on 2026-11-22 and 07/08/1977 and 8 July 1977"},
		{"amount", "bid $30.00 for 1015", "bid $30.00 for 1015"},
		{"8 and 10 digit runs", "24681357 2468135790", "24681357 2468135790"},
		{"no digits", "Qualified; awaiting submission", "Qualified; awaiting submission"},
	}
	r := New(redactLead())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.String(tc.in); got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRedactorWithoutLead(t *testing.T) {
	// Submit and Lead given no Redactor (nil) or a zero one: only
	// SSN-shaped numbers go.
	in := "ssn 123-45-6789 dob 07/07/1977 lead 3f2a1b4c-1234-4567-8901-246813579024"
	want := "ssn [REDACTED] dob 07/07/1977 lead 3f2a1b4c-1234-4567-8901-246813579024"
	for _, r := range []*Redactor{nil, {}} {
		if got := r.String(in); got != want {
			t.Errorf("%v.String(%q) = %q, want %q", r, in, got, want)
		}
		res := r.Result(lead.Result{Note: in})
		if res.Note != want {
			t.Errorf("%v.Result() = %+v, want the SSN-shaped numbers cut", r, res)
		}
	}
	r := New(redactLead())
	if got, want := r.String(in), "ssn [REDACTED] dob [REDACTED] lead 3f2a1b4c-1234-4567-8901-246813579024"; got != want {
		t.Errorf("with the lead's Redactor: String(%q) = %q, want %q", in, got, want)
	}
}

func TestRedactorRawValues(t *testing.T) {
	// Values the mapper would not send are still cut out as given.
	r := New(lead.Input{SocialSecurityNumber: "12-3456", DateOfBirth: "07/07/1977"})
	in := "got 12-3456 and 07/07/1977"
	if got, want := r.String(in), "got [REDACTED] and [REDACTED]"; got != want {
		t.Errorf("String(%q) = %q, want %q", in, got, want)
	}
}

func strp(s string) *string { return &s }

func TestRedactorResult(t *testing.T) {
	const uuid = "0f8e7d6c-5b4a-4321-a0b1-c123456789de"
	cases := []struct {
		name     string
		leadID   string
		in, want lead.Result
	}{
		{"plain result kept",
			"L-100",
			lead.Result{ID: uuid, Note: "Qualified", PartnerLeadID: "L-100", BidValue: strp("$30.00")},
			lead.Result{ID: uuid, Note: "Qualified", PartnerLeadID: "L-100", BidValue: strp("$30.00")}},
		{"note, odd bid, odd id",
			"L-100",
			lead.Result{ID: "id 123-45-6789", Note: "dob 7/7/77", PartnerLeadID: "L-100", BidValue: strp("30 for 987-65-4321")},
			lead.Result{ID: "id [REDACTED]", Note: "dob [REDACTED]", PartnerLeadID: "L-100", BidValue: strp("30 for [REDACTED]")}},
		{"numeric leadId echoed",
			"987654321",
			lead.Result{ID: uuid, PartnerLeadID: "987654321", BidValue: strp("USD 1,250.5")},
			lead.Result{ID: uuid, PartnerLeadID: "987654321", BidValue: strp("USD 1,250.5")}},
		{"partnerLeadId holding the dob",
			"L-100",
			lead.Result{ID: uuid, PartnerLeadID: "L-07/07/1977"},
			lead.Result{ID: uuid, PartnerLeadID: "L-[REDACTED]"}},
		{"non-uuid id keeps other numbers",
			"L-100",
			lead.Result{ID: "987654321"},
			lead.Result{ID: "987654321"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := redactLead()
			in.LeadID = tc.leadID
			got := New(in).Result(tc.in)
			if fmt.Sprint(got.ID, got.Note, got.PartnerLeadID, deref(got.BidValue)) != fmt.Sprint(tc.want.ID, tc.want.Note, tc.want.PartnerLeadID, deref(tc.want.BidValue)) {
				t.Errorf("Result(%+v) = %+v (bid %q), want %+v (bid %q)", tc.in, got, deref(got.BidValue), tc.want, deref(tc.want.BidValue))
			}
		})
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestIsAmount(t *testing.T) {
	for s, want := range map[string]bool{
		"$30.00": true, "45": true, "USD 1,250.50": true, "€ 12.5": true, "-$3": false, "$-3": true,
		"1234567": true, "12345678": false, "123456789": false, "$1,234,567.00": true, "$12,345,678": false,
		"": false, "$": false, "1,23": false, "30.": false, "30 USD": false, "SSN 1": false,
	} {
		if got := isAmount(s); got != want {
			t.Errorf("isAmount(%q) = %v, want %v", s, got, want)
		}
	}
}

// stripSSNSeps removes every character IsSSNSep accepts between
// digits.
func stripSSNSeps(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if !IsSSNSep(s[i]) {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// dobForms writes a date of birth the ways a service may echo it.
func dobForms(y, m, d int) []string {
	months := []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	mn := months[m-1]
	y2 := y % 100
	return []string{
		fmt.Sprintf("%04d-%02d-%02d", y, m, d), fmt.Sprintf("%02d/%02d/%04d", m, d, y), fmt.Sprintf("%d/%d/%02d", m, d, y2),
		fmt.Sprintf("%02d.%02d.%04d", d, m, y), fmt.Sprintf("%04d%02d%02d", y, m, d), fmt.Sprintf("%02d%02d%02d", m, d, y2),
		fmt.Sprintf("%s %d, %04d", mn, d, y), fmt.Sprintf("%d %s %04d", d, mn[:3], y), fmt.Sprintf("%02d-%s-%02d", d, strings.ToUpper(mn[:3]), y2),
		fmt.Sprintf("%d-%d-%d", y, m, d), fmt.Sprintf("%02d %02d %04d", d, m, y),
	}
}

// FuzzRedactor checks, for any text and any lead: the text with the
// separators removed never holds the lead's SSN digits once redacted; the
// lead's date of birth, written any of the dobForms ways between spaces,
// never survives; and no run of exactly 9 digits survives outside a UUID.
//
//	go test -run '^$' -fuzz FuzzRedactor -fuzztime 10m ./redact
func FuzzRedactor(f *testing.F) {
	f.Add("SSN 123-45-6789 dob 07/07/1977", uint32(123456789), uint16(1977), uint8(7), uint8(7), uint8(0), "-")
	f.Add("lead 3f2a1b4c-1234-4567-8901-246813579024 1 2 3", uint32(1234), uint16(2001), uint8(1), uint8(31), uint8(3), " ")
	f.Add("1111111111111111111", uint32(111111111), uint16(1911), uint8(11), uint8(11), uint8(5), "")
	f.Add("Jul 7th, 77 07-JUL-1977", uint32(987654321), uint16(1977), uint8(7), uint8(7), uint8(8), "._/")
	f.Fuzz(func(t *testing.T, text string, ssnN uint32, y uint16, m, d, form uint8, sep string) {
		ssn := fmt.Sprintf("%09d", ssnN%1_000_000_000)
		year, month, day := 1900+int(y%200), 1+int(m%12), 1+int(d%28)
		in := lead.Input{SocialSecurityNumber: ssn, DateOfBirth: fmt.Sprintf("%04d-%02d-%02d", year, month, day)}
		r := New(in)

		// The SSN, split by the fuzzed separators, somewhere in the text.
		if len(sep) > 4 || stripSSNSeps(sep) != "" {
			sep = "-"
		}
		echoed := ssn[:3] + sep + ssn[3:5] + sep + ssn[5:]
		cut := len(text) / 2
		forms := dobForms(year, month, day)
		dob := forms[int(form)%len(forms)]
		s := text[:cut] + echoed + text[cut:] + " " + dob + " " + text
		out := r.String(s)
		if strings.Contains(stripSSNSeps(out), ssn) {
			t.Fatalf("String(%q) = %q: still holds the SSN %s", s, out, ssn)
		}
		if strings.Contains(out, " "+dob+" ") {
			t.Fatalf("String(%q) = %q: still holds the date of birth %q", s, out, dob)
		}
		if run := nineDigitRun(out); run != "" {
			t.Fatalf("String(%q) = %q: a 9-digit run %q survived outside a UUID", s, out, run)
		}
		if again := r.String(out); again != out {
			t.Fatalf("String is not idempotent: %q, then %q", out, again)
		}
	})
}

// nineDigitRun returns a maximal run of exactly 9 digits of s outside its
// UUIDs, or "".
func nineDigitRun(s string) string {
	inUUID := make([]bool, len(s))
	isHex := func(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }
	for i := 0; i+36 <= len(s); i++ {
		if (i == 0 || !isHex(s[i-1])) && IsUUID(s[i:i+36]) && (i+36 == len(s) || !isHex(s[i+36])) {
			for k := i; k < i+36; k++ {
				inUUID[k] = true
			}
			i += 35
		}
	}
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j-i == 9 && !inUUID[i] && !inUUID[j-1] {
			return s[i:j]
		}
		i = j
	}
	return ""
}

// BenchmarkRedactor measures a row's redaction of typical notes: without
// digits (the common case), naming a lead by UUID, and a note echoing the
// SSN and date of birth several ways.
//
//	go test -run '^$' -bench Redactor -benchmem ./redact
func BenchmarkRedactor(b *testing.B) {
	notes := map[string]string{
		"no digits": "Qualified; awaiting submission",
		"uuid":      "Duplicate of lead 3f2a1b4c-1234-4567-8901-246813579024",
		"echo":      "Submitted [SSN 123-45-6789 (123 45 6789, 123.45.6789, 123456789), DOB 07/07/1977 (7/7/77, 1977-07-07, 07.07.1977, 19770707, July 7, 1977, 07-JUL-77)]",
	}
	for name, note := range notes {
		b.Run(name, func(b *testing.B) {
			in := redactLead()
			b.ReportAllocs()
			for b.Loop() {
				New(in).Result(lead.Result{ID: "3f2a1b4c-1234-4567-8901-246813579024", Note: note, PartnerLeadID: in.LeadID})
			}
		})
	}
}
