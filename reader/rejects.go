package reader

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/text/encoding"

	"github.com/bulkload/bulkload/lead"
)

// Rejects writes failed rows back out, so that a partner can fix them and
// feed the file back with the same flags and mapping. Its format is the
// rejects file's own (NewRejects, from its name by RejectsFormat):
//
//   - CSV: an "error" column first, then the original header and each row's
//     original text, with the same delimiter. The error comes first so that
//     rows with the wrong number of fields or trailing empty columns cannot
//     push it out of its column. The header is written at once, so a
//     rejects file with no rows still has it (and says the run found none).
//     From a CSV input with another delimiter (a .tsv rejects file of a .csv
//     input), each row is re-encoded; from a JSONL input, the columns are
//     "error" and the LeadInput field names (keys that match no field are
//     not carried over).
//   - JSONL: the original object with an "error" key added at its end. A line
//     that is not a JSON object becomes {"error": ..., "raw": "<the line>"}.
//     From a CSV input, each row becomes an object of the header's column
//     names, in order, and "error"; a row that does not split into the
//     header's columns becomes {"error": ..., "raw": "<the line>"}.
//
// In a CSV rejects file, a cell that a spreadsheet would run as a formula
// (=, +, -, @, tab or CR first, not a plain number) is escaped with a
// leading single quote (lead.EscapeCell); the other cells keep their
// bytes. Reading a CSV file whose first column is "error" (a rejects file
// fed back) undoes it, so fixed and fed back, the file gives the original
// values.
//
// Text is written back in the input's encoding (Latin-1 and Windows-1252
// inputs give Latin-1 and Windows-1252 rejects; UTF-16 inputs give UTF-8).
// Reading a rejects file back with Reader, the "error" column or key is
// recognised and ignored (not reported as unknown), so a fixed rejects file
// feeds straight back in; when the input already had an "error" column first
// (a rejects file being fed back), it is replaced, not repeated.
//
// The rows hold the partner's own data, SSNs and dates of birth included:
// the caller should create the file with mode 0600. A Rejects is not safe for
// concurrent use; the caller owns it and calls Flush at the end.
type Rejects struct {
	bw         *bufio.Writer
	format     Format // of the rejects file
	inFormat   Format // of the input
	comma      string // of the rejects file, when CSV
	inComma    rune   // of the input, when CSV
	header     string
	columns    []string // the input header's column names (CSV to JSONL)
	replaceCol bool     // the input's first column is already "error"
	wrote      bool
	err        error // writing the header failed
}

// RejectsFormat returns the format and CSV delimiter a rejects file's name
// asks for: .csv is CSV with the input's delimiter (a comma when the input
// is not CSV or is tab-separated), .tsv is CSV with tabs, .jsonl and
// .ndjson are JSONL. Any other name is an error: the format would be a
// guess.
func RejectsFormat(path string) (Format, rune, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return FormatCSV, 0, nil
	case ".tsv":
		return FormatCSV, '\t', nil
	case ".jsonl", ".ndjson":
		return FormatJSONL, 0, nil
	}
	return FormatAuto, 0, fmt.Errorf("%s: the extension must be .csv, .tsv, .jsonl or .ndjson (it chooses the format)", path)
}

// NewRejects returns a writer of r's failed rows to w in format f
// (FormatAuto: r's) with CSV delimiter comma (0: r's when r is CSV and not
// tab-separated, else ','), as the rejects file's own extension asks
// (RejectsFormat). A CSV rejects file gets its header at once.
func NewRejects(w io.Writer, r *Reader, f Format, comma rune) *Rejects {
	if r.enc != nil {
		w = encoding.ReplaceUnsupported(r.enc.NewEncoder()).Writer(w)
	}
	if f == FormatAuto {
		f = r.format
	}
	if comma == 0 {
		comma = ','
		if r.format == FormatCSV && r.comma != '\t' {
			comma = r.comma
		}
	}
	x := &Rejects{bw: bufio.NewWriter(w), format: f, inFormat: r.format, comma: string(comma), inComma: r.comma, header: r.headerRaw}
	if r.format == FormatCSV {
		end := firstFieldEnd([]byte(x.header), r.comma)
		first := strings.TrimSuffix(x.header[:end], string(r.comma))
		first = strings.Trim(first, "\" ")
		x.replaceCol = normalize(first) == errorColumn
		if fields, err := splitCSV([]byte(x.header), r.comma); err == nil {
			x.columns = fields
		}
	}
	if x.format == FormatCSV {
		x.wrote = true
		x.err = x.writeCSVHeader()
	}
	return x
}

