package leadsim

import (
	"context"
	"fmt"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/bulkload/bulkload/leadsim/graph/debtapi"
	"github.com/bulkload/bulkload/leadsim/graph/leadapi"
)

// Result codes and notes of the workflow; RULES.md explains them.
const (
	CodeConsentMissing = 1001
	CodeDuplicate      = 1002
	CodeComplete       = 1020
	CodeQualifiedMin   = 1013
	CodeQualifiedMax   = 1017

	NoteConsentMissing  = "Terms consent not given; lead not processed"
	NoteDuplicatePrefix = "Duplicate of lead "
	NoteNoSSN           = "Processing complete: no SSN, credit report not pulled; not qualified"
	NoteLowScore        = "Processing complete: credit score below 600; not qualified"
	NoteQualifiedManual = "Qualified; awaiting submission"
	NoteQualifiedAuto   = "Qualified; submitted automatically"
	NoteSubmitted       = "Submitted"

	CreditReportComplete = "COMPLETE"
)

// CreditScore is the simulated credit score of an SSN: 300 plus the last
// four digits of the SSN read as an integer, mod 551, so 300-850.
// Non-digits are ignored and fewer than four digits count as their value
// (none: 300), as the bench/expect predictor assumes.
func CreditScore(ssn string) int {
	n, seen := 0, 0
	for i := len(ssn) - 1; i >= 0 && seen < 4; i-- {
		if c := ssn[i]; c >= '0' && c <= '9' {
			d := int(c - '0')
			for range seen {
				d *= 10
			}
			n += d
			seen++
		}
	}
	return 300 + n%551
}

// ssnKey is the deduplication key of an SSN: its digits, so "123-45-6789"
// and "123456789" are the same person.
func ssnKey(ssn string) string {
	b := make([]byte, 0, len(ssn))
	for i := 0; i < len(ssn); i++ {
		if c := ssn[i]; c >= '0' && c <= '9' {
			b = append(b, c)
		}
	}
	return string(b)
}

// QualifiedCode returns the result code of a score of at least 600.
func QualifiedCode(score int) int {
	return CodeQualifiedMin + min(4, (score-600)/50)
}

// BidValue returns the bid of a qualified result code, or "" for others.
func BidValue(code int) string {
	switch code {
	case 1013:
		return "$15.00"
	case 1014:
		return "$22.50"
	case 1015:
		return "$30.00"
	case 1016:
		return "$37.50"
	case 1017:
		return "$45.00"
	}
	return ""
}

// leadRecord is one created lead. Its SSN is not kept: dedupe keys hold it.
type leadRecord struct {
	id, partnerLeadID, note, bid string
	echo                         string // Options.EchoPII: the SSN and date of birth as echoed
	hasPartnerLeadID             bool
	code                         int
	clientID                     string
	submitted                    bool
	reportID                     string
}

type creditReport struct{ id, status, leadID string }

// store holds every lead and credit report, behind one mutex so the
// deduplication check and the registration of a lead are one step.
type store struct {
	mu         sync.Mutex
	leads      map[string]*leadRecord
	bySSN      map[string]string // SSN -> first lead id
	byContact  map[string]string // email + "\x00" + homePhone -> first lead id
	reports    map[string]*creditReport
	reportByLd map[string]string // lead id -> report id
	echo       bool              // Options.EchoPII
}

func newStore() *store {
	return &store{
		leads:      map[string]*leadRecord{},
		bySSN:      map[string]string{},
		byContact:  map[string]string{},
		reports:    map[string]*creditReport{},
		reportByLd: map[string]string{},
	}
}

func strOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// createLead runs the workflow of RULES.md for one lead of client c.
func (st *store) createLead(c *Client, in *leadapi.LeadInput) leadRecord {
	rec := st.decideLead(c, in)
	if !st.echo {
		return rec
	}
	// Options.EchoPII: the note and the bid echo the SSN and date of birth.
	st.mu.Lock()
	defer st.mu.Unlock()
	stored := st.leads[rec.id]
	stored.echo = echoPII(strOr(in.SocialSecurityNumber), in.DateOfBirth)
	stored.note = withEcho(stored.note, stored.echo)
	if stored.bid != "" {
		stored.bid += " (" + stored.echo + ")"
	}
	return *stored
}

