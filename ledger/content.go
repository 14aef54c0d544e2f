package ledger

import (
	"strconv"
	"unicode/utf8"

	"github.com/bulkload/bulkload/lead"
)

// appendInput appends in as json.Marshal writes it: the fields in the
// struct's order under their JSON names, the omitempty ones left out when
// empty, strings escaped as encoding/json escapes them (HTML characters,
// control characters, U+2028 and U+2029, invalid UTF-8 as U+FFFD). A
// lead's content hash is of these bytes (ContentHash), so they may never
// change: TestAppendInputIsJSONMarshal and FuzzAppendInput compare them
// with json.Marshal, every field of lead.Input set. Written by hand
// because json.Marshal's reflection was most of the hash's CPU, which an
// upload pays for every lead.
func appendInput(b []byte, in *lead.Input) []byte {
	b = append(b, '{')
	n := len(b)
	b = appendStr(b, n, `"firstName":`, in.FirstName, true)
	b = appendStr(b, n, `"lastName":`, in.LastName, true)
	b = appendStr(b, n, `"dateOfBirth":`, in.DateOfBirth, false)
	b = appendStr(b, n, `"email":`, in.Email, true)
	b = appendStr(b, n, `"homePhone":`, in.HomePhone, true)
	b = appendStr(b, n, `"cellPhone":`, in.CellPhone, true)
	b = appendStr(b, n, `"address1":`, in.Address1, true)
	b = appendStr(b, n, `"address2":`, in.Address2, true)
	b = appendStr(b, n, `"city":`, in.City, true)
	b = appendStr(b, n, `"state":`, in.State, true)
	b = appendStr(b, n, `"zipCode":`, in.ZipCode, true)
	b = appendInt(b, n, `"loanAmount":`, in.LoanAmount)
	b = appendStr(b, n, `"leadId":`, in.LeadID, true)
	b = appendStr(b, n, `"ref":`, in.Ref, true)
	b = appendStr(b, n, `"trustedformCertificateID":`, in.TrustedformCertificateID, true)
	b = appendStr(b, n, `"socialSecurityNumber":`, in.SocialSecurityNumber, true)
	b = appendInt(b, n, `"grossAnnualIncome":`, in.GrossAnnualIncome)
	b = appendInt(b, n, `"monthlyIncome":`, in.MonthlyIncome)
	b = appendInt(b, n, `"residenceTypeId":`, in.ResidenceTypeID)
	b = appendInt(b, n, `"incomeSourceId":`, in.IncomeSourceID)
	b = appendInt(b, n, `"loanPurposeId":`, in.LoanPurposeID)
	b = appendBool(b, n, `"termsConsent":`, in.TermsConsent)
	b = appendBool(b, n, `"coApplicant":`, in.CoApplicant)
	return append(b, '}')
}

// appendName appends a field's `"name":`, after a comma unless it is the
// object's first (the object's fields start at n).
func appendName(b []byte, n int, name string) []byte {
	if len(b) > n {
		b = append(b, ',')
	}
	return append(b, name...)
}

func appendStr(b []byte, n int, name, v string, omitEmpty bool) []byte {
	if omitEmpty && v == "" {
		return b
	}
	return appendJSONString(appendName(b, n, name), v)
}

func appendInt(b []byte, n int, name string, v *int) []byte {
	if v == nil {
		return b
	}
	return strconv.AppendInt(appendName(b, n, name), int64(*v), 10)
}

func appendBool(b []byte, n int, name string, v *bool) []byte {
	if v == nil {
		return b
	}
	return strconv.AppendBool(appendName(b, n, name), *v)
}

// appendJSONString is encoding/json's string encoding with HTML escaping
// (its appendString, as json.Marshal calls it).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