// writeCSVHeader writes the CSV rejects file's header: "error", then the
// input's columns.
func (x *Rejects) writeCSVHeader() error {
	switch {
	case x.inFormat == FormatJSONL:
		cols := []string{"error"}
		for f := lead.Field(0); f < lead.NumFields; f++ {
			cols = append(cols, f.String())
		}
		return x.writeFields(cols)
	case x.inComma != []rune(x.comma)[0]:
		cols := x.columns
		if x.replaceCol && len(cols) > 0 {
			cols = cols[1:]
		}
		return x.writeFields(append([]string{"error"}, x.unescape(cols)...))
	}
	return x.writeCSVRow([]byte(x.header), "error")
}

// splitCSV splits one CSV record's text into its fields.
func splitCSV(raw []byte, comma rune) ([]string, error) {
	cr := csv.NewReader(bytes.NewReader(raw))
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	return cr.Read()
}

// unescape undoes lead.EscapeCell on the cells of a rejects file being fed
// back (the input's first column is "error"), in place; other inputs' cells
// are data as they are.
func (x *Rejects) unescape(fields []string) []string {
	if x.replaceCol {
		for i, f := range fields {
			fields[i] = lead.UnescapeCell(f)
		}
	}
	return fields
}

// writeFields writes one CSV line of fields with the rejects file's
// delimiter, each escaped against formulas (lead.EscapeCell).
func (x *Rejects) writeFields(fields []string) error {
	for i, f := range fields {
		if i > 0 {
			_, _ = x.bw.WriteString(x.comma)
		}
		_, _ = x.bw.WriteString(quoteCSV(lead.EscapeCell(f), x.comma))
	}
	if err := x.bw.WriteByte('\n'); err != nil {
		return fmt.Errorf("write rejects: %w", err)
	}
	return nil
}

// Write writes one failed row with the reason it failed. The reason must not
// quote an SSN or a date of birth; the row's own text is written as it came.
func (x *Rejects) Write(rec *Record, reason string) error {
	if x.err != nil {
		return x.err
	}
	switch {
	case x.format == FormatCSV && x.inFormat == FormatJSONL:
		fields := []string{reason}
		for f := lead.Field(0); f < lead.NumFields; f++ {
			fields = append(fields, rec.Values[f])
		}
		if rec.Err != nil {
			// A line that is not a JSON object has no values: keep its
			// text in the first field column so nothing is lost.
			fields[1] = string(rec.Raw)
		}
		return x.writeFields(fields)
	case x.format == FormatCSV && x.inComma != []rune(x.comma)[0]:
		fields, err := splitCSV(rec.Raw, x.inComma)
		if err != nil {
			fields = []string{string(rec.Raw)}
		}
		if x.replaceCol && len(fields) > 0 {
			fields = fields[1:]
		}
		return x.writeFields(append([]string{reason}, x.unescape(fields)...))
	case x.format == FormatCSV:
		return x.writeCSV(rec, reason)
	case x.format == FormatJSONL && x.inFormat == FormatCSV:
		return x.writeCSVAsJSONL(rec, reason)
	case x.format == FormatJSONL:
		return x.writeJSONL(rec, reason)
	}
	return fmt.Errorf("write rejects: unknown format %v", x.format)
}

// writeCSVAsJSONL writes a CSV row as a JSON object of the header's column
// names, in order, plus "error".
func (x *Rejects) writeCSVAsJSONL(rec *Record, reason string) error {
	fields, err := splitCSV(rec.Raw, x.inComma)
	cols := x.columns
	if err != nil || len(fields) != len(cols) || len(cols) == 0 {
		return x.writeJSONL(rec, reason) // {"error": ..., "raw": the line}
	}
	fields = x.unescape(fields) // JSONL is not opened in a spreadsheet
	if x.replaceCol {
		cols = append([]string{cols[0]}, x.unescape(slices.Clone(cols[1:]))...)
	}
	_ = x.bw.WriteByte('{')
	for i, c := range cols {
		if i == 0 && x.replaceCol {
			continue
		}
		k, _ := json.Marshal(c)
		v, _ := json.Marshal(fields[i])
		_, _ = x.bw.Write(k)
		_ = x.bw.WriteByte(':')
		_, _ = x.bw.Write(v)
		_ = x.bw.WriteByte(',')
	}
	msg, _ := json.Marshal(reason)
	_, _ = x.bw.WriteString(`"error":`)
	_, _ = x.bw.Write(msg)
	if _, err := x.bw.WriteString("}\n"); err != nil {
		return fmt.Errorf("write rejects: %w", err)
	}
	return nil
}

func (x *Rejects) writeCSV(rec *Record, reason string) error {
	if !x.wrote {
		x.wrote = true
		if err := x.writeCSVRow([]byte(x.header), "error"); err != nil {
			return err
		}
	}
	return x.writeCSVRow(rec.Raw, reason)
}

