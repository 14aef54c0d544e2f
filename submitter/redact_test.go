package submitter

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/redact"
)

const (
	scrubID      = "client-9"
	echoedSecret = "p@ss w0rd+/=XyZ"
)

// secretLeaks returns the encodings of echoedSecret a token endpoint may
// echo, computed here independently of package redact.
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

func TestRedactCallError(t *testing.T) {
	cause := fmt.Errorf("malformed status %q: %w", "SSN 123-45-6789", context.Canceled)
	ce := &CallError{Op: "submitLead", Code: "E_07/07/1977", Message: "[E] lead 123 45 6789",
		Errors: []GraphQLError{{Message: "dob July 7, 1977", Code: "X987654321"}}, Err: cause}
	redactCallError(redact.New(lead.Input{SocialSecurityNumber: "123456789", DateOfBirth: "1977-07-07", LeadID: "L-100"}), ce)
	got := fmt.Sprintf("%s|%s|%s|%s|%s", ce.Code, ce.Message, ce.Errors[0].Message, ce.Errors[0].Code, ce.Err)
	want := `E_[REDACTED]|[E] lead [REDACTED]|dob [REDACTED]|X[REDACTED]|malformed status "SSN [REDACTED]": context canceled`
	if got != want {
		t.Errorf("redactCallError = %s, want %s", got, want)
	}
	if !errors.Is(ce, context.Canceled) {
		t.Errorf("redacted cause no longer unwraps to context.Canceled")
	}
}

// echoingTokenServer is a token endpoint that refuses every request with an
// error_description quoting the form body, the Authorization header, and
// the credentials as a Basic header would carry them.
func echoingTokenServer(t *testing.T, status int) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		basic := base64.StdEncoding.EncodeToString([]byte(form.Get("client_id") + ":" + form.Get("client_secret")))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{
			"error": "invalid_request",
			"error_description": "AADSTS900144: cannot read the request: body " + string(body) +
				"; Authorization " + r.Header.Get("Authorization") + "; as Basic auth: Basic " + basic +
				"; path /" + url.PathEscape(form.Get("client_secret")) + "; secret " + form.Get("client_secret"),
		})
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestTokenErrorNeverEchoesTheSecret(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusInternalServerError} {
		ts := echoingTokenServer(t, status)
		var logs bytes.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		c, err := New(ctx, Config{
			Endpoint: ts.URL + "/graphql", TokenURL: ts.URL + "/token", ClientID: scrubID, ClientSecret: echoedSecret,
			Scope: "api://x/.default", TokenRetries: 1, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.CheckAuth(ctx)
		cancel()
		c.Close()
		var ae *AuthError
		if err == nil || (status == http.StatusBadRequest) != errors.As(err, &ae) {
			t.Fatalf("HTTP %d: CheckAuth error = %v, want an AuthError only for the 400", status, err)
		}
		if status == http.StatusBadRequest && !strings.Contains(ae.Description, "client_secret=[REDACTED]") {
			t.Errorf("HTTP %d: description %q does not show the scrubbed form: the stand-in did not echo it", status, ae.Description)
		}
		out := err.Error() + "\n" + logs.String()
		for what, leak := range secretLeaks() {
			if strings.Contains(out, leak) {
				t.Errorf("HTTP %d: the error or log holds the secret %s (%q):\n%s", status, what, leak, out)
			}
		}
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
