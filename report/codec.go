package report

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/bulkload/bulkload/internal/jsonstr"
	"github.com/bulkload/bulkload/lead"
)

// The results file's two codecs, CSV and JSONL: each writes and reads a Row
// column by column, over the schema (schema.go).

// maxRow bounds row numbers so that State and Compact can keep them in an
// int32.
const maxRow = math.MaxInt32

// Format is the results file's encoding.
type Format int

// The two formats of the results file.
const (
	// FormatCSV is a header line and one CSV record a row (RFC 4180 quoting,
	// LF line ends). As encoding/csv reads it, a CR LF inside a quoted note
	// or error comes back as LF. The text columns (kindText) are escaped
	// against spreadsheet formulas with lead.EscapeCell, and unescaped when
	// read back. It is read by position: its header must be Header.
	FormatCSV Format = iota
	// FormatJSONL is one JSON object a line with every column's key, always
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

func checkRow(r *lead.Row) error {
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
func quoteStatus(s lead.Status) string {
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

// encoder writes rows to a buffered writer in one format, column by column
// (the columns' order and kinds: schema.go). Its owner flushes.
type encoder struct {
	format Format
	bw     *bufio.Writer
	cw     *csv.Writer
	rec    []string
	keys   [numColumns]string // JSONL: what goes before each column's value
	buf    []byte
}

func newEncoder(w io.Writer, f Format) *encoder {
	e := &encoder{format: f, bw: bufio.NewWriterSize(w, 64<<10)}
	if f == FormatCSV {
		e.cw = csv.NewWriter(e.bw)
		e.rec = make([]string, numColumns)
	}
	for c := range numColumns {
		e.keys[c] = `,"` + c.name() + `":`
	}
	e.keys[0] = "{" + e.keys[0][1:]
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
func (e *encoder) write(r *lead.Row) error {
	if err := checkRow(r); err != nil {
		return err
	}
	if e.format == FormatCSV {
		for c := range numColumns {
			text, n := cell(r, c)
			switch c.kind() {
			case kindNumber:
				e.rec[c] = strconv.Itoa(n)
			case kindCount:
				e.rec[c] = itoaEmpty(n)
			case kindWord:
				e.rec[c] = text
			default:
				// The partner's and the service's text is escaped
				// against formula injection; decodeCSV undoes it.
				e.rec[c] = lead.EscapeCell(text)
			}
		}
		return e.cw.Write(e.rec)
	}
	e.buf = e.appendJSON(e.buf[:0], r)
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

// appendJSON appends r as one JSON object, every column's key present, and
// a newline. It is hand-written because encoding/json costs an allocation
// per pointer field and per call.
func (e *encoder) appendJSON(b []byte, r *lead.Row) []byte {
	for c := range numColumns {
		b = append(b, e.keys[c]...)
		text, n := cell(r, c)
		switch c.kind() {
		case kindNumber:
			b = strconv.AppendInt(b, int64(n), 10)
		case kindCount:
			b = appendJSONIntOrNull(b, n)
		default:
			b = jsonstr.Append(b, text, false)
		}
	}
	return append(b, "}\n"...)
}

func appendJSONIntOrNull(b []byte, n int) []byte {
	if n == 0 {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(n), 10)
}

func atoiEmpty(col, s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s is not an integer", col)
	}
	return n, nil
}

// decodeCSV returns the row of a results CSV record, whose fields are the
// columns in order (the header was checked to be Header).
func decodeCSV(rec []string) (lead.Row, error) {
	if len(rec) != int(numColumns) {
		return lead.Row{}, fmt.Errorf("%d fields, want %d", len(rec), numColumns)
	}
	var r lead.Row
	for c := range numColumns {
		cell := rec[c]
		switch c.kind() {
		case kindNumber, kindCount:
			if cell == "" && c.kind() == kindNumber {
				return lead.Row{}, fmt.Errorf("%s is empty", c.name())
			}
			n, err := atoiEmpty(c.name(), cell)
			if err != nil {
				return lead.Row{}, err
			}
			setCell(&r, c, "", n)
		case kindWord:
			setCell(&r, c, cell, 0)
		default:
			setCell(&r, c, lead.UnescapeCell(cell), 0) // encoder.write escaped it
		}
	}
	return r, checkRow(&r)
}

// jsonLine is a results JSONL line as encoding/json decodes it: one field
// per column, in the columns' order, named by its tag, a number column's
// field a pointer (nil: missing or null). It repeats the schema for speed:
// decoding by the schema alone, key by key through json.Decoder.Token, cost
// three to four times as much CPU per line (BenchmarkLoadState), and resume
// reads every line. TestJSONLineIsTheSchema holds it to the columns, and
// decodeJSON reads its fields by the columns' positions.
type jsonLine struct {
	Row        *int   `json:"row"`
	LeadID     string `json:"leadId"`
	Ref        string `json:"ref"`
	Status     string `json:"status"`
	ID         string `json:"id"`
	ResultCode *int   `json:"resultCode"`
	Note       string `json:"note"`
	BidValue   string `json:"bidValue"`
	Attempts   *int   `json:"attempts"`
	Error      string `json:"error"`
}

// decodeJSON returns the row of a results JSONL line: one JSON object with
// the columns' names as keys (matched as encoding/json matches: in any
// case; other keys are ignored). A missing or null number is 0, but the
// row number must be there.
func decodeJSON(line []byte) (lead.Row, error) {
	var j jsonLine
	if err := json.Unmarshal(line, &j); err != nil {
		return lead.Row{}, jsonErr(err)
	}
	if j.Row == nil {
		return lead.Row{}, errors.New("row is missing")
	}
	var r lead.Row
	v := reflect.ValueOf(&j).Elem()
	for c := range numColumns {
		switch f := v.Field(int(c)); f.Kind() {
		case reflect.Pointer:
			if !f.IsNil() {
				setCell(&r, c, "", int(f.Elem().Int()))
			}
		default:
			setCell(&r, c, f.String(), 0)
		}
	}
	return r, checkRow(&r)
}

// jsonErr keeps a JSON error's kind and offset but not the text around it.
func jsonErr(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%s: want %s", te.Field, te.Type)
	}
	return errors.New("invalid JSON")
}
