package ledger

import (
	"strconv"

	"github.com/bulkload/bulkload/internal/jsonstr"
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
	return jsonstr.Append(appendName(b, n, name), v, true)
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