// decideLead applies the workflow's rules to a new lead and stores it.
func (st *store) decideLead(c *Client, in *leadapi.LeadInput) (rec leadRecord) {
	rec = leadRecord{id: uuid.NewString(), clientID: c.ID}
	if in.LeadID != nil {
		rec.partnerLeadID, rec.hasPartnerLeadID = *in.LeadID, true
	}
	if in.TermsConsent == nil || !*in.TermsConsent {
		rec.code, rec.note = CodeConsentMissing, NoteConsentMissing
		st.mu.Lock()
		st.leads[rec.id] = &rec
		st.mu.Unlock()
		return rec
	}
	ssn := ssnKey(strOr(in.SocialSecurityNumber))
	email, phone := strOr(in.Email), strOr(in.HomePhone)
	contact := ""
	if email != "" && phone != "" {
		contact = email + "\x00" + phone
	}
	var reportID string
	score := 0
	if ssn != "" {
		reportID = uuid.NewString()
		score = CreditScore(ssn)
	}

	st.mu.Lock()
	defer st.mu.Unlock()
	if first, ok := st.bySSN[ssn]; ok && ssn != "" {
		rec.code, rec.note = CodeDuplicate, NoteDuplicatePrefix+first
	} else if first, ok := st.byContact[contact]; ok && contact != "" {
		rec.code, rec.note = CodeDuplicate, NoteDuplicatePrefix+first
	} else {
		if ssn != "" {
			st.bySSN[ssn] = rec.id
		}
		if contact != "" {
			st.byContact[contact] = rec.id
		}
		switch {
		case ssn == "":
			rec.code, rec.note = CodeComplete, NoteNoSSN
		default:
			rec.reportID = reportID
			st.reports[reportID] = &creditReport{id: reportID, status: CreditReportComplete, leadID: rec.id}
			st.reportByLd[rec.id] = reportID
			if score < 600 {
				rec.code, rec.note = CodeComplete, NoteLowScore
			} else {
				rec.code, rec.bid = QualifiedCode(score), BidValue(QualifiedCode(score))
				rec.note = NoteQualifiedManual
				if c.AutoSubmit {
					rec.note, rec.submitted = NoteQualifiedAuto, true
				}
			}
		}
	}
	r := rec
	st.leads[rec.id] = &r
	return rec
}

// errSubmitRefused is the GraphQL error of a refused submitLead.
func errSubmitRefused(format string, args ...any) *gqlerror.Error {
	return &gqlerror.Error{Message: fmt.Sprintf(format, args...), Extensions: map[string]any{"code": "SUBMIT_REFUSED"}}
}

// submitLead submits lead id of client c, or says why it may not.
func (st *store) submitLead(c *Client, id string) (leadRecord, *gqlerror.Error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	rec := st.leads[id]
	switch {
	case rec == nil || rec.clientID != c.ID:
		return leadRecord{}, errSubmitRefused("lead %s not found", id)
	case rec.code < CodeQualifiedMin || rec.code > CodeQualifiedMax:
		return leadRecord{}, echoError(errSubmitRefused("lead %s is not qualified (resultCode %d)", id, rec.code), rec.echo)
	case rec.submitted:
		return leadRecord{}, echoError(errSubmitRefused("lead %s already submitted", id), rec.echo)
	}
	rec.submitted = true
	out := *rec
	out.note = withEcho(NoteSubmitted, rec.echo)
	return out, nil
}

// withEcho is note with the lead's echo (Options.EchoPII) appended.
func withEcho(note, echo string) string {
	if echo == "" {
		return note
	}
	return note + " [" + echo + "]"
}

// echoOf is the echo of lead id (Options.EchoPII), or "".
func (st *store) echoOf(id string) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	if rec := st.leads[id]; rec != nil {
		return rec.echo
	}
	return ""
}

func (st *store) lead(c *Client, id string) (leadRecord, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	rec := st.leads[id]
	if rec == nil || rec.clientID != c.ID {
		return leadRecord{}, false
	}
	out := *rec
	if out.submitted && out.note == withEcho(NoteQualifiedManual, rec.echo) {
		out.note = withEcho(NoteSubmitted, rec.echo)
	}
	return out, true
}

func (st *store) creditReport(id string) (creditReport, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if r := st.reports[id]; r != nil {
		return *r, true
	}
	if rid, ok := st.reportByLd[id]; ok {
		return *st.reports[rid], true
	}
	return creditReport{}, false
}

