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

	"github.com/gocarina/gocsv"

	"github.com/bulkload/bulkload/lead"
)

// csvRow is what gocsv fills for one CSV record: one string per LeadInput
// field, tagged with the field's wire name. Headers are renamed to these
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

func (c *csvRow) values() lead.Values {
	return lead.Values{
		lead.FirstName:                c.FirstName,
		lead.LastName:                 c.LastName,
		lead.DateOfBirth:              c.DateOfBirth,
		lead.Email:                    c.Email,
		lead.HomePhone:                c.HomePhone,
		lead.CellPhone:                c.CellPhone,
		lead.Address1:                 c.Address1,
		lead.Address2:                 c.Address2,
		lead.City:                     c.City,
		lead.State:                    c.State,
		lead.ZipCode:                  c.ZipCode,
		lead.LoanAmount:               c.LoanAmount,
		lead.LeadID:                   c.LeadID,
		lead.Ref:                      c.Ref,
		lead.TrustedformCertificateID: c.TrustedformCertificateID,
		lead.SocialSecurityNumber:     c.SocialSecurityNumber,
		lead.GrossAnnualIncome:        c.GrossAnnualIncome,
		lead.MonthlyIncome:            c.MonthlyIncome,
		lead.ResidenceTypeID:          c.ResidenceTypeID,
		lead.IncomeSourceID:           c.IncomeSourceID,
		lead.LoanPurposeID:            c.LoanPurposeID,
		lead.TermsConsent:             c.TermsConsent,
		lead.CoApplicant:              c.CoApplicant,
		lead.LeadSourceID:             c.LeadSourceID,
	}
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
	failed    error
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
	raw, skipped := trimRaw(t.span(0, end))
	s.line += skipped + bytes.Count(raw, []byte{'\n'}) + 1
	t.recStart = end
	r.comma = comma
	r.headerRaw = string(raw)

	headers := um.Headers
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
		return nil, fmt.Errorf("read %s: the first line names no known column (%s, ...); does the file lack a header line? Add one, or map the columns with --mapping",
			r.name, exampleFields)
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
// back with its fields (valid until the next read) and no Values, for a
// Decoder to fill.
func (s *csvSource) nextRaw() (Record, []string, error) { return s.read(true) }

func (s *csvSource) read(undecoded bool) (Record, []string, error) {
	if s.failed != nil {
		return Record{}, nil, s.failed
	}
	for {
		before := s.cr.InputOffset()
		s.tee.recStart = before
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
		raw, skipped := trimRaw(s.tee.span(before, after))
		start := s.line + skipped
		s.line = start + bytes.Count(raw, []byte{'\n'}) + 1

		var pe *csv.ParseError
		switch {
		case err == nil:
		case errors.As(err, &pe) && pe.Line > pe.StartLine:
			// A quote opened on the record's first line was not closed
			// there, so csv.Reader read the lines after it into the
			// record: read them again as rows of their own.
			s.row++
			startLine := pe.StartLine + s.lineBase
			nl := bytes.IndexByte(raw, '\n')
			if nl < 0 {
				return Record{}, nil, fmt.Errorf("read %s row %d: a record of several lines has no line end", s.r.name, s.row)
			}
			// raw is a subslice of the span from before: its offset in the
			// span is the difference of their capacities.
			rawOff := before + int64(cap(s.tee.span(before, after))-cap(raw))
			rec := Record{Row: s.row, Line: startLine, Raw: trimLineEnd(raw[:nl+1]),
				Err: fmt.Errorf("row %d (line %d): a quoted field is not closed on the row's first line; the lines after it are read as rows of their own: close the quote, or double the quotes inside it", s.row, startLine)}
			if err := s.restart(rawOff+int64(nl)+1, startLine+1); err != nil {
				s.failed = err
			}
			return rec, nil, nil
		case errors.As(err, &pe):
			s.row++
			line := pe.StartLine + s.lineBase
			return Record{Row: s.row, Line: line, Raw: raw,
				Err: fmt.Errorf("row %d (line %d): %w", s.row, line, parseProblem(pe, s.lineBase))}, nil, nil
		case errors.Is(err, errRecordTooLong):
			s.failed = fmt.Errorf("read %s row %d (line %d): record longer than %d bytes; an unterminated quote is the likely cause: close the quote or quote the field's own quotes as \"\"",
				s.r.name, s.row+1, start, maxRecord)
			return Record{}, nil, s.failed
		default:
			s.failed = fmt.Errorf("read %s after row %d: %w", s.r.name, s.row, err)
			return Record{}, nil, s.failed
		}

		scan := scanFields(raw, s.comma, s.columns)
		if scan.blank {
			continue
		}
		s.row++
		line, _ := s.cr.FieldPos(0)
		line += s.lineBase
		rec := Record{Row: s.row, Line: line, Raw: raw}
		switch {
		case scan.fields < s.columns:
			rec.Err = fmt.Errorf("row %d (line %d): %d fields, header has %d", s.row, line, scan.fields, s.columns)
		case scan.extraSet:
			rec.Err = fmt.Errorf("row %d (line %d): %d fields, header has %d, and the extra fields are not empty", s.row, line, scan.fields, s.columns)
		case s.checkUTF8 && !utf8.Valid(raw):
			rec.Err = fmt.Errorf("row %d (line %d): text is not valid UTF-8; if the file comes from a spreadsheet, pass --encoding windows-1252", s.row, line)
		case undecoded:
			return rec, fields, nil // a Decoder fills Values and checks them
		default:
			row, ok := out.(*csvRow)
			if !ok {
				return Record{}, nil, fmt.Errorf("read %s row %d: unexpected %T from gocsv", s.r.name, s.row, out)
			}
			rec.Values = row.values()
			checkValues(&rec)
		}
		return rec, nil, nil
	}
}

// checkValues flags a decoded record none of whose known columns has a
// value.
func checkValues(rec *Record) {
	if rec.Values == (lead.Values{}) {
		rec.Err = fmt.Errorf("row %d (line %d): no known column has a value", rec.Row, rec.Line)
	}
}

// restart reads on from input offset off, the start of input line line,
// with a new csv.Reader and gocsv Unmarshaller: the bytes from off that the
// tee holds, then the rest of the input. The header line is put in front
// again for gocsv, which reads a header first.
func (s *csvSource) restart(off int64, line int) error {
	pulled := s.tee.span(off, s.tee.base+int64(len(s.tee.buf)))
	if pulled == nil {
		return fmt.Errorf("read %s line %d: cannot read on after a quote that is not closed", s.r.name, line)
	}
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

// parseProblem rewords a csv.ParseError without its position (the caller
// gives row and line) and without cell contents.
func parseProblem(pe *csv.ParseError, lineBase int) error {
	pe.Line += lineBase
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		return fmt.Errorf("a quote inside an unquoted field at line %d column %d; quote the field and double its quotes: %w", pe.Line, pe.Column, pe.Err)
	case errors.Is(pe.Err, csv.ErrQuote):
		return fmt.Errorf("a quoted field is not closed properly at line %d column %d; a quote inside a quoted field must be doubled: %w", pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("line %d column %d: %w", pe.Line, pe.Column, pe.Err)
}
