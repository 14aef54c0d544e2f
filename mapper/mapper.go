package mapper

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/redact"
)

// The rules a FieldError names. They are fixed text: a rule never carries the
// value it rejected, so no message can leak an SSN or a date of birth.
const (
	ruleNotUTF8          = "not valid UTF-8 (is the file Latin-1?)"
	ruleRequired         = "required"
	ruleDateFormat       = "must be a date as YYYY-MM-DD, MM/DD/YYYY or M/D/YYYY"
	ruleDateTwoDigitYear = "year must have 4 digits (2-digit years are ambiguous)"
	ruleDateNotReal      = "not a real calendar date (dates are read as YYYY-MM-DD or MM/DD/YYYY, month first)"
	// With Options.DayFirst, slashed dates are read day first.
	ruleDateFormatDayFirst  = "must be a date as YYYY-MM-DD, DD/MM/YYYY or D/M/YYYY"
	ruleDateNotRealDayFirst = "not a real calendar date (dates are read as YYYY-MM-DD or DD/MM/YYYY, day first)"
	// A slashed date whose month is over 12 but would be a month read the
	// other way round. With Options.Hints, the rule names the setting that
	// reads it so (Mapper.worded).
	ruleDateDayFirstHint   = "not a real date as MM/DD/YYYY (month first): the month would be over 12; the file may write the day first (DD/MM/YYYY)"
	ruleDateMonthFirstHint = "not a real date as DD/MM/YYYY (day first): the month would be over 12; the file may write the month first (MM/DD/YYYY)"
	ruleDateFuture         = "must not be in the future"
	ruleDateTooOld         = "must not be before 1900"
	rulePhone              = "must be 10 digits (no country code)"
	ruleSSNDigits          = "must be 9 digits"
	ruleSSNArea000         = "area number 000 is never issued"
	ruleSSNArea666         = "area number 666 is never issued"
	ruleSSNArea9xx         = "area numbers 900-999 are never issued"
	ruleSSNGroup           = "group number 00 is never issued"
	ruleSSNSerial          = "serial number 0000 is never issued"
	ruleState              = "must be a two-letter USPS state code or a state name"
	ruleZip                = "must be 5 digits"
	ruleZipShort           = "must be 5 digits (a spreadsheet may have dropped a leading zero)"
	ruleBool               = "must be true or false (also yes/no, y/n, t/f, 1/0)"
	ruleConsent            = "must be true (the service does not process leads without consent)"
	ruleMoneyText          = "must be a whole-dollar amount"
	ruleMoneyWhole         = "must be whole dollars"
	ruleMoneyNegative      = "must not be negative"
	ruleTooLarge           = "too large (GraphQL Int is 32-bit)"
	ruleResidence          = "must be 1-4 or a label (Home Owner, Rent, Living with Family, Other)"
	ruleIncomeSource       = "must be a positive integer or a label (Employed, Social Security, Pension)"
	ruleLoanPurpose        = "must be a positive integer or a label (Debt Consolidation, Home Improvement)"
	ruleEmail              = "must be a valid e-mail address (name@example.com)"
	ruleCertificate        = "must be a UUID or an http(s) URL"
	// ruleDuplicate is counted; the error's Detail names the row
	// (ruleDuplicatePrefix and its number).
	ruleDuplicate       = "duplicate of an earlier row"
	ruleDuplicatePrefix = "duplicate of row "
	// ruleControl: a NUL or another invisible control character is never
	// sent. Tabs and line breaks inside a free-text field (names, address,
	// city) are read as spaces instead.
	ruleControl = "contains a control character (NUL, a tab, a line break or another invisible character); remove it from the export"
)

// maxInt32 is the largest GraphQL Int.
const maxInt32 = 1<<31 - 1

// FieldError is one field of one row that failed a rule: a lead.RowError
// whose Field is set. It names the field and the rule, and its Value is set
// only for a field that is not sensitive and a value that does not look like
// an SSN or a date, so it is safe to log and to write to the results file
// even for the SSN and the date of birth. MapFields and CheckDuplicate
// fill Row and Value; the caller may fill StartLine and Header.
type FieldError = lead.RowError

