package synth

import (
	"bufio"
	"io"
	"os"

	"github.com/bulkload/bulkload/lead"
)

// Columns returns the fields a generated file holds, in column order: every
// LeadInput field the caller sends (leadSourceId is never sent).
func Columns() []lead.Field {
	cols := make([]lead.Field, 0, lead.CoApplicant+1)
	for f := lead.FirstName; f <= lead.CoApplicant; f++ {
		cols = append(cols, f)
	}
	return cols
}

// CSVWriter writes rows as CSV with the interface's field names as header,
// quoting a cell only when it must (RFC 4180). It buffers: call Flush at
// the end. Not safe for concurrent use; the caller owns w.
type CSVWriter struct {
	w     *bufio.Writer
	cols  []lead.Field
	comma byte
	eol   string
	buf   []byte
}

// NewCSVWriter returns a CSVWriter with ',' as delimiter and "\n" line ends.
func NewCSVWriter(w io.Writer) *CSVWriter {
	return &CSVWriter{w: bufio.NewWriterSize(w, 256<<10), cols: Columns(), comma: ',', eol: "\n", buf: make([]byte, 0, 512)}
}

// WriteHeader writes the header line.
func (c *CSVWriter) WriteHeader() error {
	b := c.buf[:0]
	for n, f := range c.cols {
		if n > 0 {
			b = append(b, c.comma)
		}
		b = append(b, f.String()...)
	}
	b = append(b, c.eol...)
	c.buf = b
	_, err := c.w.Write(b)
	return err
}

// Write writes one row.
func (c *CSVWriter) Write(v *lead.Values) error {
	b := c.buf[:0]
	for n, f := range c.cols {
		if n > 0 {
			b = append(b, c.comma)
		}
		b = appendCSVField(b, v[f], c.comma)
	}
	b = append(b, c.eol...)
	c.buf = b
	_, err := c.w.Write(b)
	return err
}

// Flush writes any buffered data to the underlying writer.
func (c *CSVWriter) Flush() error { return c.w.Flush() }

func appendCSVField(b []byte, s string, comma byte) []byte {
	quote := len(s) > 0 && (s[0] == ' ' || s[len(s)-1] == ' ')
	for i := 0; i < len(s) && !quote; i++ {
		switch s[i] {
		case comma, '"', '\r', '\n':
			quote = true
		}
	}
	if !quote {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// JSONLWriter writes rows as JSON Lines, one object a line with the
// interface's field names as keys. Integer fields whose text is a plain
// integer are written as JSON numbers and "true"/"false" booleans as JSON
// booleans; anything else ("$25,000", "Yes") stays a string, as real
// exports have it. Empty values are omitted. It buffers: call Flush at the
// end. Not safe for concurrent use; the caller owns w.
type JSONLWriter struct {
	w    *bufio.Writer
	cols []lead.Field
	buf  []byte
}

// NewJSONLWriter returns a JSONLWriter.
func NewJSONLWriter(w io.Writer) *JSONLWriter {
	return &JSONLWriter{w: bufio.NewWriterSize(w, 256<<10), cols: Columns(), buf: make([]byte, 0, 640)}
}

// Write writes one row.
func (j *JSONLWriter) Write(v *lead.Values) error {
	b := append(j.buf[:0], '{')
	first := true
	for _, f := range j.cols {
		s := v[f]
		if s == "" {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, f.String())
		b = append(b, ':')
		switch {
		case isIntField(f) && isPlainInt(s):
			b = append(b, s...)
		case isBoolField(f) && (s == "true" || s == "false"):
			b = append(b, s...)
		default:
			b = appendJSONString(b, s)
		}
	}
	b = append(b, '}', '\n')
	j.buf = b
	_, err := j.w.Write(b)
	return err
}

// Flush writes any buffered data to the underlying writer.
func (j *JSONLWriter) Flush() error { return j.w.Flush() }

func isIntField(f lead.Field) bool {
	switch f {
	case lead.LoanAmount, lead.GrossAnnualIncome, lead.MonthlyIncome,
		lead.ResidenceTypeID, lead.IncomeSourceID, lead.LoanPurposeID:
		return true
	}
	return false
}

func isBoolField(f lead.Field) bool { return f == lead.TermsConsent || f == lead.CoApplicant }

// isPlainInt reports whether s is a JSON integer literal without sign.
func isPlainInt(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c) // UTF-8 passes through unchanged
		}
	}
	return append(b, '"')
}

// WriteCSVFile writes a CSV file at path: the header, then rows 0 to n-1
// of a Generator made with opts.
func WriteCSVFile(path string, opts Options, n int) error {
	g, err := New(opts)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := NewCSVWriter(f)
	err = w.WriteHeader()
	var v lead.Values
	for i := 0; i < n && err == nil; i++ {
		g.Row(i, &v)
		err = w.Write(&v)
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
