package lead

import "strconv"

// NoField is the Field of a RowError about the record as a whole (a
// malformed record) rather than one of its fields.
const NoField Field = -1

// RowError is one reason an input row is invalid: a malformed record, found
// by the reader, or a field that broke a rule, found by the mapper. Like
// encoding/csv.ParseError it is a value with the row's position, so it is
// rendered once, where it is written out (Error, RowErrors.Error), and the
// summary counts it by Reason, which has no positions.
//
// Rule is fixed text and never the value that broke it; Value holds the
// value only where it may be shown (never for a Sensitive field), so a
// RowError is safe to log and to write to the results file, even for an SSN
// or a date of birth.
type RowError struct {
	// Row is the 1-based data row; 0 when not known.
	Row int
	// StartLine is the input line where the record starts; 0 when not known.
	StartLine int
	// Line and Column locate a syntax error inside the record (1-based;
	// Column counts bytes, as encoding/csv does); 0 when there is none.
	Line, Column int
	// Field is the field that broke Rule, or NoField when the record as a
	// whole is malformed.
	Field Field
	// Rule says what is wrong and what to do, e.g. "must be 5 digits"; it
	// never contains the value.
	Rule string
	// Detail, when set, is Rule with what is particular to this row, e.g.
	// "duplicate of row 3" for the rule "duplicate of an earlier row": the
	// text shows Detail, and Reason counts Rule, so that the same problem
	// on many rows is one reason. It never contains the value either.
	Detail string
	// Header is the partner's name for Field (the CSV column or JSONL key),
	// so that a person finds the column in their own file; "" when not
	// known.
	Header string
	// Value is the value that broke Rule, as the file has it (trimmed),
	// shown so that a person sees what is wrong. The mapper sets it only
	// for a field that is not Sensitive and a value that does not look
	// like an SSN or a date: it is "" for everything else.
	Value string
}

// Error renders the error as the results file shows it. A field's error
// names the partner's column and the field, and the value when it may be
// shown: `column "zip" (zipCode) is "8002": must be 5 digits ...` (without
// a Header, `zipCode: ...`; a Header that is the field's own name is given
// once). A malformed record's error gives the row, line and column where to
// look: "malformed record: row 22 (line 27, column 5): ...".
func (e RowError) Error() string {
	return string(e.appendText(nil))
}

func (e RowError) appendText(b []byte) []byte {
	if e.Field != NoField {
		b = e.appendName(b)
		if e.Value != "" {
			b = append(b, " is "...)
			b = strconv.AppendQuote(b, e.Value)
		}
		b = append(b, ": "...)
		if e.Detail != "" {
			return append(b, e.Detail...)
		}
		return append(b, e.Rule...)
	}
	b = append(b, malformedPrefix...)
	b = append(b, "row "...)
	b = strconv.AppendInt(b, int64(e.Row), 10)
	if e.StartLine > 0 {
		b = append(b, " (line "...)
		b = strconv.AppendInt(b, int64(e.StartLine), 10)
		switch {
		case e.Line > 0 && e.Line != e.StartLine:
			b = append(b, "; at line "...)
			b = strconv.AppendInt(b, int64(e.Line), 10)
			if e.Column > 0 {
				b = append(b, ", column "...)
				b = strconv.AppendInt(b, int64(e.Column), 10)
			}
		case e.Column > 0:
			b = append(b, ", column "...)
			b = strconv.AppendInt(b, int64(e.Column), 10)
		}
		b = append(b, ')')
	}
	b = append(b, ": "...)
	return append(b, e.Rule...)
}

// appendName appends how a field's error names the field.
func (e RowError) appendName(b []byte) []byte {
	name := e.Field.String()
	if e.Header == "" {
		return append(b, name...)
	}
	b = append(b, "column "...)
	b = strconv.AppendQuote(b, e.Header)
	if e.Header != name {
		b = append(b, " ("...)
		b = append(b, name...)
		b = append(b, ')')
	}
	return b
}

// malformedPrefix starts the text of a RowError about the whole record.
const malformedPrefix = "malformed record: "

// Reason is the error without its positions and its value, so that one
// problem on many rows counts as one reason: `column "zip" (zipCode): must
// be 5 digits`, "malformed record: the row has 10 fields ...".
func (e RowError) Reason() string {
	if e.Field != NoField {
		return string(append(append(e.appendName(nil), ": "...), e.Rule...))
	}
	return malformedPrefix + e.Rule
}

// RowErrors is every reason one row is invalid, in the order found (the
// mapper's are in field order).
type RowErrors []RowError

// Error joins the errors' texts with "; ", as the results file's error
// column and the rejects file show them.
func (es RowErrors) Error() string {
	switch len(es) {
	case 0:
		return ""
	case 1:
		return es[0].Error()
	}
	var b []byte
	for i, e := range es {
		if i > 0 {
			b = append(b, "; "...)
		}
		b = e.appendText(b)
	}
	return string(b)
}

// String is Error, so that printing a RowErrors shows its text.
func (es RowErrors) String() string { return es.Error() }
