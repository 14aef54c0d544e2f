package token

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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

// TestReplyLayerOnlyRecords: the check of a token reply hands the answer
// on as it came, whatever it finds (never an error for an answer), and
// records a malformed expires_in, which Fetch returns as a *ReplyError
// after one request: a malformed answer stays malformed.
func TestReplyLayerOnlyRecords(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"token_type":"Bearer","expires_in":1.5,"access_token":"tok"}`)
	}))
	t.Cleanup(srv.Close)
	var bad atomic.Pointer[ReplyError]
	l := &replyLayer{next: http.DefaultTransport, bad: &bad}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := l.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip() = %v, want the answer", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"expires_in":1.5`) || bad.Load() == nil || bad.Load().Value != "1.5" {
		t.Errorf("answer %q, recorded %+v; want it whole, and expires_in 1.5 recorded", body, bad.Load())
	}
	c := New(t.Context(), Config{TokenURL: srv.URL, ClientID: "id", ClientSecret: "secret", Scope: "s", BackoffBase: time.Millisecond, BackoffMax: time.Millisecond})
	requests.Store(0)
	_, err = c.Fetch(t.Context())
	var tre *ReplyError
	if !errors.As(err, &tre) || tre.Field != "expires_in" || requests.Load() != 1 {
		t.Errorf("Fetch() = %v after %d requests, want a ReplyError of expires_in after 1", err, requests.Load())
	}
}
