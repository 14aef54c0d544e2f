package lead

// Status is the outcome of one row, as the results file's status column
// spells it. Validate ends a row valid or invalid; upload ends it invalid,
// processed, submitted, submit_failed, failed or unverified, and journals
// created on the way; with a ledger (package ledger), also already_sent or
// conflict.
//
// What each status means to the rest of the program is in one table,
// Statuses: the summary, the metrics and the exit status range over it
// instead of listing the statuses again.
type Status string

// The statuses of a row, in the order of Statuses.
const (
	// StatusValid: the row passed validation (validate only).
	StatusValid Status = "valid"
	// StatusInvalid: the row failed validation and was never sent.
	StatusInvalid Status = "invalid"
	// StatusProcessed: createLead answered and no submission was needed.
	StatusProcessed Status = "processed"
	// StatusSubmitted: createLead and submitLead both succeeded.
	StatusSubmitted Status = "submitted"
	// StatusSubmitFailed: the lead exists, only its submission failed.
	StatusSubmitFailed Status = "submit_failed"
	// StatusFailed: createLead failed; the error says why.
	StatusFailed Status = "failed"
	// StatusUnverified: createLead was sent again after an answer was lost
	// and answered as a duplicate that could not be confirmed as this row's
	// own lead (no lead id in the note, no permission to read it, or the read
	// failed). The first attempt may have created a lead, perhaps qualified,
	// that nobody submitted: a person reconciles it by leadId. A resumed run
	// checks it again. Likewise a createLead answer without a result code
	// (null or missing) whose lead could not be read back by its id, or a
	// qualified answer without a lead id: the lead exists, its outcome is
	// unknown; and a createLead on the wire when the run's stop cut it off,
	// whose answer never came: the lead may exist.
	StatusUnverified Status = "unverified"
	// StatusCreated: createLead answered with a code needing submission and
	// submitLead has not finished yet. A journal line, never final: a
	// resumed run submits the row by its id without creating it again.
	StatusCreated Status = "created"
	// StatusAlreadySent: the ledger says an earlier run created this lead
	// (same leadId, same content) and it needs nothing more: it was not
	// sent again. The row's id and result code are the earlier lead's,
	// its note names the run and date; its bid is not counted again.
	StatusAlreadySent Status = "already_sent"
	// StatusConflict: the ledger says an earlier run created a lead under
	// this leadId with other content: not sent (--resend-changed sends
	// it). The operator decides which is right.
	StatusConflict Status = "conflict"
)

// NumStatuses is the number of statuses, the length of Statuses.
const NumStatuses = 10

// Action says who has to act on a row that ended at a status.
type Action uint8

// The actions of Status.
const (
	// NoAction: the row is settled (valid, processed, submitted).
	NoAction Action = iota
	// PartnerAction: the partner has to fix the row (invalid). An upload
	// reports these rows and does not fail for them unless asked to.
	PartnerAction
	// OperatorAction: whoever runs bulkload has to resume the run or
	// reconcile the lead (failed, submit_failed, unverified, created).
	OperatorAction
)

// StatusInfo is one status and what it means: a line of the status table.
type StatusInfo struct {
	Status Status
	// Key is the status's name in the summary's JSON and in Counts'
	// fields' tags ("submitFailed").
	Key string
	// Final is false for a journal line that a later line of the same
	// row replaces (created).
	Final bool
	// Sent is true when createLead was sent for the row by the run that
	// ended it (every status but valid, invalid, already_sent and
	// conflict): only such a row's result code and bid are the run's to
	// count.
	Sent bool
	// Answered is true when createLead answered with a lead: the row has
	// (or had) a result code and should have a lead id.
	Answered bool
	// Lead is true when the line says the row's lead exists at the
	// service, made by the row's own calls. Unverified is not: its lead
	// exists only when it has an id (Row.HasLead); nor is already_sent,
	// whose lead is an earlier run's (the ledger keeps it).
	Lead bool
	// Action is who has to act on a row that ended here.
	Action Action
	// Rare is true for a status few runs end with (unverified, created):
	// the summary's accounting names it only when some row has it.
	Rare bool
	// count is the status's field in Counts.
	count func(*Counts) *int
}

// Failure reports whether rows that end at the status failed: final, and
// the operator's to act on (failed, submit_failed, unverified).
func (i StatusInfo) Failure() bool { return i.Final && i.Action == OperatorAction }

