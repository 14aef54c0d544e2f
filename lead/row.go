package lead

// Row is one input row as every stage passes it along: its number and
// identifiers from the input (the source fills them), and its outcome: the
// status, what the service answered, what the engine adds, and why it
// failed. The results file (package report) is its codec. Row is the input
// row number the caller assigns (0 or more); ResultCode and Attempts of 0
// mean none. The struct has no field for an SSN or a date of birth on
// purpose.
type Row struct {
	Row    int
	LeadID string
	Ref    string
	Status Status
	ID     string
	// ResultCode is createLead's result code; 0 for none.
	ResultCode int
	// Note is the service's note on the lead (createLead's, a lead read
	// back by its id, or submitLead's), or the engine's own when it
	// settled the row without an answer to quote (a lead submitted
	// already).
	Note string
	// EngineNotes are what bulkload adds to the service's note, in order:
	// how it settled an answer that was lost, a duplicate, or one without
	// a result code or a lead id ("createLead answered without a lead
	// id"). Each is one sentence, without markers: the results file's
	// codec adds its own.
	EngineNotes []string
	BidValue    string
	// Attempts is how many times createLead was sent; 0 for none.
	Attempts int
	// Error is why the row failed, as text: the service's answer or the
	// run's own reason (a failed or submit_failed row), or the error column
	// read back from a results file.
	Error string
	// Invalid is why the row is invalid, as values: the reader's and the
	// mapper's errors. They are rendered into the error column when the row
	// is written (after Error, when both are set) and counted by the
	// summary by their reasons; reading a results file back gives Error.
	Invalid RowErrors
	// Ambiguous marks a failed row whose createLead may have reached the
	// service and got no usable answer (a lost answer, a 5xx but the
	// service's own 503, a 200 that does not decode), or that a resumed run
	// sent again (and an unverified row kept from such a line: see
	// upload.MatchPrior): a later duplicate answer may be its own lead. The
	// results file keeps it in the note column, so that it survives the
	// process.
	Ambiguous bool
	// Refused marks a failed row the service refused outright: its answer
	// was about this lead (a GraphQL error, a 4xx), not about the moment
	// (retries run out, an outage) and not ambiguous. Sending it again
	// gets the same answer: the partner must fix it. The results file does
	// not keep it (the error column says why).
	Refused bool
}

// HasLead reports whether this line says the row's lead exists at the
// service: created (and perhaps submitted), answered (processed), or
// unverified with an id. Such a row keeps its lead whatever later edits do
// to its cells.
func (r *Row) HasLead() bool {
	i, _ := r.Status.Info()
	return i.Lead || i.Answered && r.ID != ""
}

// MayHaveLead reports whether this line says the row's lead exists or may
// exist: HasLead, a createLead that may have reached the service without
// a usable answer (Ambiguous), or unverified (its lead could not be
// confirmed or ruled out). Such a row is never dropped as invalid when an
// edit breaks its cells.
func (r *Row) MayHaveLead() bool {
	return r.HasLead() || r.Ambiguous || r.Status == StatusUnverified
}

// ErrorText is the row's error column: Error and the rendered Invalid,
// joined by "; " when both are set.
func (r *Row) ErrorText() string {
	switch {
	case len(r.Invalid) == 0:
		return r.Error
	case r.Error == "":
		return r.Invalid.Error()
	}
	return r.Error + "; " + r.Invalid.Error()
}
