package mapper

import (
	"net/mail"
	"net/url"
	"strings"
)

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// atoiSmall parses up to 9 ASCII digits; the caller has checked them.
func atoiSmall(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// normDate reads YYYY-MM-DD, MM/DD/YYYY or M/D/YYYY (DD/MM/YYYY or D/M/YYYY
// when dayFirst) and returns YYYY-MM-DD. today is yyyymmdd; a holds the
// string of a converted date.
func normDate(s string, today int, dayFirst bool, a *arena) (string, string) {
	var y, m, d int
	iso := false
	ruleFormat, ruleNotReal := ruleDateFormat, ruleDateNotReal
	if dayFirst {
		ruleFormat, ruleNotReal = ruleDateFormatDayFirst, ruleDateNotRealDayFirst
	}
	switch {
	case len(s) == 10 && s[4] == '-' && s[7] == '-':
		if !allDigits(s[:4]) || !allDigits(s[5:7]) || !allDigits(s[8:]) {
			return "", ruleFormat
		}
		y, m, d = atoiSmall(s[:4]), atoiSmall(s[5:7]), atoiSmall(s[8:])
		iso = true
	case len(s) >= 6 && (s[1] == '/' || s[2] == '/'):
		i := 1
		if s[1] != '/' {
			i = 2
		}
		j := i + 2
		if s[j] != '/' {
			j++
		}
		if j >= len(s) || s[j] != '/' {
			return "", ruleFormat
		}
		ms, ds, ys := s[:i], s[i+1:j], s[j+1:]
		if !allDigits(ms) || !allDigits(ds) || !allDigits(ys) || ys == "" {
			return "", ruleFormat
		}
		switch len(ys) {
		case 4:
		case 2:
			return "", ruleDateTwoDigitYear
		default:
			return "", ruleFormat
		}
		y, m, d = atoiSmall(ys), atoiSmall(ms), atoiSmall(ds)
		if dayFirst {
			m, d = d, m // the parts were read as month/day
		}
	default:
		return "", ruleFormat
	}
	if m > 12 && m <= 31 && d >= 1 && d <= 12 && !iso {
		// The other order would read it: say which setting does.
		if dayFirst {
			return "", ruleDateMonthFirstHint
		}
		return "", ruleDateDayFirstHint
	}
	if m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return "", ruleNotReal
	}
	if y < 1900 {
		return "", ruleDateTooOld
	}
	if y*10000+m*100+d > today {
		return "", ruleDateFuture
	}
	if iso {
		return s, ""
	}
	b := [10]byte{
		byte('0' + y/1000), byte('0' + y/100%10), byte('0' + y/10%10), byte('0' + y%10), '-',
		byte('0' + m/10), byte('0' + m%10), '-',
		byte('0' + d/10), byte('0' + d%10),
	}
	return a.intern(b[:]), ""
}

// normPhone strips spaces, dots, dashes, parentheses and a leading +1 (or a
// leading 1 of an 11-digit number) and wants exactly 10 digits.
func normPhone(s string, a *arena) (string, string) {
	var buf [11]byte
	n := 0
	plus := false
	clean := true // s holds nothing but digits
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			if n == len(buf) {
				return "", rulePhone
			}
			buf[n] = c
			n++
		case c == ' ' || c == '.' || c == '-' || c == '(' || c == ')':
			clean = false
		case c == '+' && n == 0 && !plus:
			plus = true
			clean = false
		default:
			return "", rulePhone
		}
	}
	digits := buf[:n]
	if n == 11 && digits[0] == '1' {
		digits = digits[1:]
	} else if plus {
		return "", rulePhone // a country code other than +1
	}
	if len(digits) != 10 {
		return "", rulePhone
	}
	if clean { // s is only digits: no copy needed
		return s[len(s)-10:], ""
	}
	return a.intern(digits), ""
}