func (rec leadRecord) wire() *leadapi.Lead {
	code := rec.code
	id, note := rec.id, rec.note
	l := &leadapi.Lead{ID: &id, ResultCode: &code, Note: &note}
	if rec.hasPartnerLeadID {
		p := rec.partnerLeadID
		l.PartnerLeadID = &p
	}
	if rec.bid != "" {
		b := rec.bid
		l.BidValue = &b
	}
	return l
}

// errForbidden is the GraphQL error of a token without the permission.
func errForbidden(op, role string) *gqlerror.Error {
	return &gqlerror.Error{
		Message:    fmt.Sprintf("%s needs the %s permission, which the token's application does not hold: ask the operator to grant it", op, role),
		Extensions: map[string]any{"code": "FORBIDDEN"},
	}
}

// resolver implements the generated resolver interfaces of both endpoints.
type resolver struct{ s *Server }

func (r resolver) Mutation() leadapi.MutationResolver { return r }
func (r resolver) Query() leadapi.QueryResolver       { return leadQuery(r) }

type leadQuery resolver
type debtQuery resolver

func (r resolver) CreateLead(ctx context.Context, in leadapi.LeadInput) (*leadapi.Lead, error) {
	p := principalFrom(ctx)
	if !p.canWrite {
		r.s.stats.reject(RejectForbidden)
		return nil, errForbidden(OpCreateLead, RoleWrite)
	}
	if n := r.s.opts.RevokeWriteAfter; n > 0 && r.s.creates.Add(1) == int64(n) {
		// This one goes through; an administrator revokes the role as
		// it is answered.
		defer r.s.revokeWrite()
	}
	if errs := checkLeadInput(&in); errs != nil {
		fields := make([]string, len(errs))
		echo := ""
		if r.s.opts.EchoPII {
			echo = echoPII(strOr(in.SocialSecurityNumber), in.DateOfBirth)
		}
		for i, e := range errs {
			fields[i] = e.Message // "<field>: <rule>", never the value
			graphql.AddError(ctx, echoError(e, echo))
		}
		r.s.stats.refused(strOr(in.LeadID))
		r.s.log.Debug("lead refused", "client_id", p.client.ID, "partner_lead_id", strOr(in.LeadID), "violations", fields)
		return nil, nil
	}
	rec := r.s.store.createLead(p.client, &in)
	r.s.stats.created(rec.partnerLeadID, rec.code, rec.submitted)
	r.s.log.Debug("lead created", "client_id", p.client.ID, "lead", rec.id, "partner_lead_id", rec.partnerLeadID, "result_code", rec.code)
	return rec.wire(), nil
}

func (r resolver) SubmitLead(ctx context.Context, id string) (*leadapi.Lead, error) {
	p := principalFrom(ctx)
	if !p.canWrite {
		r.s.stats.reject(RejectForbidden)
		return nil, errForbidden(OpSubmitLead, RoleWrite)
	}
	rec, gerr := r.s.store.submitLead(p.client, id)
	if gerr != nil {
		r.s.stats.reject(RejectSubmitRefused)
		return nil, gerr
	}
	r.s.stats.submitted()
	r.s.log.Debug("lead submitted", "client_id", p.client.ID, "lead", rec.id)
	return rec.wire(), nil
}

func (r leadQuery) Lead(ctx context.Context, id string) (*leadapi.Lead, error) {
	p := principalFrom(ctx)
	if !p.canRead {
		r.s.stats.reject(RejectForbidden)
		return nil, errForbidden(OpLead, RoleRead)
	}
	rec, ok := r.s.store.lead(p.client, id)
	if !ok {
		return nil, nil
	}
	return rec.wire(), nil
}

func (r debtQuery) Query() debtapi.QueryResolver { return r }

func (r debtQuery) CreditReport(ctx context.Context, id string) (*debtapi.CreditReport, error) {
	cr, ok := r.s.store.creditReport(id)
	if !ok {
		return nil, nil
	}
	return &debtapi.CreditReport{ID: &cr.id, Status: &cr.status}, nil
}

type principalKey struct{}

func principalFrom(ctx context.Context) *principal {
	p, _ := ctx.Value(principalKey{}).(*principal)
	if p == nil {
		return &principal{client: &Client{}}
	}
	return p
}
