// Package redact keeps personal data and credentials out of everything
// bulkload writes: the results file, logs, errors, the summary, the HTML
// report and the metrics. It is used by every output and imports nothing
// of the pipeline but the lead's types, so that it can be tested with no
// HTTP.
//
// Its vocabulary:
//   - Own: one person's SSN and date of birth, and Own.Cut, which finds
//     them in text in every form they may be written, and numbers shaped
//     like anybody's SSN. The mapper asks it whether a cell's value may be
//     shown in a field error.
//   - Redactor (New): one lead's Own applied to what the service sends
//     back about that lead (a result's note, id, partnerLeadId and
//     bidValue; error messages and codes).
//   - URL and URLsIn: a URL's user info and query values, fit for a
//     message.
//   - Secret: an OAuth 2.0 client secret in a token endpoint's free text.
//
// What Own.Cut finds:
//   - the person's SSN digits in sequence, whatever separators (space, tab,
//     newline, - . / _ , :) stand between them and whatever surrounds them:
//     123-45-6789, 123 45 6789, 123_45_6789, 1 2 3 4 5 6 7 8 9,
//     SSN123456789;
//   - the date of birth as year, month and day in the orders Y-M-D, M-D-Y
//     and D-M-Y, 4- or 2-digit year, with or without leading zeros,
//     separated by - / . , _ or spaces, the month as a number or an English
//     name or abbreviation, the day with or without an ordinal suffix
//     (1977-07-07, 07/07/1977, 7/7/77, 7.7.1977, July 7th, 1977,
//     07-Jul-77, 7 July 1977, July_7_1977), and as one run of digits
//     (19770707, 07071977, 070777);
//   - with generic set, any run of exactly 9 digits, and any 3-2-4 digit
//     groups joined by one and the same of - . space / _ (another
//     person's SSN).
//
// What survives: UUIDs (8-4-4-4-12 hex; a UUID group may hold a 9-digit
// run), phone numbers (10 or 11 digits, 3-3-4 groups), amounts, and dates
// other than the person's birth date. Over-redaction is preferred to a
// leak: a 9-digit number of any kind is removed.
package redact

import "strings"

// Text replaces every piece of personal data cut out of a text.
const Text = "[REDACTED]"

// Own is one person's SSN and date of birth, as Cut looks for them. A nil
// or zero Own finds nothing of its own (Cut with generic still cuts
// SSN-shaped numbers). It is immutable after NewOwn and safe for
// concurrent use.
type Own struct {
	ssn    string // the SSN's 9 digits, or ""
	rawSSN string // the SSN as given when it is not 9 digits (exact match)
	// dobs are the date of birth's readings: one for YYYY-MM-DD, one or
	// two for a date written otherwise (month first or day first).
	dobs   []birthDate
	rawDOB string // the date of birth as given when it is not YYYY-MM-DD
}

// birthDate is a date of birth split for matching.
type birthDate struct {
	y4, y2 string // "1977", "77"; y4 is "" for a 2-digit year
	m, d   int
}

// NewOwn returns the Own of a person whose SSN is ssn (9 digits with any
// separators; other text of 4 bytes or more is matched exactly) and whose
// date of birth is dob: YYYY-MM-DD, or a date written another way
// (ParseWritten's forms, read month first and day first), which is also
// matched exactly when it has 4 bytes or more.
func NewOwn(ssn, dob string) *Own {
	o := &Own{}
	if d := onlyDigits(ssn); len(d) == 9 {
		o.ssn = d
	} else if len(ssn) >= 4 {
		o.rawSSN = ssn
	}
	if bd, ok := parseISODate(dob); ok {
		o.dobs = []birthDate{bd}
		return o
	}
	o.dobs = parseWritten(strings.TrimSpace(dob))
	if len(dob) >= 4 {
		o.rawDOB = dob
	}
	return o
}

