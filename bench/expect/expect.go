// Package expect predicts the outcome the simulator (leadsim) gives each
// valid lead, from the rules leadsim documents (leadsim/RULES.md) and not
// from leadsim's code, so the expected-results files under samples/ and the
// end-to-end tests compare two independent implementations of the rules.
//
// The rules, in order, for a lead sent with createLead:
//  1. termsConsent not true: 1001;
//  2. an earlier lead with the same SSN, or the same email AND homePhone:
//     1002 (duplicate);
//  3. no SSN: 1020;
//  4. score = 300 + (last four SSN digits mod 551); below 600: 1020;
//  5. otherwise qualified: 1013 (600-649), 1014 (650-699), 1015 (700-749),
//     1016 (750-799), 1017 (800-850) with bids $15.00, $22.50, $30.00,
//     $37.50, $45.00; bulkload then calls submitLead for it.
package expect

import (
	"strings"

	"github.com/bulkload/bulkload/lead"
)

// Result codes of the simulator's workflow that the interface does not name.
const (
	CodeNoConsent = 1001
	CodeDuplicate = 1002
)

// Outcome is what the simulator answers for one lead, and whether bulkload
// (manual-submission partner, no --no-submit) submits it afterwards.
type Outcome struct {
	ResultCode int
	BidValue   string // "" when not qualified
	Submitted  bool
}

// Predictor predicts outcomes for a sequence of leads sent in order; it
// remembers earlier leads for the duplicate rule. Not safe for concurrent
// use.
type Predictor struct {
	ssns       map[string]struct{}
	emailPhone map[string]struct{}
}

// NewPredictor returns a Predictor that has seen no lead.
func NewPredictor() *Predictor {
	return &Predictor{ssns: map[string]struct{}{}, emailPhone: map[string]struct{}{}}
}

// Predict returns the outcome of the next lead. v holds a row that the
// mapper accepts; phones and SSNs may still carry punctuation.
func (p *Predictor) Predict(v *lead.Values) Outcome {
	if !isTrue(v[lead.TermsConsent]) {
		return Outcome{ResultCode: CodeNoConsent}
	}
	ssn := digits(v[lead.SocialSecurityNumber])
	email := strings.TrimSpace(v[lead.Email])
	phone := phoneDigits(v[lead.HomePhone])
	var key string
	if email != "" && phone != "" {
		key = email + "\x00" + phone
	}
	if _, dup := p.ssns[ssn]; ssn != "" && dup {
		return Outcome{ResultCode: CodeDuplicate}
	}
	if _, dup := p.emailPhone[key]; key != "" && dup {
		return Outcome{ResultCode: CodeDuplicate}
	}
	if ssn != "" {
		p.ssns[ssn] = struct{}{}
	}
	if key != "" {
		p.emailPhone[key] = struct{}{}
	}
	if ssn == "" {
		return Outcome{ResultCode: lead.CodeComplete}
	}
	code, bid := Qualify(Score(ssn))
	return Outcome{ResultCode: code, BidValue: bid, Submitted: lead.NeedsSubmission(code)}
}

// Score is the simulator's credit score for a 9-digit SSN: 300 + (the last
// four digits mod 551). Non-digits are ignored; fewer than four digits
// score as their value.
func Score(ssn string) int {
	d := digits(ssn)
	if len(d) > 4 {
		d = d[len(d)-4:]
	}
	n := 0
	for i := 0; i < len(d); i++ {
		n = n*10 + int(d[i]-'0')
	}
	return 300 + n%551
}

// Qualify returns the result code and bid for a credit score: 1020 and no
// bid below 600, else 1013-1017 by 50-point bands with their bids.
func Qualify(score int) (code int, bid string) {
	if score < 600 {
		return lead.CodeComplete, ""
	}
	band := min((score-600)/50, 4)
	bids := [5]string{"$15.00", "$22.50", "$30.00", "$37.50", "$45.00"}
	return lead.CodeQualifiedMin + band, bids[band]
}

func isTrue(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "y", "1":
		return true
	}
	return false
}

func digits(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// phoneDigits is the mapper's phone normalisation: digits only, without a
// leading country code 1 when 11 digits remain.
func phoneDigits(s string) string {
	d := digits(s)
	if len(d) == 11 && d[0] == '1' {
		d = d[1:]
	}
	return d
}
