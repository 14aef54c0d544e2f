package reader

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/gocarina/gocsv"

	"github.com/bulkload/bulkload/lead"
)

// csvRow is what gocsv fills for one CSV record: one string per LeadInput
// field, in Field order, tagged with the field's wire name. Headers are renamed to these
// names before reading (RenormalizeHeaders), so the loose matching is ours,
// not gocsv's, and no gocsv global setting is touched.
type csvRow struct {
	FirstName                string `csv:"firstName"`
	LastName                 string `csv:"lastName"`
	DateOfBirth              string `csv:"dateOfBirth"`
	Email                    string `csv:"email"`
	HomePhone                string `csv:"homePhone"`
	CellPhone                string `csv:"cellPhone"`
	Address1                 string `csv:"address1"`
	Address2                 string `csv:"address2"`
	City                     string `csv:"city"`
	State                    string `csv:"state"`
	ZipCode                  string `csv:"zipCode"`
	LoanAmount               string `csv:"loanAmount"`
	LeadID                   string `csv:"leadId"`
	Ref                      string `csv:"ref"`
	TrustedformCertificateID string `csv:"trustedformCertificateID"`
	SocialSecurityNumber     string `csv:"socialSecurityNumber"`
	GrossAnnualIncome        string `csv:"grossAnnualIncome"`
	MonthlyIncome            string `csv:"monthlyIncome"`
	ResidenceTypeID          string `csv:"residenceTypeId"`
	IncomeSourceID           string `csv:"incomeSourceId"`
	LoanPurposeID            string `csv:"loanPurposeId"`
	TermsConsent             string `csv:"termsConsent"`
	CoApplicant              string `csv:"coApplicant"`
	LeadSourceID             string `csv:"leadSourceId"`
}

// values returns the row's cells as lead.Values. csvRow is NumFields
// strings in Field order, laid out exactly as the array lead.Values is
// (TestCSVRowFields checks the order, the tags and the size), so the row is
// read as the array instead of its fields being spelled out once more.
func (c *csvRow) values() lead.Values {
	return *(*lead.Values)(unsafe.Pointer(c))
}

// csvSource reads CSV records through gocsv's synchronous Unmarshaller on a
// csv.Reader configured here, cutting each record's original text out of a
// tee below the csv.Reader.
type csvSource struct {
	r         *Reader
	br        *bufio.Reader // below cr, above tee; reused by restart
	cr        *csv.Reader
	um        *gocsv.Unmarshaller
	tee       *tee
	comma     rune
	columns   int  // header columns, trailing empty names dropped
	checkUTF8 bool // the input is meant to be UTF-8: flag rows that are not
	row       int
	line      int // line where the next unread byte is (1-based)
	lineBase  int // add to cr's line numbers: lines dropped before cr's input by restarts
	renamed   []string
	fieldPos  []int // per column: its field's position in csvRow, -1 for none (ReadBatch)
	// escaped marks a rejects file fed back (its first column is
	// "error"): its cells were escaped against formulas by
	// lead.EscapeCell, and are unescaped as they are read.
	escaped bool
	failed  error
}

// newCSVReader returns the csv.Reader every read of this package uses.
func newCSVReader(br *bufio.Reader, comma rune) *csv.Reader {
	cr := csv.NewReader(br) // reuses br: it is a *bufio.Reader of sufficient size
	cr.Comma = comma
	cr.FieldsPerRecord = -1 // counts are checked here, against the header
	cr.ReuseRecord = true   // gocsv copies the strings into csvRow; the slice is not kept
	return cr
}