// Statuses is the status table: every status, in the summary's order.
// It returns a copy, which callers may range over freely.
func Statuses() [NumStatuses]StatusInfo {
	return [NumStatuses]StatusInfo{
		{Status: StatusValid, Key: "valid", Final: true, Action: NoAction,
			count: func(c *Counts) *int { return &c.Valid }},
		{Status: StatusInvalid, Key: "invalid", Final: true, Action: PartnerAction,
			count: func(c *Counts) *int { return &c.Invalid }},
		{Status: StatusProcessed, Key: "processed", Final: true, Sent: true, Answered: true, Lead: true, Action: NoAction,
			count: func(c *Counts) *int { return &c.Processed }},
		{Status: StatusSubmitted, Key: "submitted", Final: true, Sent: true, Answered: true, Lead: true, Action: NoAction,
			count: func(c *Counts) *int { return &c.Submitted }},
		{Status: StatusSubmitFailed, Key: "submitFailed", Final: true, Sent: true, Answered: true, Lead: true, Action: OperatorAction,
			count: func(c *Counts) *int { return &c.SubmitFailed }},
		{Status: StatusFailed, Key: "failed", Final: true, Sent: true, Action: OperatorAction,
			count: func(c *Counts) *int { return &c.Failed }},
		{Status: StatusUnverified, Key: "unverified", Final: true, Sent: true, Answered: true, Action: OperatorAction, Rare: true,
			count: func(c *Counts) *int { return &c.Unverified }},
		{Status: StatusCreated, Key: "created", Final: false, Sent: true, Answered: true, Lead: true, Action: OperatorAction, Rare: true,
			count: func(c *Counts) *int { return &c.Created }},
		{Status: StatusAlreadySent, Key: "alreadySent", Final: true, Action: NoAction, Rare: true,
			count: func(c *Counts) *int { return &c.AlreadySent }},
		{Status: StatusConflict, Key: "conflict", Final: true, Action: OperatorAction, Rare: true,
			count: func(c *Counts) *int { return &c.Conflict }},
	}
}

// Info returns the status's line of the table; false for a status not in
// it (a corrupt or newer results file's).
func (s Status) Info() (StatusInfo, bool) {
	for _, i := range Statuses() {
		if i.Status == s {
			return i, true
		}
	}
	return StatusInfo{}, false
}

// Known reports whether s is one of the statuses of the table.
func (s Status) Known() bool {
	_, ok := s.Info()
	return ok
}

// Final reports whether a row with this status is done: every status but
// created, which a later line of the same row replaces. An unknown status
// is final.
func (s Status) Final() bool {
	i, ok := s.Info()
	return !ok || i.Final
}

// Counts is how many rows ended at each status. Its fields are the
// summary's; Of, Add and Total range over the status table.
type Counts struct {
	Valid        int `json:"valid"`
	Invalid      int `json:"invalid"`
	Processed    int `json:"processed"`
	Submitted    int `json:"submitted"`
	SubmitFailed int `json:"submitFailed"`
	Failed       int `json:"failed"`
	// Unverified counts rows whose createLead, sent again after a lost
	// answer, was answered as a duplicate that could not be confirmed as
	// the row's own lead: a person reconciles them by leadId.
	Unverified int `json:"unverified"`
	// Created counts rows left at created: submission pending, as after an
	// interrupted run; a resumed run submits them.
	Created int `json:"created"`
	// AlreadySent counts rows whose lead an earlier run created (the
	// ledger says): not sent again.
	AlreadySent int `json:"alreadySent"`
	// Conflict counts rows whose leadId an earlier run created with other
	// content: not sent.
	Conflict int `json:"conflict"`
}

// Of returns the count of rows at the status in i.
func (c *Counts) Of(i StatusInfo) int { return *i.count(c) }

// Count adds one row at status s and reports whether s is known; an
// unknown status is not counted.
func (c *Counts) Count(s Status) bool {
	i, ok := s.Info()
	if ok {
		*i.count(c)++
	}
	return ok
}

// Add adds o's counts to c.
func (c *Counts) Add(o Counts) {
	for _, i := range Statuses() {
		*i.count(c) += *i.count(&o)
	}
}

// Total is the number of rows counted, at any status for which want
// returns true (nil: all).
func (c *Counts) Total(want func(StatusInfo) bool) int {
	n := 0
	for _, i := range Statuses() {
		if want == nil || want(i) {
			n += *i.count(c)
		}
	}
	return n
}