func (x *Rejects) writeCSVRow(raw []byte, first string) error {
	if x.replaceCol {
		raw = raw[firstFieldEnd(raw, []rune(x.comma)[0]):]
	}
	// The row's own text is kept byte for byte, but for the cells that
	// must be escaped against formulas.
	if escaped, ok := x.escapeRow(raw); ok {
		raw = escaped
	}
	_, _ = x.bw.WriteString(quoteCSV(lead.EscapeCell(first), x.comma))
	_, _ = x.bw.WriteString(x.comma)
	_, _ = x.bw.Write(raw)
	if err := x.bw.WriteByte('\n'); err != nil {
		return fmt.Errorf("write rejects: %w", err)
	}
	return nil
}

// escapeRow returns the row text raw (in the rejects file's own
// delimiter) with each cell that lead.EscapeCell changes rewritten, after
// undoing the escape of a rejects file fed back; every other cell keeps its
// bytes as they came (a CR LF inside quotes included, which encoding/csv
// would read back as LF had the cell been written again). ok is false when
// no cell changes.
func (x *Rejects) escapeRow(raw []byte) (out []byte, ok bool) {
	if !bytes.ContainsAny(raw, "=+-@'\t\r") {
		return nil, false // no cell can begin with one
	}
	rest := raw
	for {
		cell, more := nextCell(rest, x.comma)
		v := x.unescapeOne(cellValue(cell))
		if e := lead.EscapeCell(v); e != cellValue(cell) {
			out = append(out, quoteCSV(e, x.comma)...)
			ok = true
		} else {
			out = append(out, cell...)
		}
		if !more {
			break
		}
		out = append(out, x.comma...)
		rest = rest[len(cell)+len(x.comma):]
	}
	return out, ok
}

// nextCell returns the raw text of the first cell of a CSV row's text, and
// whether a delimiter follows it (as csv.Reader splits: a quote opens a
// quoted cell only at its start, "" inside one is a quote).
func nextCell(raw []byte, delim string) (cell []byte, more bool) {
	inQuote, atStart := false, true
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inQuote:
			if c == '"' {
				if i+1 < len(raw) && raw[i+1] == '"' {
					i++
				} else {
					inQuote = false
				}
			}
		case bytes.HasPrefix(raw[i:], []byte(delim)):
			return raw[:i], true
		case c == '"' && atStart:
			inQuote = true
		}
		atStart = false
	}
	return raw, false
}

// cellValue is a cell's value from its raw text: a quoted cell without its
// quotes and with "" as ", any other as it is.
func cellValue(cell []byte) string {
	if len(cell) == 0 || cell[0] != '"' {
		return string(cell)
	}
	inner := cell[1:]
	if len(inner) > 0 && inner[len(inner)-1] == '"' {
		inner = inner[:len(inner)-1]
	}
	return strings.ReplaceAll(string(inner), `""`, `"`)
}

func (x *Rejects) unescapeOne(f string) string {
	if x.replaceCol {
		return lead.UnescapeCell(f)
	}
	return f
}

// quoteCSV quotes a field when csv.Reader would need it.
func quoteCSV(s, comma string) string {
	if s == "" || !(strings.Contains(s, comma) || strings.ContainsAny(s, "\"\r\n") || s[0] == ' ' || s[0] == '\t') {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func (x *Rejects) writeJSONL(rec *Record, reason string) error {
	msg, err := json.Marshal(reason)
	if err != nil {
		return fmt.Errorf("write rejects: %w", err)
	}
	obj := bytes.TrimSpace(rec.Raw)
	if len(obj) >= 2 && obj[0] == '{' && json.Valid(obj) {
		inner := bytes.TrimSpace(obj[1 : len(obj)-1])
		_, _ = x.bw.Write(obj[:len(obj)-1])
		if len(inner) > 0 {
			_ = x.bw.WriteByte(',')
		}
		_, _ = x.bw.WriteString(`"error":`)
		_, _ = x.bw.Write(msg)
		_ = x.bw.WriteByte('}')
	} else {
		raw, err := json.Marshal(string(rec.Raw))
		if err != nil {
			return fmt.Errorf("write rejects: %w", err)
		}
		_, _ = x.bw.WriteString(`{"error":`)
		_, _ = x.bw.Write(msg)
		_, _ = x.bw.WriteString(`,"raw":`)
		_, _ = x.bw.Write(raw)
		_ = x.bw.WriteByte('}')
	}
	if err := x.bw.WriteByte('\n'); err != nil {
		return fmt.Errorf("write rejects: %w", err)
	}
	return nil
}

// Flush writes any buffered rows to the underlying writer.
func (x *Rejects) Flush() error {
	if err := x.bw.Flush(); err != nil {
		return fmt.Errorf("write rejects: %w", err)
	}
	return nil
}
