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
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

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

// Header is the results file's columns, in order, comma-separated: the CSV
// header line (without its newline) and the JSONL keys.
const Header = "row,leadId,ref,status,id,resultCode,note,bidValue,attempts,error"

// numColumns is the number of columns in Header.
const numColumns = 10

// maxRow bounds row numbers so that State and Compact can keep them in an
// int32.
const maxRow = math.MaxInt32

// Format is the results file's encoding.
type Format int

// The two formats of the results file.
const (
	// FormatCSV is a header line and one CSV record a row (RFC 4180 quoting,
	// LF line ends). As encoding/csv reads it, a CR LF inside a quoted note
	// or error comes back as LF. The text columns (leadId, ref, id, note,
	// bidValue, error) are escaped against spreadsheet formulas with
	// lead.EscapeCell, and unescaped when read back.
	FormatCSV Format = iota
	// FormatJSONL is one JSON object a line with all ten column keys, always
	// present: strings ("" when empty), row a number, resultCode and attempts
	// numbers or null when empty (a reader also takes them missing). Invalid
	// UTF-8 in a string is written as U+FFFD.
	FormatJSONL
)

// String names the format.
func (f Format) String() string {
	if f == FormatJSONL {
		return "jsonl"
	}
	return "csv"
}

// FormatFor returns the format a results file at path is written in: JSONL
// for .jsonl and .ndjson (any case), CSV for anything else.
func FormatFor(path string) Format {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson":
		return FormatJSONL
	}
	return FormatCSV
}

// errBadRow is wrapped by the errors a Row fails validation with.
var errBadRow = errors.New("invalid results row")

func checkRow(r *Row) error {
	if r.Row < 0 || r.Row > maxRow {
		return fmt.Errorf("%w: row number %d out of range 0..%d", errBadRow, r.Row, maxRow)
	}
	if !r.Status.Known() {
		return fmt.Errorf("%w: row %d: unknown status%s", errBadRow, r.Row, quoteStatus(r.Status))
	}
	return nil
}

// quoteStatus quotes an unknown status for an error message if it looks like
// a status name; otherwise it could be partner data from a corrupt line.
func quoteStatus(s Status) string {
	if len(s) == 0 || len(s) > 16 {
		return ""
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && c != '_' {
			return ""
		}
	}
	return fmt.Sprintf(" %q", s)
}

// encoder writes rows to a buffered writer in one format. Its owner flushes.
type encoder struct {
	format Format
	bw     *bufio.Writer
	cw     *csv.Writer
	rec    []string
	buf    []byte
}

func newEncoder(w io.Writer, f Format) *encoder {
	e := &encoder{format: f, bw: bufio.NewWriterSize(w, 64<<10)}
	if f == FormatCSV {
		e.cw = csv.NewWriter(e.bw)
		e.rec = make([]string, numColumns)
	}
	return e
}

func (e *encoder) writeHeader() error {
	if e.format != FormatCSV {
		return nil
	}
	_, err := e.bw.WriteString(Header + "\n")
	return err
}

func itoaEmpty(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// write encodes one row; it is in the user-space buffer until flush.
func (e *encoder) write(r *Row) error {
	if err := checkRow(r); err != nil {
		return err
	}
	if e.format == FormatCSV {
		e.rec[0] = strconv.Itoa(r.Row)
		// The partner's and the service's text is escaped against
		// formula injection (lead.EscapeCell); toRow undoes it.
		e.rec[1] = lead.EscapeCell(r.LeadID)
		e.rec[2] = lead.EscapeCell(r.Ref)
		e.rec[3] = string(r.Status)
		e.rec[4] = lead.EscapeCell(r.ID)
		e.rec[5] = itoaEmpty(r.ResultCode)
		e.rec[6] = lead.EscapeCell(r.noteText())
		e.rec[7] = lead.EscapeCell(r.BidValue)
		e.rec[8] = itoaEmpty(r.Attempts)
		e.rec[9] = lead.EscapeCell(r.ErrorText())
		return e.cw.Write(e.rec)
	}
	e.buf = appendJSON(e.buf[:0], r)
	_, err := e.bw.Write(e.buf)
	return err
}

// flush moves everything written so far to the underlying writer.
func (e *encoder) flush() error {
	if e.cw != nil {
		e.cw.Flush()
		if err := e.cw.Error(); err != nil {
			return err
		}
	}
	return e.bw.Flush()
}

// appendJSON appends r as one JSON object and a newline. It is hand-written
// because encoding/json costs an allocation per pointer field and per call.
func appendJSON(b []byte, r *Row) []byte {
	b = append(b, `{"row":`...)
	b = strconv.AppendInt(b, int64(r.Row), 10)
	b = append(b, `,"leadId":`...)
	b = appendJSONString(b, r.LeadID)
	b = append(b, `,"ref":`...)
	b = appendJSONString(b, r.Ref)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, string(r.Status))
	b = append(b, `,"id":`...)
	b = appendJSONString(b, r.ID)
	b = append(b, `,"resultCode":`...)
	b = appendJSONIntOrNull(b, r.ResultCode)
	b = append(b, `,"note":`...)
	b = appendJSONString(b, r.noteText())
	b = append(b, `,"bidValue":`...)
	b = appendJSONString(b, r.BidValue)
	b = append(b, `,"attempts":`...)
	b = appendJSONIntOrNull(b, r.Attempts)
	b = append(b, `,"error":`...)
	b = appendJSONString(b, r.ErrorText())
	return append(b, "}\n"...)
}

func appendJSONIntOrNull(b []byte, n int) []byte {
	if n == 0 {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(n), 10)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaping as encoding/json does
// (without HTML escaping); invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