// Errors is all the errors of one row, in field order. MapFields and
// CheckDuplicate return a nil Errors for a valid row; test it with len, not
// by comparing an error interface holding it with nil. Its Error joins the errors with "; ".
type Errors = lead.RowErrors

// Options configures a Mapper.
type Options struct {
	// Mapping is the partner's mapping file; nil means none. Only its Values
	// are used here (the reader applies Columns). The Mapper copies what it
	// needs, so the caller may reuse the Mapping.
	Mapping *Mapping
	// Now tells the date that "in the future" is measured against; nil means
	// time.Now. It is called once, by New.
	Now func() time.Time
	// DayFirst reads slashed dates as DD/MM/YYYY instead of the US
	// MM/DD/YYYY, for partners whose exports write the day first; without
	// it such a file's days 1-12 would be read as months. YYYY-MM-DD is
	// read the same either way.
	DayFirst bool
	// Hints name the settings that some rules advise, as the caller's
	// interface words them (the command line's flags); zero names none.
	Hints Hints
}

// Hints name the settings that read a file otherwise, for the rules that
// advise one. Each is the whole setting as the user passes it: the command
// line's "--encoding windows-1252", "--date-order dmy", "--date-order mdy".
type Hints struct {
	Encoding   string // reads the file as Windows-1252
	DayFirst   string // reads slashed dates day first
	MonthFirst string // reads slashed dates month first
}

// Mapper maps records to LeadInputs and holds the index of the leadIds seen
// so far. MapFields and IDKey only read its settings and are safe for
// concurrent use; CheckDuplicate, PrefetchIDs and IndexMemory use the
// index and must be called from one goroutine, in input order (see the
// package doc).
type Mapper struct {
	values   [lead.NumFields]map[string]string // lower-cased trimmed partner value -> value
	today    int                               // yyyymmdd
	dayFirst bool
	ids      *idIndex          // leadId -> first row
	states   map[string]string // stateNames(), read only
	// The rules that name a setting (Options.Hints), worded once.
	notUTF8, dayFirstHint, monthFirstHint string
}

// New returns a Mapper with an empty duplicate-leadId index and a random hash
// seed of its own.
func New(opts Options) *Mapper {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	y, mo, d := now().Date()
	m := &Mapper{
		today:    y*10000 + int(mo)*100 + d,
		dayFirst: opts.DayFirst,
		ids:      newIDIndex(),
		states:   stateNames(),
	}
	m.notUTF8, m.dayFirstHint, m.monthFirstHint = opts.Hints.rules()
	if opts.Mapping != nil {
		for f, vm := range opts.Mapping.Values {
			if f < 0 || f >= lead.NumFields || len(vm) == 0 {
				continue
			}
			lm := make(map[string]string, len(vm))
			for k, v := range vm {
				lm[strings.ToLower(strings.TrimSpace(k))] = v
			}
			m.values[f] = lm
		}
	}
	return m
}

// scalars backs all the *int and *bool fields of one Input and the text of
// its normalised strings, so a row costs one allocation for them instead of
// one per field.
type scalars struct {
	ints  [6]int
	bools [2]bool
	n     int
	// text holds normalised strings that are not substrings of the record:
	// a converted date (10 bytes), two phones (10 each), an SSN (9). Bytes
	// are only appended, never changed, so strings made from them by intern
	// stay immutable.
	text [40]byte
}

// arena hands out the scalars of one row, allocated on first use.
type arena struct{ sc *scalars }

func (a *arena) get() *scalars {
	if a.sc == nil {
		a.sc = new(scalars)
	}
	return a.sc
}

// int returns a pointer to n in the row's i-th int.
func (a *arena) int(i, n int) *int {
	sc := a.get()
	sc.ints[i] = n
	return &sc.ints[i]
}

// bool returns a pointer to b in the row's i-th bool.
func (a *arena) bool(i int, b bool) *bool {
	sc := a.get()
	sc.bools[i] = b
	return &sc.bools[i]
}

// intern returns b as a string backed by the row's text, or by a copy when
// that is full. b is not retained.
func (a *arena) intern(b []byte) string {
	sc := a.get()
	if len(b) == 0 || len(b) > len(sc.text)-sc.n {
		return string(b)
	}
	start := sc.n
	sc.n += copy(sc.text[start:], b)
	return unsafe.String(&sc.text[start], len(b))
}