func newCSVSource(r *Reader, in io.Reader, comma rune, res *resolver, checkUTF8 bool) (*csvSource, error) {
	t := &tee{src: fixCRLines(in)}
	br := bufio.NewReaderSize(t, bufSize)
	if comma == 0 {
		comma = sniffDelimiter(br)
	}
	cr := newCSVReader(br, comma)
	s := &csvSource{r: r, br: br, cr: cr, tee: t, comma: comma, checkUTF8: checkUTF8, line: 1}

	um, err := gocsv.NewUnmarshaller(cr, &csvRow{})
	if err != nil {
		switch {
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("read %s: the file is empty; a CSV input needs a header line", r.name)
		case errors.Is(err, errRecordTooLong):
			return nil, fmt.Errorf("read %s: header line longer than %d bytes; an unterminated quote is the likely cause", r.name, maxRecord)
		}
		return nil, fmt.Errorf("read %s header line: %w", r.name, err)
	}
	s.um = um
	end := cr.InputOffset()
	raw, skipped := trimRaw(t.span(t.recStart, end))
	s.line += t.blankLines + skipped + bytes.Count(raw, []byte{'\n'}) + 1
	t.recStart = end
	r.comma = comma
	r.headerRaw = string(raw)

	headers := um.Headers
	s.escaped = len(headers) > 0 && normalize(headers[0]) == errorColumn
	s.columns = len(headers)
	for s.columns > 0 && headers[s.columns-1] == "" {
		s.columns--
	}
	if s.columns == 0 {
		return nil, fmt.Errorf("read %s: the header line (line %d) has no column names; the first non-blank line must name the columns", r.name, 1+skipped)
	}
	renamed := make([]string, len(headers))
	var taken [lead.NumFields]int // 1-based column that took the field
	var unknown []string          // added to r.unknown only once the header is known to be one
	known := 0
	for i, h := range headers[:s.columns] {
		if s.escaped {
			h = lead.UnescapeCell(h)
		}
		res := res.resolve(h)
		switch res.kind {
		case colField:
			known++
			if prev := taken[res.field]; prev != 0 {
				unknown = append(unknown, duplicateName(shortName(h), res.field))
				continue
			}
			taken[res.field] = i + 1
			renamed[i] = res.field.String()
			r.setHeader(res.field, shortName(strings.TrimSpace(h)))
		case colUnknown:
			switch {
			case h == "":
				unknown = append(unknown, fmt.Sprintf("(column %d has no header)", i+1))
			case looksLikeData(h):
				unknown = append(unknown, fmt.Sprintf("(column %d: name withheld, it looks like data)", i+1))
			default:
				unknown = append(unknown, shortName(h))
			}
		}
	}
	if known == 0 {
		// Most likely the file has no header line and this is a lead's
		// data: quote none of it, not even as an unknown column name.
		return nil, &HeaderError{Name: r.name, Examples: exampleFields}
	}
	for _, u := range unknown {
		r.unknown.add(u)
	}
	s.renamed = renamed
	s.fieldPos = csvRowPositions(renamed)
	if err := um.RenormalizeHeaders(func([]string) []string { return renamed }); err != nil {
		return nil, fmt.Errorf("read %s header line: %w", r.name, err)
	}
	// gocsv has global settings (a header normaliser, the tag name) that
	// would silently break the match of our canonical names; this package
	// sets none of them, and refuses to run if someone else did.
	for _, h := range um.MismatchedHeaders {
		if h != "" {
			return nil, fmt.Errorf("read %s: gocsv does not match column %q to csvRow: a gocsv global setting was changed", r.name, h)
		}
	}
	return s, nil
}

func (s *csvSource) next() (Record, error) {
	rec, _, err := s.read(false)
	return rec, err
}

// nextRaw is next without the gocsv decoding: a well-formed record comes
// back with its fields (valid until the next read) and no Values, for
// ReadBatch to lay out and Batch.Decode to check.
func (s *csvSource) nextRaw() (Record, []string, error) { return s.read(true) }

func (s *csvSource) read(undecoded bool) (Record, []string, error) {
	if s.failed != nil {
		return Record{}, nil, s.failed
	}
	for {
		before := s.cr.InputOffset()
		s.tee.recStart, s.tee.blankLines = before, 0
		var (
			out    any
			fields []string
			err    error
		)
		if undecoded {
			fields, err = s.cr.Read() // what s.um.Read reads before it decodes
		} else {
			out, err = s.um.Read()
		}
		after := s.cr.InputOffset()
		if errors.Is(err, io.EOF) {
			return Record{}, nil, io.EOF
		}
		if errors.Is(err, errRecordTooLong) {
			s.row++
			return s.tooLong(), nil, nil
		}
		// A long run of empty lines before the record moved the tee's
		// recStart past them (skipBlank).
		before = max(before, s.tee.recStart)
		raw, skipped := trimRaw(s.tee.span(before, after))
		start := s.line + s.tee.blankLines + skipped
		s.line = start + bytes.Count(raw, []byte{'\n'}) + 1

		if err != nil {
			rec, err := s.malformed(err, raw, before, after)
			return rec, nil, err
		}

		var scan fieldScan
		if undecoded {
			scan = scanRecord(fields, s.columns) // the same, from the fields csv.Reader split
		} else {
			scan = scanFields(raw, s.comma, s.columns)
		}
		if scan.blank {
			continue
		}
		s.row++
		line, _ := s.cr.FieldPos(0)
		line += s.lineBase
		rec := Record{Row: s.row, Line: line, Raw: raw}
		switch {
		case scan.fields < s.columns:
			rec.Err = rowError(s.row, line, fmt.Sprintf("the row has %s but the header has %d columns; a field is missing, or a value that holds the delimiter is not in quotes", fieldsText(scan.fields), s.columns))
		case scan.extraSet:
			rec.Err = rowError(s.row, line, fmt.Sprintf("the row has %s but the header has %d columns, and the extra fields are not empty; put a value that holds the delimiter in quotes", fieldsText(scan.fields), s.columns))
		case s.checkUTF8 && !utf8.Valid(raw):
			rec.Err = rowError(s.row, line, s.r.notUTF8)
		case undecoded:
			return rec, fields, nil // ReadBatch lays them out, Batch.Decode checks them
		default:
			row, ok := out.(*csvRow)
			if !ok {
				return Record{}, nil, fmt.Errorf("read %s row %d: unexpected %T from gocsv", s.r.name, s.row, out)
			}
			rec.Values = row.values()
			if s.escaped {
				unescapeValues(&rec.Values)
			}
			checkValues(&rec)
		}
		return rec, nil, nil
	}
}

