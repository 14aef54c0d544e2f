package redact

import (
	"strings"

	"github.com/bulkload/bulkload/lead"
)

// Redactor removes personal data from the text the service sends back
// (notes, error messages, extensions.code, a malformed bidValue or id)
// before it can reach the results file, a log or the summary: the lead's
// own SSN and date of birth in every common format, and any other number
// shaped like an SSN (package redact says which forms). A nil or zero
// Redactor removes only SSN-shaped numbers. A Redactor is immutable after
// New and safe for concurrent use.
type Redactor struct {
	own    *Own
	leadID string // the row's own leadId, which partnerLeadId may echo
}

// New returns the Redactor of one lead: in's SSN and date of birth
// (YYYY-MM-DD, as the mapper sends it) are what it looks for besides
// SSN-shaped numbers. in's leadId is kept where the service echoes it as
// partnerLeadId.
func New(in lead.Input) *Redactor {
	return &Redactor{own: NewOwn(in.SocialSecurityNumber, in.DateOfBirth), leadID: in.LeadID}
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
	if !IsUUID(res.ID) {
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
		return (*Own)(nil).Cut(s, generic)
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

// allDigits reports whether every byte of s is an ASCII digit.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