// IDKey is the key by which the duplicate check knows a leadId: a 64-bit
// hash with a per-Mapper random seed (see checkDuplicate). The zero IDKey
// is no leadId.
type IDKey uint64

// IDKey returns the key of id, the leadId MapFields left in
// Input.LeadID; "" has the zero key. It reads only the Mapper's settings,
// so it is safe for concurrent use: the workers that map rows in parallel
// hash their leadIds too.
func (m *Mapper) IDKey(id string) IDKey {
	if id == "" {
		return 0
	}
	return m.ids.key(id)
}

// PrefetchIDs brings into the processor's cache the index memory that
// CheckDuplicate will first read for each of keys, with independent loads
// the processor overlaps, so that a batch's lookups after it wait less than
// one cache miss after another would (BenchmarkIDIndexBatches; the gain,
// in bench/README.md, is modest because the translation of addresses
// overlaps less). It changes nothing CheckDuplicate sees. Like
// CheckDuplicate, it is not safe for concurrent use.
func (m *Mapper) PrefetchIDs(keys []IDKey) {
	m.ids.prefetch(keys)
}

// CheckDuplicate registers the leadId whose key is id (IDKey; the zero key
// registers nothing) for row, and when an earlier row had it, adds the
// "duplicate of row N" error to errs in field order, showing idShown, the
// leadId as the file has it where an error may show it (MapFields' third
// answer). The first row with a leadId wins, so it must see every row in
// input order, from one goroutine: it is not safe for concurrent use.
func (m *Mapper) CheckDuplicate(row int, id IDKey, idShown string, errs Errors) Errors {
	if id == 0 {
		return errs
	}
	detail := m.checkDuplicate(row, id)
	if detail == "" {
		return errs
	}
	i := 0
	for i < len(errs) && errs[i].Field < lead.LeadID {
		i++
	}
	return slices.Insert(errs, i, FieldError{Row: row, Field: lead.LeadID, Rule: ruleDuplicate, Detail: detail, Value: idShown})
}

// IndexMemory returns the bytes the duplicate-leadId index holds outside the
// Go heap, which GOGC and GOMEMLIMIT do not see: about 9.3 a distinct leadId
// where the platform allows (see index.go), else 0. Call it from the
// goroutine that calls CheckDuplicate.
func (m *Mapper) IndexMemory() int { return m.ids.offHeapBytes() }

// MapFields validates and normalises one record, all but the
// duplicate-leadId check. row is the 1-based data row. It returns all of the
// row's field errors at once; the Input is meaningful only when the Errors
// (with CheckDuplicate's) are empty. It does not modify v; the Input may
// share its strings. It leaves the trimmed, value-mapped leadId in
// Input.LeadID for IDKey and CheckDuplicate, also when other fields fail:
// a row is MapFields, IDKey, then (PrefetchIDs over a batch's keys and)
// CheckDuplicate, as source runs it. It reads only the Mapper's settings, so it is safe for
// concurrent use: rows can be mapped in parallel and checked for duplicates
// in input order after.
func (m *Mapper) MapFields(row int, v *lead.Values) (in lead.Input, errs Errors, idShown string) {
	var a arena
	for f := lead.Field(0); f < lead.NumFields; f++ {
		if f == lead.LeadSourceID {
			continue // never sent, whatever the file holds
		}
		s, cell, rule := m.cleanCell(f, v[f])
		if rule == "" && s == "" {
			continue // an empty optional field
		}
		if rule == "" {
			if f == lead.LeadID {
				idShown = m.shownValue(f, cell, v) // CheckDuplicate's to show
			}
			rule = m.setField(&in, f, s, &a)
		}
		if rule != "" {
			if errs == nil {
				errs = make(Errors, 0, 8) // one allocation for most bad rows
			}
			errs = append(errs, FieldError{Row: row, Field: f, Rule: m.worded(rule), Value: m.shownValue(f, cell, v)})
		}
	}
	return in, errs, idShown
}

