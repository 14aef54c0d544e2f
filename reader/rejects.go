package reader

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"golang.org/x/text/encoding"
)

// Rejects writes failed rows back out in the input's own format, so that a
// partner can fix them and feed the file back with the same flags and
// mapping:
//
//   - CSV: an "error" column first, then the original header and each row's
//     original text, with the same delimiter. The error comes first so that
//     rows with the wrong number of fields or trailing empty columns cannot
//     push it out of its column. The header is written before the first row;
//     with no rows nothing is written.
//   - JSONL: the original object with an "error" key added at its end. A line
//     that is not a JSON object becomes {"error": ..., "raw": "<the line>"}.
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
	format     Format
	comma      string
	header     string
	replaceCol bool // the input's first column is already "error"
	wrote      bool
}

// NewRejects returns a writer of r's failed rows to w. It reads r's format,
// delimiter, header and encoding, so r must have been created first.
func NewRejects(w io.Writer, r *Reader) *Rejects {
	if r.enc != nil {
		w = encoding.ReplaceUnsupported(r.enc.NewEncoder()).Writer(w)
	}
	x := &Rejects{bw: bufio.NewWriter(w), format: r.format, comma: string(r.comma), header: r.headerRaw}
	if x.format == FormatCSV {
		end := firstFieldEnd([]byte(x.header), r.comma)
		first := strings.TrimSuffix(x.header[:end], x.comma)
		first = strings.Trim(first, "\" ")
		x.replaceCol = normalize(first) == errorColumn
	}
	return x
}

// Write writes one failed row with the reason it failed. The reason must not
// quote an SSN or a date of birth; the row's own text is written as it came.
func (x *Rejects) Write(rec *Record, reason string) error {
	switch x.format {
	case FormatCSV:
		return x.writeCSV(rec, reason)
	case FormatJSONL:
		return x.writeJSONL(rec, reason)
	}
	return fmt.Errorf("write rejects: unknown format %v", x.format)
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
	_, _ = x.bw.WriteString(quoteCSV(first, x.comma))
	_, _ = x.bw.WriteString(x.comma)
	_, _ = x.bw.Write(raw)
	if err := x.bw.WriteByte('\n'); err != nil {
		return fmt.Errorf("write rejects: %w", err)
	}
	return nil
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