// Cut returns s with the person's SSN and date of birth, and with generic
// every SSN-shaped number, replaced by Text.
func (o *Own) Cut(s string, generic bool) string {
	r := o
	if r == nil {
		r = &Own{}
	}
	if r.rawSSN != "" {
		s = strings.ReplaceAll(s, r.rawSSN, Text)
	}
	if r.rawDOB != "" {
		s = strings.ReplaceAll(s, r.rawDOB, Text)
	}
	if !strings.ContainsAny(s, "0123456789") {
		return s
	}
	// One pass per rule, each on the last one's output: a cut leaves
	// [REDACTED] behind, which ends runs of digits, so what is left of a
	// longer number is judged on its own by the next rule.
	if r.ssn != "" {
		s = replaceSpans(s, digitChains(s, r.ssn, nil))
	}
	// Every written form of the date holds its 2-digit year.
	for _, d := range r.dobs {
		if strings.Contains(s, d.y2) {
			s = replaceSpans(s, d.spans(s, components(s), uuidSpans(s), nil))
		}
	}
	if generic {
		s = replaceSpans(s, ssnShaped(s, components(s), uuidSpans(s), nil))
	}
	return s
}

// span is s[a:b].
type span struct{ a, b int }

// IsSSNSep reports whether c may stand between the digits of an echoed
// SSN. The fuzz test strips exactly these before looking for the digits.
func IsSSNSep(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '-', '.', '/', '_', ',', ':':
		return true
	}
	return false
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isHex(c byte) bool    { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

func onlyDigits(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// digitChains appends the spans of every occurrence of digits (in order,
// with any separators between them) in s's maximal runs of digits and
// separators.
func digitChains(s, digits string, cut []span) []span {
	var pos []int
	var ds []byte
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		pos, ds = pos[:0], ds[:0]
		j := i
		for ; j < len(s) && (isDigit(s[j]) || IsSSNSep(s[j])); j++ {
			if isDigit(s[j]) {
				pos = append(pos, j)
				ds = append(ds, s[j])
			}
		}
		for k := 0; len(ds)-k >= len(digits); {
			n := strings.Index(string(ds[k:]), digits)
			if n < 0 {
				break
			}
			cut = append(cut, span{pos[k+n], pos[k+n+len(digits)-1] + 1})
			k += n + len(digits)
		}
		i = j
	}
	return cut
}

// uuidSpans returns the spans of the UUIDs (8-4-4-4-12 hex) in s.
func uuidSpans(s string) []span {
	var out []span
	for i := 0; i+36 <= len(s); i++ {
		if (i == 0 || !isHex(s[i-1])) && IsUUID(s[i:i+36]) && (i+36 == len(s) || !isHex(s[i+36])) {
			out = append(out, span{i, i + 36})
			i += 35
		}
	}
	return out
}

// IsUUID reports whether s is a UUID in its 8-4-4-4-12 hex form.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}

func overlaps(x span, spans []span) bool {
	for _, y := range spans {
		if x.a < y.b && y.a < x.b {
			return true
		}
	}
	return false
}

// component is a run of digits (with an ordinal suffix such as "th" kept
// in b but not in text) or of letters.
type component struct {
	a, b int
	text string
	num  bool
}

// components splits s into its runs of digits and of ASCII letters.
func components(s string) []component {
	var out []component
	for i := 0; i < len(s); {
		switch {
		case isDigit(s[i]):
			j := i
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			c := component{a: i, b: j, text: s[i:j], num: true}
			if k := j + 2; k <= len(s) && isOrdinal(s[j:k]) && (k == len(s) || !isLetter(s[k])) {
				c.b = k
			}
			out = append(out, c)
			i = c.b
		case isLetter(s[i]):
			j := i
			for j < len(s) && isLetter(s[j]) {
				j++
			}
			out = append(out, component{a: i, b: j, text: s[i:j]})
			i = j
		default:
			i++
		}
	}
	return out
}

func isOrdinal(s string) bool {
	switch strings.ToLower(s) {
	case "st", "nd", "rd", "th":
		return true
	}
	return false
}

// ssnShaped appends the spans of SSN-shaped numbers outside UUIDs: a run
// of exactly 9 digits, or 3-2-4 digit runs joined by one and the same
// single separator.
func ssnShaped(s string, comps []component, uuids []span, cut []span) []span {
	for i, c := range comps {
		if !c.num {
			continue
		}
		// The digits only: an ordinal suffix ("123456789th") stays.
		if len(c.text) == 9 && !overlaps(span{c.a, c.a + 9}, uuids) {
			cut = append(cut, span{c.a, c.a + 9})
			continue
		}
		if len(c.text) != 3 || c.b != c.a+3 || i+2 >= len(comps) {
			continue
		}
		g, l := comps[i+1], comps[i+2]
		if !g.num || !l.num || len(g.text) != 2 || len(l.text) != 4 || g.b != g.a+2 {
			continue
		}
		if g.a != c.b+1 || l.a != g.b+1 || s[c.b] != s[g.b] || !strings.ContainsRune("-. /_", rune(s[c.b])) {
			continue
		}
		if x := (span{c.a, l.a + 4}); !overlaps(x, uuids) {
			cut = append(cut, x)
		}
	}
	return cut
}

// isDateGap reports whether s may separate the parts of a written date.
func isDateGap(s string) bool {
	if len(s) == 0 || len(s) > 3 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(" -/.,_", rune(s[i])) {
			return false
		}
	}
	return true
}

