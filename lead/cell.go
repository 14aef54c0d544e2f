package lead

// A spreadsheet that opens a CSV file runs a cell that begins with =, +, -
// or @ as a formula (and tab or CR lead to one after trimming): a partner's
// cell or a service's note such as =HYPERLINK(...) or -2+3+cmd|' /C calc'!A0
// would run on the partner manager's machine (OWASP "CSV Injection").
// EscapeCell and UnescapeCell are the one rule for bulkload's CSV outputs
// (the results and rejects files), and its inverse for reading them back.

// EscapeCell returns s as a CSV output cell that no spreadsheet runs as a
// formula, as OWASP recommends: a single quote is put before a cell that
// begins with =, +, -, @, tab or CR. A plain decimal number ("-5", "+12",
// "-0.50") is left alone: no spreadsheet runs it, and a partner reads it as
// the number it is. A cell that already begins with a single quote gets one
// more, so that UnescapeCell can undo every escape exactly: an escaped cell
// is exactly one that begins with a single quote.
func EscapeCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if isDecimal(s) {
			return s
		}
		return "'" + s
	case '\'':
		return "'" + s
	}
	return s
}

// UnescapeCell is the inverse of EscapeCell: it drops the single quote that
// begins s, if any. It is for cells that EscapeCell wrote (results and
// rejects files), never for a partner's own export, where a leading quote
// is data ('s-Hertogenbosch).
func UnescapeCell(s string) string {
	if len(s) > 0 && s[0] == '\'' {
		return s[1:]
	}
	return s
}

// isDecimal reports whether s is a plain decimal number: a sign, digits,
// and optionally a point and more digits.
func isDecimal(s string) bool {
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	digits, point := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !point && digits > 0 && i+1 < len(s):
			point = true
		default:
			return false
		}
	}
	return digits > 0
}