// rules words the rules that name a setting: the encoding's, and the
// date order's either way.
func (h Hints) rules() (notUTF8, dayFirst, monthFirst string) {
	notUTF8, dayFirst, monthFirst = ruleNotUTF8, ruleDateDayFirstHint, ruleDateMonthFirstHint
	if h.Encoding != "" {
		notUTF8 = "not valid UTF-8 (is the file Latin-1? try " + h.Encoding + ")"
	}
	if h.DayFirst != "" {
		dayFirst = "not a real date as MM/DD/YYYY (month first): the month would be over 12; if the file writes the day first (DD/MM/YYYY), pass " + h.DayFirst
	}
	if h.MonthFirst != "" {
		monthFirst = "not a real date as DD/MM/YYYY (day first): the month would be over 12; if the file writes the month first (MM/DD/YYYY), pass " + h.MonthFirst
	}
	return notUTF8, dayFirst, monthFirst
}

// worded is rule as this Mapper words it: the rules that name a setting
// carry Options.Hints' words.
func (m *Mapper) worded(rule string) string {
	switch rule {
	case ruleNotUTF8:
		return m.notUTF8
	case ruleDateDayFirstHint:
		return m.dayFirstHint
	case ruleDateMonthFirstHint:
		return m.monthFirstHint
	}
	return rule
}

// cleanCell is field f's cell as the rules read it: trimmed, line breaks in
// free text made spaces, and mapped through the partner's value mapping;
// cell is the text as the file has it, for an error to show. rule is set
// when the cell fails before any rule of the field's own (not UTF-8, a
// control character, a required field empty), and then cell is empty: such
// text is not shown. An empty optional cell is "" with no rule.
func (m *Mapper) cleanCell(f lead.Field, raw string) (s, cell, rule string) {
	s, ok := clean(raw)
	if !ok {
		return "", "", ruleNotUTF8
	}
	if hasControl(s) {
		if isFreeText(f) {
			s = spaceBreaks(s)
		}
		if hasControl(s) {
			return "", "", ruleControl
		}
	}
	cell = s
	if s != "" && m.values[f] != nil {
		if mv, ok := lookupFold(m.values[f], s); ok {
			s = strings.TrimSpace(mv)
		}
	}
	if s == "" {
		switch f {
		case lead.DateOfBirth:
			return "", "", ruleRequired
		case lead.TermsConsent:
			return "", "", ruleConsent
		}
	}
	return s, cell, ""
}

// setField checks s, field f's cleaned text, by the field's rule and sets
// it in in, normalised; it returns the rule s breaks, or "".
func (m *Mapper) setField(in *lead.Input, f lead.Field, s string, a *arena) (rule string) {
	switch f {
	case lead.FirstName:
		in.FirstName = s
	case lead.LastName:
		in.LastName = s
	case lead.Address1:
		in.Address1 = s
	case lead.Address2:
		in.Address2 = s
	case lead.City:
		in.City = s
	case lead.Ref:
		in.Ref = s
	case lead.LeadID:
		in.LeadID = s // CheckDuplicate's to check
	case lead.DateOfBirth:
		in.DateOfBirth, rule = normDate(s, m.today, m.dayFirst, a)
	case lead.Email:
		if !isEmail(s) {
			return ruleEmail
		}
		in.Email = s
	case lead.HomePhone:
		in.HomePhone, rule = normPhone(s, a)
	case lead.CellPhone:
		in.CellPhone, rule = normPhone(s, a)
	case lead.State:
		in.State, rule = normState(m.states, s)
	case lead.ZipCode:
		in.ZipCode, rule = normZip(s)
	case lead.SocialSecurityNumber:
		in.SocialSecurityNumber, rule = normSSN(s, a)
	case lead.TrustedformCertificateID:
		if !isCertificate(s) {
			return ruleCertificate
		}
		in.TrustedformCertificateID = s
	case lead.LoanAmount, lead.GrossAnnualIncome, lead.MonthlyIncome:
		n, rule := parseMoney(s)
		if rule != "" {
			return rule
		}
		switch f {
		case lead.LoanAmount:
			in.LoanAmount = a.int(0, n)
		case lead.GrossAnnualIncome:
			in.GrossAnnualIncome = a.int(1, n)
		default:
			in.MonthlyIncome = a.int(2, n)
		}
	case lead.ResidenceTypeID:
		n, ok := residenceType(s)
		if !ok {
			return ruleResidence
		}
		in.ResidenceTypeID = a.int(3, n)
	case lead.IncomeSourceID:
		n, ok := incomeSource(s)
		if !ok {
			return ruleIncomeSource
		}
		in.IncomeSourceID = a.int(4, n)
	case lead.LoanPurposeID:
		n, ok := loanPurpose(s)
		if !ok {
			return ruleLoanPurpose
		}
		in.LoanPurposeID = a.int(5, n)
	case lead.TermsConsent:
		b, ok := parseBool(s)
		switch {
		case !ok:
			return ruleBool
		case !b:
			return ruleConsent
		}
		in.TermsConsent = a.bool(0, true)
	case lead.CoApplicant:
		b, ok := parseBool(s)
		if !ok {
			return ruleBool
		}
		in.CoApplicant = a.bool(1, b)
	}
	return rule
}

