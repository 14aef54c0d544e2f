package lead

import (
	"strings"
	"testing"
)

func TestEscapeCell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK(\"http://x\",\"y\")"},
		{"-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"},
		{"+1", "+1"},
		{"+1+1", "'+1+1"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"'s-Hertogenbosch", "''s-Hertogenbosch"},
		{"-5", "-5"},
		{"-0.50", "-0.50"},
		{"-5.", "'-5."},
		{"-.5", "'-.5"},
		{"-", "'-"},
		{"-1e5", "'-1e5"},
		{"--5", "'--5"},
		{"a=1", "a=1"},
	} {
		got := EscapeCell(tc.in)
		if got != tc.want {
			t.Errorf("EscapeCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if back := UnescapeCell(got); back != tc.in {
			t.Errorf("UnescapeCell(EscapeCell(%q)) = %q", tc.in, back)
		}
	}
}

// FuzzEscapeCell: every escaped cell is safe to open (it begins with none of
// = + - @ tab CR unless it is a plain number) and unescapes to the original.
func FuzzEscapeCell(f *testing.F) {
	for _, s := range []string{"", "=1+1", "-5", "'x", "''", "-2+3+cmd|' /C calc'!A0", "\t", "+.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := EscapeCell(s)
		if UnescapeCell(e) != s {
			t.Fatalf("UnescapeCell(EscapeCell(%q)) = %q", s, UnescapeCell(e))
		}
		if e != "" && strings.ContainsRune("=+-@\t\r", rune(e[0])) && !isDecimal(e) {
			t.Fatalf("EscapeCell(%q) = %q begins with a formula character", s, e)
		}
		if (e != s) != (e != "" && e[0] == '\'') {
			t.Fatalf("EscapeCell(%q) = %q: escaped iff it begins with a quote is broken", s, e)
		}
	})
}
