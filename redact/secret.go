package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// Secret is an OAuth 2.0 client's secret as Cut finds it in a token
// endpoint's free text (an error_description, a network error), which may
// quote the request it refused. A nil Secret knows no secret: Cut still
// removes any client_secret value and any Basic credential. A Secret is
// immutable after NewSecret and safe for concurrent use.
type Secret struct {
	forms []string
}

// NewSecret returns the Secret of client id's secret.
func NewSecret(id, secret string) *Secret {
	return &Secret{forms: secretForms(id, secret)}
}

// Cut returns s without any form of the secret (secretForms), the value of
// any client_secret parameter and the credentials of any HTTP Basic
// authorization it quotes, each replaced by Text.
func (sec *Secret) Cut(s string) string {
	if sec == nil {
		return scrubSecret(s, nil)
	}
	return scrubSecret(s, sec.forms)
}

// secretForms returns the ways the client secret can appear in a token
// endpoint's free text: as is, form-encoded (url.QueryEscape, as in the
// request body), path-escaped, and base64 of "id:secret" as an HTTP Basic
// Authorization header carries it (both with the raw values and with the
// query-escaped ones x/oauth2 sends), and base64 of the secret alone, in
// the standard and URL alphabets, padded or not. The longest come first, so
// that a form containing another is replaced whole.
func secretForms(id, secret string) []string {
	if secret == "" {
		return nil
	}
	forms := []string{secret, url.QueryEscape(secret), url.PathEscape(secret)}
	for _, plain := range []string{
		id + ":" + secret,
		url.QueryEscape(id) + ":" + url.QueryEscape(secret),
		secret,
	} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			forms = append(forms, enc.EncodeToString([]byte(plain)))
		}
	}
	out := forms[:0]
	seen := map[string]bool{}
	for _, f := range forms {
		if len(f) >= 4 && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	// Longest first.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// scrubSecret removes from a token endpoint's free text every form of the
// secret (secretForms), the value of any client_secret parameter
// (client_secret=..., "client_secret":"...") and the credentials of any
// HTTP Basic authorization it quotes, whatever secret they hold.
func scrubSecret(s string, forms []string) string {
	for _, f := range forms {
		s = strings.ReplaceAll(s, f, Text)
	}
	s = scrubAfter(s, "client_secret", true)
	s = scrubAfter(s, "basic ", false)
	return s
}

// scrubAfter replaces the value that follows each occurrence of key
// (compared without case). With assign, the key must be followed by = or :
// (quotes and spaces allowed around them); the value then runs to the next
// &, quote, comma, semicolon or space. Without, the value is the word of
// base64 characters right after key.
func scrubAfter(s, key string, assign bool) string {
	lower := strings.ToLower(s)
	var b strings.Builder
	last := 0
	for from := 0; ; {
		i := strings.Index(lower[from:], key)
		if i < 0 {
			break
		}
		j := from + i + len(key)
		from = j
		if assign {
			j = skip(s, j, `" `)
			if j >= len(s) || (s[j] != '=' && s[j] != ':') {
				continue
			}
			j = skip(s, j+1, `" `)
		}
		k := j
		for k < len(s) && valueByte(s[k], assign) {
			k++
		}
		if k == j || (!assign && !isBasicCredential(s[j:k])) {
			continue
		}
		b.WriteString(s[last:j])
		b.WriteString(Text)
		last, from = k, k
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func skip(s string, i int, set string) int {
	for i < len(s) && strings.IndexByte(set, s[i]) >= 0 {
		i++
	}
	return i
}

// valueByte reports whether c continues a parameter value (assign) or a
// base64 word.
func valueByte(c byte, assign bool) bool {
	if assign {
		return !strings.ContainsRune("&\"' ,;\t\r\n", rune(c))
	}
	return isDigit(c) || isLetter(c) || strings.IndexByte("+/=-_", c) >= 0
}

// isBasicCredential reports whether w is base64 of "id:secret", as an HTTP
// Basic authorization carries it (so that "basic validation" stays).
func isBasicCredential(w string) bool {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(w); err == nil && strings.IndexByte(string(b), ':') > 0 {
			return true
		}
	}
	return false
}
