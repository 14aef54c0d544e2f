// Package lead holds the lead's own types, shared by every stage of the
// pipeline: the canonical field names of LeadInput, the wire shapes of
// LeadInput and of the createLead result, the meaning of result codes, and
// a row's statuses with the one table of what each means (Statuses).
//
// It has no dependencies inside the module, so the reader, mapper, submitter
// and report packages can all import it without importing each other.
package lead

import (
	"fmt"
	"log/slog"
)

// Field names one LeadInput field. Its String is the field's name on the
// wire, exactly as the interface spells it.
type Field int

// The LeadInput fields of the interface (section 2 of the spec). LeadSourceID
// is known so that a column carrying it can be recognised and dropped: the
// service derives it from the credentials and it is never sent.
const (
	FirstName Field = iota
	LastName
	DateOfBirth
	Email
	HomePhone
	CellPhone
	Address1
	Address2
	City
	State
	ZipCode
	LoanAmount
	LeadID
	Ref
	TrustedformCertificateID
	SocialSecurityNumber
	GrossAnnualIncome
	MonthlyIncome
	ResidenceTypeID
	IncomeSourceID
	LoanPurposeID
	TermsConsent
	CoApplicant
	LeadSourceID

	// NumFields is the number of known fields; Values is indexed by Field.
	NumFields
)

// String returns the field's name as the interface spells it. The names,
// in Field order, are the one table of them: lead.Input's JSON keys and the
// reader's CSV row struct agree with it (TestFieldTables, TestCSVRowFields).
func (f Field) String() string {
	if f < 0 || f >= NumFields {
		return fmt.Sprintf("Field(%d)", int(f))
	}
	return [NumFields]string{
		"firstName",
		"lastName",
		"dateOfBirth",
		"email",
		"homePhone",
		"cellPhone",
		"address1",
		"address2",
		"city",
		"state",
		"zipCode",
		"loanAmount",
		"leadId",
		"ref",
		"trustedformCertificateID",
		"socialSecurityNumber",
		"grossAnnualIncome",
		"monthlyIncome",
		"residenceTypeId",
		"incomeSourceId",
		"loanPurposeId",
		"termsConsent",
		"coApplicant",
		"leadSourceId",
	}[f]
}

// Sensitive reports whether the field's value must never appear in a log, an
// error message or the results file: the SSN and the date of birth.
func (f Field) Sensitive() bool {
	return f == SocialSecurityNumber || f == DateOfBirth
}

// FieldByName returns the field whose wire name is name, compared exactly.
// Loose matching of partner headers is the reader's job.
func FieldByName(name string) (Field, bool) {
	for f := Field(0); f < NumFields; f++ {
		if f.String() == name {
			return f, true
		}
	}
	return 0, false
}

// Values is the raw text of one input row, indexed by Field. An empty string
// means the row has no value for the field.
type Values [NumFields]string

// Input is the LeadInput object sent as the variable "input" of createLead.
// Empty strings and nil pointers are omitted from the JSON, so an absent cell
// is never sent as "" or 0. DateOfBirth is the one field the schema requires.
//
// Input carries an SSN and a date of birth: its String, GoString and
// LogValue methods redact them, so printing or logging an Input by accident
// does not leak them. Only encoding/json sees the real values.
type Input struct {
	FirstName                string `json:"firstName,omitempty"`
	LastName                 string `json:"lastName,omitempty"`
	DateOfBirth              string `json:"dateOfBirth"`
	Email                    string `json:"email,omitempty"`
	HomePhone                string `json:"homePhone,omitempty"`
	CellPhone                string `json:"cellPhone,omitempty"`
	Address1                 string `json:"address1,omitempty"`
	Address2                 string `json:"address2,omitempty"`
	City                     string `json:"city,omitempty"`
	State                    string `json:"state,omitempty"`
	ZipCode                  string `json:"zipCode,omitempty"`
	LoanAmount               *int   `json:"loanAmount,omitempty"`
	LeadID                   string `json:"leadId,omitempty"`
	Ref                      string `json:"ref,omitempty"`
	TrustedformCertificateID string `json:"trustedformCertificateID,omitempty"`
	SocialSecurityNumber     string `json:"socialSecurityNumber,omitempty"`
	GrossAnnualIncome        *int   `json:"grossAnnualIncome,omitempty"`
	MonthlyIncome            *int   `json:"monthlyIncome,omitempty"`
	ResidenceTypeID          *int   `json:"residenceTypeId,omitempty"`
	IncomeSourceID           *int   `json:"incomeSourceId,omitempty"`
	LoanPurposeID            *int   `json:"loanPurposeId,omitempty"`
	TermsConsent             *bool  `json:"termsConsent,omitempty"`
	CoApplicant              *bool  `json:"coApplicant,omitempty"`
}

const redacted = "[REDACTED]"

func (in Input) redacted() Input {
	if in.DateOfBirth != "" {
		in.DateOfBirth = redacted
	}
	if in.SocialSecurityNumber != "" {
		in.SocialSecurityNumber = redacted
	}
	return in
}

// plainInput has Input's fields but none of its methods, so formatting it
// does not recurse into String.
type plainInput Input

// String formats the lead with its SSN and date of birth redacted.
func (in Input) String() string { return fmt.Sprintf("%+v", plainInput(in.redacted())) }

// GoString is String for the %#v verb.
func (in Input) GoString() string { return in.String() }

// LogValue makes slog log the lead with its SSN and date of birth redacted.
func (in Input) LogValue() slog.Value {
	r := in.redacted()
	return slog.GroupValue(
		slog.String("leadId", r.LeadID),
		slog.String("ref", r.Ref),
		slog.String("dateOfBirth", r.DateOfBirth),
		slog.String("socialSecurityNumber", r.SocialSecurityNumber),
		slog.String("state", r.State),
	)
}

// Result is the object createLead returns, with all five selectable fields.
// BidValue is nil when the lead is not qualified.
type Result struct {
	ID            string  `json:"id"`
	ResultCode    int     `json:"resultCode"`
	Note          string  `json:"note"`
	PartnerLeadID string  `json:"partnerLeadId"`
	BidValue      *string `json:"bidValue"`
}

// Result codes the interface names. Other codes exist; their meaning is not
// shown in the interface, so the client records them and their note as given.
const (
	// CodeComplete is returned when the workflow completed without
	// qualifying the lead; the note says why.
	CodeComplete = 1020
	// CodeQualifiedMin and CodeQualifiedMax bound the qualified codes.
	CodeQualifiedMin = 1013
	CodeQualifiedMax = 1017
)

// NeedsSubmission reports whether a lead with this result code is qualified,
// so that a partner with manual submission must call submitLead for it.
func NeedsSubmission(code int) bool {
	return code >= CodeQualifiedMin && code <= CodeQualifiedMax
}