// malformed is read's answer to an error of csv.Reader on the record whose
// text the tee holds from before to after (raw, trimmed): a row that is not
// well-formed CSV, or a read error that ends the input. Apart from read so
// that the ParseError it unwraps costs no allocation per good row.
func (s *csvSource) malformed(err error, raw []byte, before, after int64) (Record, error) {
	var pe *csv.ParseError
	switch {
	case errors.As(err, &pe) && pe.Line > pe.StartLine:
		// A quote opened on the record's first line was not closed
		// there, so csv.Reader read the lines after it into the
		// record: read them again as rows of their own.
		s.row++
		startLine := pe.StartLine + s.lineBase
		nl := bytes.IndexByte(raw, '\n')
		if nl < 0 {
			return Record{}, fmt.Errorf("read %s row %d: a record of several lines has no line end", s.r.name, s.row)
		}
		// raw is a subslice of the span from before: its offset in the
		// span is the difference of their capacities.
		rawOff := before + int64(cap(s.tee.span(before, after))-cap(raw))
		rec := Record{Row: s.row, Line: startLine, Raw: trimLineEnd(raw[:nl+1]),
			Err: rowError(s.row, startLine, ruleQuoteNotClosed)}
		if err := s.restartAt(rawOff+int64(nl)+1, startLine+1); err != nil {
			s.failed = err
		}
		return rec, nil
	case errors.As(err, &pe):
		s.row++
		line := pe.StartLine + s.lineBase
		rec := Record{Row: s.row, Line: line, Raw: raw, Err: rowError(s.row, line, parseProblem(pe))}
		rec.Err.Line, rec.Err.Column = pe.Line+s.lineBase, pe.Column
		return rec, nil
	default:
		s.failed = fmt.Errorf("read %s after row %d: %w", s.r.name, s.row, err)
		return Record{}, s.failed
	}
}

// unescapeValues undoes lead.EscapeCell on each value of a rejects file.
func unescapeValues(v *lead.Values) {
	for i := range v {
		v[i] = lead.UnescapeCell(v[i])
	}
}

// checkValues flags a decoded record none of whose known columns has a
// value.
func checkValues(rec *Record) {
	if rec.Values == (lead.Values{}) {
		rec.Err = rowError(rec.Row, rec.Line, "no known column has a value")
	}
}

// tooLong is the record csv.Reader gave up on because it ran past
// maxRecord: a malformed row, its first line only (Raw is empty: the line
// may be megabytes). Reading goes on from the line after its first line, as
// after a quote that is not closed: a cell of megabytes on one line costs
// one row, and a quote left open costs one row, not the rest of the file.
func (s *csvSource) tooLong() Record {
	from := s.tee.recStart
	held := s.tee.span(from, s.tee.base+int64(len(s.tee.buf)))
	// The empty lines csv.Reader skipped before the record are no row.
	blank := s.tee.blankLines
	for {
		if len(held) > 0 && held[0] == '\n' {
			held, from = held[1:], from+1
		} else if len(held) > 1 && held[0] == '\r' && held[1] == '\n' {
			held, from = held[2:], from+2
		} else {
			break
		}
		blank++
	}
	start := s.line + blank
	rec := Record{Row: s.row, Line: start}
	var err error
	if nl := bytes.IndexByte(held, '\n'); nl >= 0 {
		// The record's first line ended, but a quote opened on it ran
		// on past the limit.
		rec.Err = rowError(s.row, start, fmt.Sprintf("record longer than %d bytes: a quoted field is not closed on the row's first line, or holds more than that; the lines after it are read as rows of their own", maxRecord))
		err = s.restartAt(from+int64(nl)+1, start+1)
	} else {
		rec.Err = rowError(s.row, start, fmt.Sprintf("record longer than %d bytes; the row is skipped", maxRecord))
		var rest []byte
		if rest, err = s.skipLine(); err == nil {
			err = s.restart(rest, start+1)
		}
	}
	if err != nil {
		s.failed = err
	}
	return rec
}

