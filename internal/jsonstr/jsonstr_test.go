package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// want is encoding/json's encoding of s, with or without HTML escaping.
func want(t *testing.T, s string, escapeHTML bool) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestAppend compares Append with encoding/json, HTML escaping on and off.
func TestAppend(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\`, "\x00\x01\x1f\x7f", "\n\r\t\b\f", "é✓😀", "\u2028\u2029", "bad\xffutf8\xc3", "<&>", "a<b&c>d"} {
		for _, html := range []bool{false, true} {
			if got, w := string(Append(nil, s, html))+"\n", want(t, s, html); got != w {
				t.Errorf("Append(%q, escapeHTML %v) = %s, want %s", s, html, got, w)
			}
		}
	}
	if got := string(Append([]byte("x:"), "y", false)); got != `x:"y"` {
		t.Errorf("Append after x: = %s, want x:\"y\"", got)
	}
}

// FuzzAppend: Append writes encoding/json's bytes for any string, HTML
// escaping on and off.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "\x00\x1f\x7f", "é\u2028\xff", "\n\r\t\b\f", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{false, true} {
			if got, w := string(Append(nil, s, html))+"\n", want(t, s, html); got != w {
				t.Fatalf("Append(%q, escapeHTML %v) = %s, want %s", s, html, got, w)
			}
		}
	})
}