// normSSN strips dashes and spaces and wants 9 digits that could have been
// issued.
func normSSN(s string, a *arena) (string, string) {
	var buf [9]byte
	n := 0
	clean := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			if n == len(buf) {
				return "", ruleSSNDigits
			}
			buf[n] = c
			n++
		case c == '-' || c == ' ':
			clean = false
		default:
			return "", ruleSSNDigits
		}
	}
	if n != 9 {
		return "", ruleSSNDigits
	}
	switch {
	case buf[0] == '0' && buf[1] == '0' && buf[2] == '0':
		return "", ruleSSNArea000
	case buf[0] == '6' && buf[1] == '6' && buf[2] == '6':
		return "", ruleSSNArea666
	case buf[0] == '9':
		return "", ruleSSNArea9xx
	case buf[3] == '0' && buf[4] == '0':
		return "", ruleSSNGroup
	case buf[5] == '0' && buf[6] == '0' && buf[7] == '0' && buf[8] == '0':
		return "", ruleSSNSerial
	}
	if clean {
		return s, ""
	}
	return a.intern(buf[:]), ""
}

// normZip wants 5 digits and cuts ZIP+4 (12345-6789 or 9 digits) to five.
func normZip(s string) (string, string) {
	switch {
	case len(s) == 5 && allDigits(s):
		return s, ""
	case len(s) == 10 && s[5] == '-' && allDigits(s[:5]) && allDigits(s[6:]):
		return s[:5], ""
	case len(s) == 9 && allDigits(s):
		return s[:5], ""
	case len(s) == 4 && allDigits(s),
		len(s) == 8 && allDigits(s),
		len(s) == 9 && s[4] == '-' && allDigits(s[:4]) && allDigits(s[5:]):
		return "", ruleZipShort
	}
	return "", ruleZip
}

// parseBool reads true/false, yes/no, y/n, t/f and 1/0 in any case.
func parseBool(s string) (value, ok bool) {
	switch len(s) {
	case 1:
		switch s[0] {
		case '1', 'y', 'Y', 't', 'T':
			return true, true
		case '0', 'n', 'N', 'f', 'F':
			return false, true
		}
	case 2:
		if strings.EqualFold(s, "no") {
			return false, true
		}
	case 3:
		if strings.EqualFold(s, "yes") {
			return true, true
		}
	case 4:
		if strings.EqualFold(s, "true") {
			return true, true
		}
	case 5:
		if strings.EqualFold(s, "false") {
			return false, true
		}
	}
	return false, false
}

// parseMoney reads a whole-dollar amount: an optional $, digits with
// well-formed thousands commas or none, and an optional fraction of zeros.
func parseMoney(s string) (int, string) {
	if len(s) <= 9 && allDigits(s) { // the usual case, cannot overflow
		return atoiSmall(s), ""
	}
	neg := false
	if s[0] == '-' {
		neg, s = true, s[1:]
	}
	if s != "" && s[0] == '$' {
		s = s[1:]
	}
	if !neg && s != "" && s[0] == '-' {
		neg, s = true, s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	if intPart == "" || (hasFrac && (frac == "" || !allDigits(frac))) {
		return 0, ruleMoneyText
	}
	n := 0
	tooLarge := false
	group := -1 // digits since the last comma; -1 before any comma
	lead := 0   // digits before the first comma
	for i := 0; i < len(intPart); i++ {
		c := intPart[i]
		switch {
		case isDigit(c):
			if group >= 0 {
				group++
			} else {
				lead++
			}
			if !tooLarge {
				n = n*10 + int(c-'0')
				if n > maxInt32 {
					tooLarge = true
				}
			}
		case c == ',':
			if (group < 0 && (lead < 1 || lead > 3)) || (group >= 0 && group != 3) {
				return 0, ruleMoneyText
			}
			group = 0
		default:
			return 0, ruleMoneyText
		}
	}
	if group >= 0 && group != 3 {
		return 0, ruleMoneyText
	}
	if hasFrac && strings.Trim(frac, "0") != "" {
		return 0, ruleMoneyWhole
	}
	if neg && (n != 0 || tooLarge) {
		return 0, ruleMoneyNegative
	}
	if tooLarge {
		return 0, ruleTooLarge
	}
	return n, ""
}

// parseID reads a positive decimal integer that fits a GraphQL Int.
func parseID(s string) (int, bool) {
	if s == "" || len(s) > 10 || !allDigits(s) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n, n > 0 && n <= maxInt32
}

// labelKey lower-cases the letters of s and drops everything else, so that
// "Home Owner", "home-owner" and "HOMEOWNER" read alike. It returns "" for a
// label too long to be one of ours.
func labelKey(buf *[32]byte, s string) []byte {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'a' <= c && c <= 'z' {
			if n == len(buf) {
				return nil
			}
			buf[n] = c
			n++
		}
	}
	return buf[:n]
}

