// Package report is the last stage of the pipeline: the results file. It
// defines the file's columns once (schema.go) and its two codecs, CSV and
// JSONL (codec.go), writes it (one line per input row), keeps it as an
// append-only journal during an upload and compacts it at the end, and
// reads it back for --resume (State). The run's summary is package
// summary's; the files beside the results file (its lock and meta file) and
// the checks before a run are package outfile's.
//
// The results file has ten columns and nothing else (see Header): it has no
// column for an SSN or a date of birth, and its note and error come from the
// service and the mapper, which never carry those values. It is CSV with a
// header, or JSONL when its name ends in .jsonl or .ndjson, and is created
// with mode 0600. Its rows are lead.Row values; this package alone knows how
// the note column carries a row's Ambiguous mark and the engine's notes
// besides the service's note.
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

// statusCode is the status's one-byte code in State, 1 + its index in
// lead.Statuses; 0 for an unknown status.
func statusCode(s lead.Status) uint8 {
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
func statusOf(c uint8) lead.Status {
	if c == 0 || int(c) > lead.NumStatuses {
		return ""
	}
	return lead.Statuses()[c-1].Status
}

// The results file writes a lead.Row's note column from Note,
// EngineNotes and Ambiguous (noteColumn) and reads them back from it
// (setNoteColumn); Refused is not written.

// AmbiguousNote opens the note column of a row marked Ambiguous: the one
// place the mark is kept, so that it survives the process. Its wording is
// kept for files written before.
const AmbiguousNote = "[ambiguous: createLead may have reached the service although its answer was lost; --resume checks whether a duplicate answer is this row's own lead]"

// engineNoteOpen and engineNoteClose enclose each of a row's EngineNotes in
// the note column, after the service's note.
const (
	engineNoteOpen  = " [bulkload: "
	engineNoteClose = "]"
)

// NoteText is the service's note followed by the engine's notes, each
// enclosed in engineNoteOpen and engineNoteClose: the note column without
// AmbiguousNote, and the note the summary quotes.
func NoteText(r *lead.Row) string {
	if len(r.EngineNotes) == 0 {
		return r.Note
	}
	var b strings.Builder
	b.WriteString(r.Note)
	for _, n := range r.EngineNotes {
		b.WriteString(engineNoteOpen)
		b.WriteString(n)
		b.WriteString(engineNoteClose)
	}
	return b.String()
}

// noteColumn is the row's note column: NoteText, after AmbiguousNote when
// the row is Ambiguous.
func noteColumn(r *lead.Row) string {
	note := NoteText(r)
	switch {
	case !r.Ambiguous:
		return note
	case note == "":
		return AmbiguousNote
	}
	return AmbiguousNote + " " + note
}

// setNoteColumn is the inverse of noteColumn: it sets Ambiguous, Note and
// EngineNotes from a note column. The engine's notes start at the first
// engineNoteOpen; a column whose text after it does not split into notes
// each closed by engineNoteClose is all the service's note. Writing the row
// again gives the same column.
func setNoteColumn(r *lead.Row, col string) {
	if rest, ok := strings.CutPrefix(col, AmbiguousNote); ok {
		r.Ambiguous = true
		col = strings.TrimPrefix(rest, " ")
	}
	r.Note, r.EngineNotes = col, nil
	i := strings.Index(col, engineNoteOpen)
	if i < 0 {
		return
	}
	notes := strings.Split(col[i+len(engineNoteOpen):], engineNoteOpen)
	for j, n := range notes {
		n, ok := strings.CutSuffix(n, engineNoteClose)
		if !ok {
			return
		}
		notes[j] = n
	}
	r.Note, r.EngineNotes = col[:i], notes
}