// checkDuplicate registers the id whose key is id for row the first time
// it is seen and returns "duplicate of row N", naming the first row, after
// that (the error's Detail; its Rule is ruleDuplicate). Ids are compared by
// a 64-bit hash with a per-Mapper random seed: two different ids collide
// with a chance of about n²/2⁶⁵ in a file of n rows (3e-8 for a million
// rows, 3e-6 for ten million), and a collision does not repeat on the next
// run.
func (m *Mapper) checkDuplicate(row int, id IDKey) string {
	r := uint32(0)
	if row > 0 && uint64(row) <= 1<<32-1 {
		r = uint32(row)
	}
	if first, dup := m.ids.firstRow(id, r); dup {
		return ruleDuplicatePrefix + strconv.FormatUint(uint64(first), 10)
	}
	return ""
}

// clean trims the white space around s and reports whether s is valid
// UTF-8, with a fast path for ASCII, which nearly every cell is.
func clean(s string) (string, bool) {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8] // the compiler merges these loads into one
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		if x&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			if !utf8.ValidString(s) {
				return "", false
			}
			return strings.TrimSpace(s), true
		}
	}
	for len(s) > 0 && isASCIISpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isASCIISpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s, true
}

// maxShown bounds the value an error shows, in bytes.
const maxShown = 40

// shownValue is the value a FieldError may show for field f of row v: ""
// for a sensitive field, for a value that holds the row's own SSN or date
// of birth in any form they may be written (ownValues), and for a value
// that looks like an SSN or a date whatever its column (a shifted column
// puts them anywhere); cut to maxShown bytes.
func (m *Mapper) shownValue(f lead.Field, s string, v *lead.Values) string {
	if s == "" || f.Sensitive() || mayBeSensitive(s) || m.holdsOwn(s, v) {
		return ""
	}
	if len(s) > maxShown {
		cut := maxShown
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// holdsOwn reports whether s holds the row's own SSN or date of birth:
// as the file has them, or in any form package redact finds (every
// separator, every order, the month's name) of the values the mapper reads
// from their cells (normSSN, normDate with this Mapper's date order); a
// cell the mapper does not read is matched as written and, for a date, in
// the forms redact reads it in.
func (m *Mapper) holdsOwn(s string, v *lead.Values) bool {
	for sf := range lead.NumFields {
		if sf.Sensitive() {
			if own := strings.TrimSpace(v[sf]); len(own) >= 4 && strings.Contains(s, own) {
				return true
			}
		}
	}
	ssn, dob := strings.TrimSpace(v[lead.SocialSecurityNumber]), strings.TrimSpace(v[lead.DateOfBirth])
	if !mayHoldOwn(s, ssn, dob) {
		return false
	}
	var a arena
	if iso, rule := normDate(dob, m.today, m.dayFirst, &a); rule == "" {
		dob = iso
	}
	return redact.NewOwn(ssn, dob).Cut(s, false) != s
}

// mayHoldOwn is holdsOwn's test without allocation, for the leadId every
// row shows (MapFields' idShown): false when s cannot hold a form of the
// SSN (9 digits or more in s) nor of a date of birth whose 2-digit year
// the cell shows (every written form holds it); a date cell in another
// form is looked for in full.
func mayHoldOwn(s, ssn, dob string) bool {
	n := countDigits(s)
	if n < 3 {
		return false // a written date has 3 digits or more, an SSN 9
	}
	if n >= 9 && countDigits(ssn) == 9 {
		return true
	}
	switch {
	case len(dob) == 10 && dob[4] == '-' && dob[7] == '-' && allDigits(dob[:4]):
		return strings.Contains(s, dob[2:4]) // YYYY-MM-DD
	case len(dob) >= 8 && dob[len(dob)-5] == '/' && allDigits(dob[len(dob)-4:]):
		return strings.Contains(s, dob[len(dob)-2:]) // M/D/YYYY
	}
	return dob != ""
}

// countDigits counts the ASCII digits of s.
func countDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			n++
		}
	}
	return n
}