func residenceType(s string) (int, bool) {
	if n, ok := parseID(s); ok {
		return n, n <= 4
	}
	var buf [32]byte
	switch string(labelKey(&buf, s)) {
	case "homeowner", "own", "owner", "owned", "ownhome":
		return 1, true
	case "rent", "renter", "renting", "rented", "rental":
		return 2, true
	case "livingwithfamily", "liveswithfamily", "livewithfamily", "withfamily", "family":
		return 3, true
	case "other":
		return 4, true
	}
	return 0, false
}

func incomeSource(s string) (int, bool) {
	if n, ok := parseID(s); ok {
		return n, true
	}
	var buf [32]byte
	switch string(labelKey(&buf, s)) {
	case "employed", "employment", "employee":
		return 1, true
	case "socialsecurity":
		return 2, true
	case "pension", "retirement", "retired":
		return 3, true
	}
	return 0, false
}

func loanPurpose(s string) (int, bool) {
	if n, ok := parseID(s); ok {
		return n, true
	}
	var buf [32]byte
	switch string(labelKey(&buf, s)) {
	case "debtconsolidation":
		return 1, true
	case "homeimprovement":
		return 2, true
	}
	return 0, false
}

// isAtext reports whether c may appear in a dot-atom of RFC 5322.
func isAtext(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', isDigit(c):
		return true
	}
	return strings.IndexByte("!#$%&'*+/=?^_`{|}~-", c) >= 0
}

// isDotAtom reports whether s is atext runs separated by single dots.
func isDotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if s[i-1] == '.' {
				return false
			}
		} else if !isAtext(c) {
			return false
		}
	}
	return true
}

// isEmail reports whether s is a bare address that net/mail.ParseAddress
// gives back unchanged, with a dot in the domain. Plain dot-atom addresses,
// nearly all real ones, are decided without calling net/mail.
func isEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	if at < 0 || !strings.Contains(s[at+1:], ".") {
		return false
	}
	if isDotAtom(s[:at]) && isDotAtom(s[at+1:]) {
		return true
	}
	return isEmailSlow(s)
}

// isEmailSlow is the rule itself; isEmail is its fast path.
func isEmailSlow(s string) bool {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	return at >= 0 && strings.Contains(s[at+1:], ".")
}

func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isCertificate reports whether s is a canonical UUID (8-4-4-4-12 hex digits)
// or an absolute http or https URL with a host.
func isCertificate(s string) bool {
	if len(s) == 36 {
		ok := true
		for i := 0; i < len(s); i++ {
			switch i {
			case 8, 13, 18, 23:
				ok = ok && s[i] == '-'
			default:
				ok = ok && isHex(s[i])
			}
		}
		if ok {
			return true
		}
	}
	if isPlainURL(s) {
		return true
	}
	return isURLSlow(s)
}

// isURLSlow is the URL rule itself; isPlainURL is its fast path.
func isURLSlow(s string) bool {
	if strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return u.Host != "" && u.Hostname() != ""
}

// isPlainURL reports whether s is an http or https URL whose host is plain
// letters, digits, dots and hyphens, with an optional port, and whose rest
// holds no escapes or spaces: URLs that url.Parse accepts with that host.
// Anything else is left to isURLSlow.
func isPlainURL(s string) bool {
	var rest string
	switch {
	case len(s) > 8 && strings.EqualFold(s[:8], "https://"):
		rest = s[8:]
	case len(s) > 7 && strings.EqualFold(s[:7], "http://"):
		rest = s[7:]
	default:
		return false
	}
	end := 0
	for end < len(rest) && rest[end] != '/' && rest[end] != '?' && rest[end] != '#' {
		end++
	}
	host, tail := rest[:end], rest[end:]
	if h, port, ok := strings.Cut(host, ":"); ok {
		if port == "" || !allDigits(port) {
			return false
		}
		host = h
	}
	if host == "" {
		return false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !(isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '.' || c == '-') {
			return false
		}
	}
	for i := 0; i < len(tail); i++ {
		c := tail[i]
		if c <= ' ' || c >= 0x7f || c == '%' {
			return false
		}
	}
	return true
}