// skipLine reads the input below the tee to the end of the current line
// without keeping it, and returns what it read after the line end.
func (s *csvSource) skipLine() ([]byte, error) {
	buf := make([]byte, bufSize)
	for {
		n, err := s.tee.src.Read(buf)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return buf[i+1 : n], nil
		}
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s after row %d: %w", s.r.name, s.row, err)
		}
	}
}

// restartAt is restart from input offset off, which the tee still holds.
func (s *csvSource) restartAt(off int64, line int) error {
	pulled := s.tee.span(off, s.tee.base+int64(len(s.tee.buf)))
	if pulled == nil {
		return fmt.Errorf("read %s line %d: cannot read on after a quote that is not closed", s.r.name, line)
	}
	return s.restart(pulled, line)
}

// restart reads on from the start of input line line, with a new csv.Reader
// and gocsv Unmarshaller: pulled, the bytes of the input from there that
// were already read, then the rest of the input. The header line is put in
// front again for gocsv, which reads a header first.
func (s *csvSource) restart(pulled []byte, line int) error {
	// pulled stays valid: nothing writes to the old tee's buffer again.
	header := s.r.headerRaw + "\n"
	t := &tee{src: io.MultiReader(strings.NewReader(header), bytes.NewReader(pulled), s.tee.src),
		buf: make([]byte, 0, len(header)+len(pulled))}
	s.br.Reset(t)
	cr := newCSVReader(s.br, s.comma)
	um, err := gocsv.NewUnmarshaller(cr, &csvRow{})
	if err != nil {
		return fmt.Errorf("read %s line %d: reading on after a quote that is not closed: %w", s.r.name, line, err)
	}
	renamed := s.renamed
	if err := um.RenormalizeHeaders(func([]string) []string { return renamed }); err != nil {
		return fmt.Errorf("read %s line %d: reading on after a quote that is not closed: %w", s.r.name, line, err)
	}
	headerLines := strings.Count(header, "\n")
	t.recStart = cr.InputOffset()
	s.tee, s.cr, s.um = t, cr, um
	s.lineBase = line - 1 - headerLines
	s.line = line
	return nil
}

// HeaderError says that a CSV file's first line names no known column:
// most likely the file has no header line and the line is a lead's data,
// so the error quotes none of it. The caller says how to map the columns.
type HeaderError struct {
	Name     string // the input's name
	Examples string // some known column names, for the message
}

func (e *HeaderError) Error() string {
	return fmt.Sprintf("read %s: the first line names no known column (%s, ...); does the file lack a header line?", e.Name, e.Examples)
}

// The rules of malformed records that more than one place gives.
const (
	ruleQuoteNotClosed = "a quoted field is not closed on the row's first line; the lines after it are read as rows of their own: close the quote, or double the quotes inside it"
	ruleNotUTF8        = "text is not valid UTF-8 (a spreadsheet's export may be Windows-1252)"
	// ruleNotUTF8Spreadsheet opens the rule when Options.EncodingHint names
	// the setting to pass.
	ruleNotUTF8Spreadsheet = "text is not valid UTF-8; if the file comes from a spreadsheet"
)

// fieldsText is "1 field" or "n fields".
func fieldsText(n int) string {
	if n == 1 {
		return "1 field"
	}
	return fmt.Sprintf("%d fields", n)
}

// rowError is a malformed record's error.
func rowError(row, line int, rule string) *lead.RowError {
	return &lead.RowError{Row: row, StartLine: line, Field: lead.NoField, Rule: rule}
}

// parseProblem says in words what a csv.ParseError found, without its
// position (the RowError carries it) and without cell contents.
func parseProblem(pe *csv.ParseError) string {
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		return `a quote (") in a field that does not start with one; put the whole field in quotes and double each quote inside it ("")`
	case errors.Is(pe.Err, csv.ErrQuote):
		return `text after the closing quote of a quoted field; a quote inside a quoted field must be doubled ("")`
	}
	return "not valid CSV: " + pe.Err.Error()
}
