package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

const (
	scrubID      = "client-9"
	echoedSecret = "p@ss w0rd+/=XyZ"
)

// secretLeaks returns the encodings of echoedSecret a token endpoint may
// echo, computed here independently of secretForms.
func secretLeaks() map[string]string {
	basic := func(id, secret string) string { return base64.StdEncoding.EncodeToString([]byte(id + ":" + secret)) }
	return map[string]string{
		"raw":                     echoedSecret,
		"form-encoded":            url.QueryEscape(echoedSecret),
		"path-escaped":            url.PathEscape(echoedSecret),
		"basic of id:secret":      basic(scrubID, echoedSecret),
		"basic, x/oauth2 escaped": basic(url.QueryEscape(scrubID), url.QueryEscape(echoedSecret)),
		"base64 of the secret":    base64.StdEncoding.EncodeToString([]byte(echoedSecret)),
		"fragment of the secret":  "w0rd",
	}
}

func TestScrubSecret(t *testing.T) {
	forms := secretForms(scrubID, echoedSecret)
	other := base64.StdEncoding.EncodeToString([]byte("someone:else"))
	cases := []struct{ name, in, want string }{
		{"form body", "bad request: grant_type=client_credentials&client_id=client-9&client_secret=p%40ss+w0rd%2B%2F%3DXyZ&scope=x",
			"bad request: grant_type=client_credentials&client_id=client-9&client_secret=[REDACTED]&scope=x"},
		{"raw", "secret p@ss w0rd+/=XyZ was wrong", "secret [REDACTED] was wrong"},
		{"path-escaped", "at /p@ss%20w0rd+%2F=XyZ", "at /[REDACTED]"},
		{"basic header", "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("client-9:p@ss w0rd+/=XyZ")), "Authorization: Basic [REDACTED]"},
		{"anyone's basic credential", "header Basic " + other + " refused", "header Basic [REDACTED] refused"},
		{"any client_secret value", `{"client_secret": "hunter2", "x":1}`, `{"client_secret": "[REDACTED]", "x":1}`},
		{"client_secret named, no value", "client_secret is missing; basic validation failed", "client_secret is missing; basic validation failed"},
		{"AADSTS text", "AADSTS7000215: Invalid client secret provided.", "AADSTS7000215: Invalid client secret provided."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := scrubSecret(tc.in, forms); got != tc.want {
				t.Errorf("scrubSecret(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzScrubSecret checks that for any client id and secret, a token
// endpoint's text quoting the secret in any of its encodings, anywhere,
// comes out without any of them.
//
//	go test -run '^$' -fuzz FuzzScrubSecret -fuzztime 10m ./redact
func FuzzScrubSecret(f *testing.F) {
	f.Add("client-9", "p@ss w0rd+/=XyZ", "error: ", " was sent", uint8(0))
	f.Add("id", "abcd", "client_secret=", "&x=1", uint8(3))
	f.Add("a:b", "s3cr3t%20", "Basic ", "", uint8(5))
	f.Fuzz(func(t *testing.T, id, secret, before, after string, which uint8) {
		if len(secret) < 4 || strings.ContainsAny(secret, "[]") {
			return
		}
		leaks := []string{
			secret, url.QueryEscape(secret), url.PathEscape(secret),
			base64.StdEncoding.EncodeToString([]byte(id + ":" + secret)),
			base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id) + ":" + url.QueryEscape(secret))),
			base64.RawURLEncoding.EncodeToString([]byte(id + ":" + secret)),
		}
		s := before + leaks[int(which)%len(leaks)] + after
		out := scrubSecret(s, secretForms(id, secret))
		for _, l := range leaks {
			if strings.Contains(out, l) {
				t.Fatalf("scrubSecret(%q) = %q: still holds %q", s, out, l)
			}
		}
	})
}
