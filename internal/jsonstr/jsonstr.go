// Package jsonstr appends a Go string as encoding/json writes it, without
// its reflection: the results file writes a JSON line for every row
// (report), and the ledger hashes every lead's JSON (ledger), on paths
// where encoding/json's reflection was most of the CPU. One encoder for
// both, so that they cannot drift apart; FuzzAppend holds it to
// encoding/json byte for byte.
package jsonstr

import "unicode/utf8"

const hex = "0123456789abcdef"

// Append appends s to b as a JSON string, escaped as encoding/json escapes
// it: '"' and '\\', control characters (\n, \r, \t, \b, \f by name, the
// others as \u00XX), U+2028 and U+2029, and invalid UTF-8 as U+FFFD. With
// escapeHTML, '<', '>' and '&' also become \u003c, \u003e and \u0026, as
// json.Marshal writes them; without, as an Encoder with SetEscapeHTML(false).
func Append(b []byte, s string, escapeHTML bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