// spans appends the spans where s writes the date of birth d.
func (d birthDate) spans(s string, comps []component, uuids []span, cut []span) []span {
	for i, c := range comps {
		if c.num && c.b == c.a+len(c.text) && d.isPacked(c.text) && !overlaps(span{c.a, c.b}, uuids) {
			cut = append(cut, span{c.a, c.b})
			continue
		}
		if i+2 >= len(comps) {
			continue
		}
		x, y, z := c, comps[i+1], comps[i+2]
		if !isDateGap(s[x.b:y.a]) || !isDateGap(s[y.b:z.a]) {
			continue
		}
		if !d.isDate(x, y, z) {
			continue
		}
		if sp := (span{x.a, z.b}); !overlaps(sp, uuids) {
			cut = append(cut, sp)
		}
	}
	return cut
}

// isDate reports whether x y z write the date d in the order Y M D, M D Y
// or D M Y.
func (d birthDate) isDate(x, y, z component) bool {
	return (d.isYear(x) && d.isMonth(y) && d.isDay(z)) ||
		(d.isMonth(x) && d.isDay(y) && d.isYear(z)) ||
		(d.isDay(x) && d.isMonth(y) && d.isYear(z))
}

func (d birthDate) isYear(c component) bool {
	return c.num && c.b == c.a+len(c.text) && (c.text == d.y4 || c.text == d.y2)
}

func (d birthDate) isMonth(c component) bool {
	if !c.num {
		return monthNumber(c.text) == d.m
	}
	return c.b == c.a+len(c.text) && smallNumber(c.text) == d.m
}

func (d birthDate) isDay(c component) bool {
	return c.num && smallNumber(c.text) == d.d
}

// isPacked reports whether one run of digits is the date d without
// separators: YYYYMMDD, MMDDYYYY, DDMMYYYY, YYMMDD, MMDDYY, DDMMYY.
func (d birthDate) isPacked(t string) bool {
	m, dd := twoDigits(d.m), twoDigits(d.d)
	switch len(t) {
	case 8:
		return d.y4 != "" && (t == d.y4+m+dd || t == m+dd+d.y4 || t == dd+m+d.y4)
	case 6:
		return t == d.y2+m+dd || t == m+dd+d.y2 || t == dd+m+d.y2
	}
	return false
}

