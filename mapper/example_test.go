package mapper_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/mapper"
)

func Example() {
	mp, err := mapper.ParseMapping(strings.NewReader(`
values:
  residenceTypeId:
    Own: 1
`), "partner.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	m := mapper.New(mapper.Options{
		Mapping: mp,
		Now:     func() time.Time { return time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC) },
	})

	// A row is MapFields, IDKey, then CheckDuplicate (from one goroutine,
	// in input order; MapFields and IDKey may run in parallel).
	mapRow := func(row int, v *lead.Values) (lead.Input, mapper.Errors) {
		in, errs, idShown := m.MapFields(row, v)
		return in, m.CheckDuplicate(row, m.IDKey(in.LeadID), idShown, errs)
	}

	var v lead.Values
	v[lead.LeadID] = "L-1"
	v[lead.DateOfBirth] = "7/4/1975"
	v[lead.HomePhone] = "(555) 123-4567"
	v[lead.ResidenceTypeID] = "own"
	v[lead.LoanAmount] = "$25,000"
	v[lead.TermsConsent] = "Yes"
	in, errs := mapRow(1, &v)
	if len(errs) == 0 {
		b, _ := json.Marshal(in)
		fmt.Println(string(b))
	}

	v[lead.ZipCode] = "2134"
	v[lead.TermsConsent] = "no"
	_, errs = mapRow(2, &v)
	fmt.Println(errs)
	// Output:
	// {"dateOfBirth":"1975-07-04","homePhone":"5551234567","loanAmount":25000,"leadId":"L-1","residenceTypeId":1,"termsConsent":true}
	// zipCode is "2134": must be 5 digits (a spreadsheet may have dropped a leading zero); leadId is "L-1": duplicate of row 1; termsConsent is "no": must be true (the service does not process leads without consent)
}
