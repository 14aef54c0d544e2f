package redact

import (
	"net/url"
	"strings"
)

// redactedURLPart replaces a URL's user info and each query value in what
// bulkload prints.
const redactedURLPart = "REDACTED"

// URL returns raw fit for a message, a log line or the summary: its
// user info (user and password: https://user:pass@host) becomes REDACTED,
// and so does every query value (?api_key=...: the key stays, so a reader
// still sees which parameter was given). Scheme, host, port and path stay.
// A URL that does not parse is "(unparsable URL)": it cannot be shown
// safely. --endpoint, the token URL and --pushgateway go through it
// wherever they are printed.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	if u.User != nil {
		u.User = url.User(redactedURLPart)
	}
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery = redactQuery(u.RawQuery)
	}
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = redactedURLPart, ""
	}
	return u.String()
}

// redactQuery keeps a query's keys and replaces each value.
func redactQuery(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok {
			parts[i] = k + "=" + redactedURLPart
		} else if p != "" {
			parts[i] = redactedURLPart
		}
	}
	return strings.Join(parts, "&")
}

// URLsIn returns s with every http:// or https:// URL in it passed
// through URL: for error text that quotes the URL it was about (Go's
// HTTP client writes `Post "https://host/path?key=value": ...`, with only
// the password masked).
func URLsIn(s string) string {
	lower := asciiLower(s) // byte for byte: indexes hold in s
	if !strings.Contains(lower, "http") {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		j := strings.Index(lower[i:], "http")
		if j < 0 {
			break
		}
		start := i + j
		rest := lower[start:]
		if !strings.HasPrefix(rest, "http://") && !strings.HasPrefix(rest, "https://") {
			i = start + 4
			continue
		}
		end := start
		for end < len(s) && !strings.ContainsRune(" \t\r\n\"'<>`", rune(s[end])) {
			end++
		}
		b.WriteString(s[last:start])
		u := strings.TrimRight(s[start:end], ".,;:)")
		b.WriteString(URL(u))
		last, i = start+len(u), start+len(u)
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// asciiLower lowers A-Z only, so that the result's bytes line up with s's
// (strings.ToLower changes the length of invalid UTF-8).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