// parseWritten reads a date of birth written as one of the forms the
// redaction finds (three parts, Y M D, M D Y or D M Y, joined by date
// gaps, the month a number or a name; or 8 digits, YYYYMMDD, MMDDYYYY or
// DDMMYYYY) and returns every reading of it: a numeric month and day are
// read both ways when both could be a month. None for other text.
func parseWritten(s string) []birthDate {
	comps := components(s)
	var out []birthDate
	add := func(y string, m, d int) {
		if m < 1 || m > 12 || d < 1 || d > 31 || (len(y) != 4 && len(y) != 2) {
			return
		}
		bd := birthDate{y2: y[len(y)-2:], m: m, d: d}
		if len(y) == 4 {
			bd.y4 = y
		}
		for _, o := range out {
			if o == bd {
				return
			}
		}
		out = append(out, bd)
	}
	switch {
	case len(comps) == 1 && comps[0].num && len(comps[0].text) == 8 && comps[0].a == 0 && comps[0].b == len(s):
		t := comps[0].text
		add(t[:4], smallNumber(t[4:6]), smallNumber(t[6:]))
		add(t[4:], smallNumber(t[:2]), smallNumber(t[2:4]))
		add(t[4:], smallNumber(t[2:4]), smallNumber(t[:2]))
		return out
	case len(comps) != 3 || comps[0].a != 0 || comps[2].b != len(s):
		return nil
	}
	x, y, z := comps[0], comps[1], comps[2]
	if !isDateGap(s[x.b:y.a]) || !isDateGap(s[y.b:z.a]) {
		return nil
	}
	month := func(c component) int {
		if !c.num {
			return monthNumber(c.text)
		}
		if c.b != c.a+len(c.text) {
			return -1 // an ordinal suffix is a day's
		}
		return smallNumber(c.text)
	}
	year := func(c component) string {
		if c.num && c.b == c.a+len(c.text) {
			return c.text
		}
		return ""
	}
	day := func(c component) int {
		if !c.num {
			return -1
		}
		return smallNumber(c.text)
	}
	if len(year(x)) == 4 {
		add(year(x), month(y), day(z))
	}
	add(year(z), month(x), day(y))
	add(year(z), month(y), day(x))
	return out
}

// smallNumber is the value of a 1- or 2-digit run, or -1.
func smallNumber(t string) int {
	switch len(t) {
	case 1:
		return int(t[0] - '0')
	case 2:
		return int(t[0]-'0')*10 + int(t[1]-'0')
	}
	return -1
}

func twoDigits(n int) string {
	return string([]byte{byte('0' + n/10), byte('0' + n%10)})
}

// monthNumber is 1-12 for an English month name or its abbreviation
// (any case), else 0.
func monthNumber(w string) int {
	switch strings.ToLower(w) {
	case "jan", "january":
		return 1
	case "feb", "february":
		return 2
	case "mar", "march":
		return 3
	case "apr", "april":
		return 4
	case "may":
		return 5
	case "jun", "june":
		return 6
	case "jul", "july":
		return 7
	case "aug", "august":
		return 8
	case "sep", "sept", "september":
		return 9
	case "oct", "october":
		return 10
	case "nov", "november":
		return 11
	case "dec", "december":
		return 12
	}
	return 0
}

// parseISODate splits a YYYY-MM-DD date.
func parseISODate(s string) (birthDate, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return birthDate{}, false
	}
	for i, c := range []byte(s) {
		if i != 4 && i != 7 && !isDigit(c) {
			return birthDate{}, false
		}
	}
	m, d := smallNumber(s[5:7]), smallNumber(s[8:10])
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return birthDate{}, false
	}
	return birthDate{y4: s[:4], y2: s[2:4], m: m, d: d}, true
}

// replaceSpans replaces the union of spans in s with Text.
func replaceSpans(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	// Few spans: sort by insertion.
	for i := 1; i < len(spans); i++ {
		for j := i; j > 0 && spans[j].a < spans[j-1].a; j-- {
			spans[j], spans[j-1] = spans[j-1], spans[j]
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for i := 0; i < len(spans); {
		a, e := spans[i].a, spans[i].b
		for i++; i < len(spans) && spans[i].a <= e; i++ {
			e = max(e, spans[i].b)
		}
		if a < last {
			a = last
		}
		b.WriteString(s[last:a])
		b.WriteString(Text)
		last = e
	}
	b.WriteString(s[last:])
	return b.String()
}
