package redact

import (
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://api.example.com/graphql", "https://api.example.com/graphql"},
		{"https://user:s3cret@api.example.com/graphql", "https://REDACTED@api.example.com/graphql"},
		{"https://token@push.example.com:9091", "https://REDACTED@push.example.com:9091"},
		{"https://login.example.com/t/oauth2/v2.0/token?code=s3cret&x", "https://login.example.com/t/oauth2/v2.0/token?code=REDACTED&REDACTED"},
		{"http://127.0.0.1:1/graphql#s3cret", "http://127.0.0.1:1/graphql#REDACTED"},
		{"http://[::1", "(unparsable URL)"},
	} {
		if got := URL(tc.in); got != tc.want {
			t.Errorf("URL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestURLsIn(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`Post "https://u:***@h/t?key=s3cret": dial tcp: refused`, `Post "https://REDACTED@h/t?key=REDACTED": dial tcp: refused`},
		{`see https://h/x?a=s3cret, then http://u:s3cret@h.`, `see https://h/x?a=REDACTED, then http://REDACTED@h.`},
		{"no url here, httpd", "no url here, httpd"},
		{"HTTPS://h/?k=s3cret", "https://h/?k=REDACTED"},
	} {
		got := URLsIn(tc.in)
		if got != tc.want {
			t.Errorf("URLsIn(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Contains(got, "s3cret") {
			t.Errorf("URLsIn(%q) keeps the secret", tc.in)
		}
	}
}

// FuzzURLsIn: a secret placed in a URL's user info or query is never
// in the redacted text.
func FuzzURLsIn(f *testing.F) {
	f.Add("Post \"", "h.example", "x", "\": refused")
	f.Add("", "h:1", "/p", "")
	f.Fuzz(func(t *testing.T, before, host, path, after string) {
		const secret = "Zq9sEcReT"
		if strings.Contains(before+host+path+after, secret) || strings.ContainsAny(host+path, " \t\r\n\"'<>`") {
			return // a URL in text ends at a space or a quote
		}
		for _, u := range []string{
			"https://user:" + secret + "@" + host + path,
			"http://" + host + path + "?k=" + secret,
		} {
			s := before + " " + u + " " + after
			if got := URLsIn(s); strings.Contains(got, secret) {
				t.Fatalf("URLsIn(%q) = %q keeps the secret", s, got)
			}
		}
	})
}
