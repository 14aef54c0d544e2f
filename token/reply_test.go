package token

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckExpiresIn(t *testing.T) {
	for _, tc := range []struct {
		raw string
		ok  bool
	}{
		{``, true}, {`null`, true}, {`3599`, true}, {`"3600"`, true}, {`0`, true},
		{`99999999999`, true}, // capped by x/oauth2; the first 401 replaces the token
		{`99999999999999999999`, false}, {`-0`, true},
		{`"abc"`, false}, {`1.5`, false}, {`"1.5"`, false}, {`1e12`, false}, {`1E3`, false},
		{`-5`, true}, {`"-5"`, true}, {`-1.5`, false}, {`true`, false}, {`{}`, false}, {`[]`, false}, {`""`, false},
	} {
		err := checkExpiresIn(json.RawMessage(tc.raw))
		if (err == nil) != tc.ok {
			t.Errorf("checkExpiresIn(%s) = %v, want ok %v", tc.raw, err, tc.ok)
		}
	}
}

// FuzzCheckExpiresIn: whatever the reply holds, checkExpiresIn accepts it
// only when x/oauth2 can read it as a whole number (json.Number.Int64, as
// x/oauth2's expirationTime does, a string holding a number included).
func FuzzCheckExpiresIn(f *testing.F) {
	for _, s := range []string{`3599`, `"3600"`, `1.5`, `1e12`, `"abc"`, `-1`, `null`, `99999999999999999999`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return // the reply would not be JSON at all
		}
		err := checkExpiresIn(json.RawMessage(raw))
		readable := strings.TrimSpace(raw) == "null"
		var n json.Number
		if json.Unmarshal([]byte(raw), &n) == nil && n != "" {
			_, perr := n.Int64() // x/oauth2's expirationTime
			readable = perr == nil
		}
		if err == nil && !readable {
			t.Fatalf("checkExpiresIn(%s) accepted what x/oauth2 cannot read as a lifetime", raw)
		}
		if err != nil && readable {
			t.Fatalf("checkExpiresIn(%s) = %v, but x/oauth2 reads it as a whole number", raw, err)
		}
	})
}
