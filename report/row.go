// Package report is the last stage of the pipeline: it writes the results
// file (one line per input row, CSV or JSONL), keeps it as an append-only
// journal during an upload and compacts it at the end, reads it back for
// --resume, and prints the run's summary with its accounting check.
//
// The results file has ten columns and nothing else (see Header): it has no
// column for an SSN or a date of birth, and its note and error come from the
// service and the mapper, which never carry those values. It is CSV with a
// header, or JSONL when its name ends in .jsonl or .ndjson, and is created
// with mode 0600.
//
// During an upload the file is a journal: lines are appended in completion
// order, a row may have several (a durable `created` line, then its final
// line), and a reader takes the last line of each row. A line counts once its
// newline is written; a half-written last line, left by a killed process, is
// ignored by LoadState and cut off by OpenJournal(path, true). At the end of a
// run Compact rewrites the file as one line per row in row order.
package report

import (
	"strings"

	"github.com/bulkload/bulkload/lead"
)

// Status is lead.Status, kept here while callers move to lead.
type Status = lead.Status

// The statuses of a row, kept here while callers move to lead's.
const (
	StatusValid        = lead.StatusValid
	StatusInvalid      = lead.StatusInvalid
	StatusCreated      = lead.StatusCreated
	StatusProcessed    = lead.StatusProcessed
	StatusSubmitted    = lead.StatusSubmitted
	StatusSubmitFailed = lead.StatusSubmitFailed
	StatusFailed       = lead.StatusFailed
	StatusUnverified   = lead.StatusUnverified
)

// AmbiguousNote opens the note of a row marked Ambiguous in the results
// file: the one place the mark is kept, so that it survives the process.
const AmbiguousNote = "[ambiguous: createLead may have reached the service although its answer was lost; --resume checks whether a duplicate answer is this row's own lead]"

// statusCode is the status's one-byte code in State, 1 + its index in
// lead.Statuses; 0 for an unknown status.
func statusCode(s Status) uint8 {
	for i, st := range lead.Statuses() {
		if st.Status == s {
			return uint8(i + 1)
		}
	}
	return 0
}

// The status code must fit the 4 bits lineRef.meta keeps for it.
const _ = uint8(15 - lead.NumStatuses)

// statusOf is the inverse of statusCode.
func statusOf(c uint8) Status {
	if c == 0 || int(c) > lead.NumStatuses {
		return ""
	}
	return lead.Statuses()[c-1].Status
}

// Row is one line of the results file. Row is the input row number the
// caller assigns (0 or more); ResultCode and Attempts of 0 are written as an
// empty column (JSON null). The struct has no field for an SSN or a date of
// birth on purpose.
type Row struct {
	Row        int
	LeadID     string
	Ref        string
	Status     Status
	ID         string
	ResultCode int // 0 = empty column
	Note       string
	BidValue   string
	Attempts   int // 0 = empty column
	// Error is why the row failed, as text: the service's answer or the
	// run's own reason (a failed or submit_failed row), or the error column
	// read back from a results file.
	Error string
	// Invalid is why the row is invalid, as values: the reader's and the
	// mapper's errors. They are rendered into the error column when the row
	// is written (after Error, when both are set) and counted by the
	// summary by their reasons; reading a results file back gives Error.
	Invalid lead.RowErrors
	// Ambiguous marks a failed row whose createLead may have reached the
	// service and got no usable answer (a lost answer, a 5xx but 503, a 200
	// that does not decode: see submitter's mayBeProcessed), or that a
	// resumed run sent again: a later duplicate answer may be its own
	// lead. It is written as AmbiguousNote at the start of the note column
	// and read back from it (the note's wording is kept for files written
	// before; --resume checks every failed row either way).
	Ambiguous bool
	// Refused marks a failed row the service refused outright: its answer
	// was about this lead (a GraphQL error, a 4xx), not about the moment
	// (retries run out, an outage) and not ambiguous. Sending it again
	// gets the same answer: the partner must fix it. It is not a column of
	// the results file (the error column says why); upload's --refusals
	// file holds these rows.
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

// noteText is the row's note column: the note, after AmbiguousNote when the
// row is Ambiguous.
func (r *Row) noteText() string {
	switch {
	case !r.Ambiguous:
		return r.Note
	case r.Note == "":
		return AmbiguousNote
	}
	return AmbiguousNote + " " + r.Note
}

// setNote is the inverse of noteText: it sets Note and Ambiguous from a note
// column.
func (r *Row) setNote(col string) {
	rest, ok := strings.CutPrefix(col, AmbiguousNote)
	if !ok {
		r.Note = col
		return
	}
	r.Ambiguous = true
	r.Note = strings.TrimPrefix(rest, " ")
}
