package submitter

import (
	"strings"

	"github.com/bulkload/bulkload/internal/redact"
	"github.com/bulkload/bulkload/lead"
)

// redactedText replaces every piece of personal data cut out of service
// text.
const redactedText = redact.Text

// Redactor removes personal data from the text the service sends back
// (notes, error messages, extensions.code, a malformed bidValue or id)
// before it can reach the results file, a log or the summary: the lead's
// own SSN and date of birth in every common format, and any other number
// shaped like an SSN (package redact says which forms). A nil or zero
// Redactor removes only SSN-shaped numbers. A Redactor is immutable after
// NewRedactor and safe for concurrent use.
type Redactor struct {
	own    *redact.Own
	leadID string // the row's own leadId, which partnerLeadId may echo
}

// NewRedactor returns the Redactor of one lead: in's SSN and date of birth
// (YYYY-MM-DD, as the mapper sends it) are what it looks for besides
// SSN-shaped numbers. in's leadId is kept where the service echoes it as
// partnerLeadId.
func NewRedactor(in lead.Input) *Redactor {
	return &Redactor{own: redact.NewOwn(in.SocialSecurityNumber, in.DateOfBirth), leadID: in.LeadID}
}

// String returns s with the lead's SSN and date of birth and every
// SSN-shaped number replaced by [REDACTED].
func (r *Redactor) String(s string) string {
	return r.redact(s, true)
}

// Result redacts a result the service sent: the note in full; the id only
// when it is not a UUID (the id is sent back to submitLead, so it is
// changed only if it holds the lead's own SSN or birth date); partnerLeadId
// for the lead's own values unless it is the row's leadId; bidValue in full
// unless it is a plain amount.
func (r *Redactor) Result(res lead.Result) lead.Result {
	if r == nil {
		r = &Redactor{}
	}
	res.Note = r.String(res.Note)
	if !redact.IsUUID(res.ID) {
		res.ID = r.redact(res.ID, false)
	}
	if res.PartnerLeadID != r.leadID || r.leadID == "" {
		res.PartnerLeadID = r.redact(res.PartnerLeadID, false)
	}
	if res.BidValue != nil && !isAmount(*res.BidValue) {
		v := r.String(*res.BidValue)
		res.BidValue = &v
	}
	return res
}

// redact cuts the lead's values out of s, and with generic also every
// SSN-shaped number.
func (r *Redactor) redact(s string, generic bool) string {
	if r == nil {
		return (*redact.Own)(nil).Cut(s, generic)
	}
	return r.own.Cut(s, generic)
}

// isAmount reports whether s is a plain money amount such as "$30.00",
// "USD 1,250" or "45": at most 7 digits before the decimal point, so that
// no SSN fits.
func isAmount(s string) bool {
	s = strings.TrimSpace(s)
	for _, p := range []string{"USD", "$", "€", "£"} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			s = strings.TrimSpace(rest)
			break
		}
	}
	s = strings.TrimPrefix(s, "-")
	whole, frac, hasFrac := strings.Cut(s, ".")
	if hasFrac && (len(frac) == 0 || len(frac) > 4 || !allDigits(frac)) {
		return false
	}
	n := 0
	for i, g := range strings.Split(whole, ",") {
		if g == "" || !allDigits(g) || (i > 0 && len(g) != 3) {
			return false
		}
		n += len(g)
	}
	return n >= 1 && n <= 7
}

// callError redacts every text of ce that may come from the service: the
// message, the extensions codes, and the cause's text.
func (r *Redactor) callError(ce *CallError) {
	ce.Message = r.String(ce.Message)
	ce.Code = r.String(ce.Code)
	for i := range ce.Errors {
		ce.Errors[i].Message = r.String(ce.Errors[i].Message)
		ce.Errors[i].Code = r.String(ce.Errors[i].Code)
	}
	if ce.Err != nil {
		if msg := r.String(ce.Err.Error()); msg != ce.Err.Error() {
			ce.Err = &redactedError{msg: msg, err: ce.Err}
		}
	}
}

// redactedError is a cause whose text held personal data: Error prints the
// redacted text, and errors.Is still sees the original.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