// mayBeSensitive reports whether s holds what may be an SSN or a date: nine
// digits with or without separators (an SSN), six or eight digits in a row
// (MMDDYY, YYYYMMDD), or three short groups of digits joined by separators
// (space, - . / or _).
func mayBeSensitive(s string) bool {
	isSep := func(c byte) bool { return c == ' ' || c == '-' || c == '.' || c == '/' || c == '_' }
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		groups, digits, short := 0, 0, true
		for {
			j := i
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			groups++
			digits += j - i
			short = short && j-i <= 4
			if j+1 < len(s) && isSep(s[j]) && isDigit(s[j+1]) {
				i = j + 1
				continue
			}
			i = j
			break
		}
		if digits == 9 || (groups == 1 && (digits == 6 || digits == 8)) || (groups == 3 && short && digits >= 4 && digits <= 8) {
			return true
		}
	}
	return false
}

// isFreeText reports whether f is text a person typed, where a tab or a
// line break (a two-line address in a quoted cell) stands for a space.
func isFreeText(f lead.Field) bool {
	switch f {
	case lead.FirstName, lead.LastName, lead.Address1, lead.Address2, lead.City:
		return true
	}
	return false
}

// The SWAR constants of hasControl: a byte of ones, of 0x20, of 0x7F.
const (
	ones    = 0x0101010101010101
	spaces  = 0x2020202020202020
	highs   = 0x8080808080808080
	deletes = 0x7F7F7F7F7F7F7F7F
)

// hasControl reports whether s holds a control character: an ASCII one
// (below 0x20, or DEL) or a C1 one (U+0080-U+009F). s is valid UTF-8. Eight
// bytes are tested at a time, as clean does, since every cell goes through.
func hasControl(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		y := x ^ deletes
		// A byte below 0x20, a byte equal to 0x7F, or a byte with the high
		// bit set (a C1 control may start there, and end in the next
		// word): look at each byte from here.
		if (x-spaces)&^x&highs != 0 || (y-ones)&^y&highs != 0 || x&highs != 0 {
			break
		}
	}
	return controlIn(s[i:])
}

// controlIn is hasControl byte by byte.
func controlIn(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7F {
			return true
		}
		// U+0080-U+009F is 0xC2 0x80-0x9F in UTF-8.
		if c == 0xC2 && i+1 < len(s) && s[i+1] < 0xA0 {
			return true
		}
	}
	return false
}

// spaceBreaks turns each run of tabs and line breaks in s into one space.
func spaceBreaks(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	brk := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\t' || c == '\n' || c == '\r' {
			if !brk {
				b.WriteByte(' ')
			}
			brk = true
			continue
		}
		brk = false
		b.WriteByte(c)
	}
	return b.String()
}

// isASCIISpace is unicode.IsSpace for ASCII bytes.
func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// lookupFold looks s up in a map whose keys are lower case, without
// allocating for ASCII values of up to 64 bytes.
func lookupFold(m map[string]string, s string) (string, bool) {
	var buf [64]byte
	if len(s) <= len(buf) {
		ascii := true
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c >= utf8.RuneSelf {
				ascii = false
				break
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[i] = c
		}
		if ascii {
			v, ok := m[string(buf[:len(s)])]
			return v, ok
		}
	}
	v, ok := m[strings.ToLower(s)]
	return v, ok
}
