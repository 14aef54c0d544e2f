package token

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

	"golang.org/x/oauth2"

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

func TestEarlyRefresh(t *testing.T) {
	tests := []struct {
		life, want time.Duration
	}{
		{3599 * time.Second, 5 * time.Minute},
		{3600 * time.Second, 5 * time.Minute},
		{10 * time.Minute, time.Minute},
		{4 * time.Second, 400 * time.Millisecond},
		{2 * time.Second, 200 * time.Millisecond},
		{24 * time.Hour, 5 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.life.String(), func(t *testing.T) {
			if got := earlyRefresh(tc.life); got != tc.want {
				t.Errorf("earlyRefresh(%v) = %v, want %v", tc.life, got, tc.want)
			}
		})
	}
}

func TestTokenClassify(t *testing.T) {
	const secret = "s3cr3t-value"
	c := &Cache{secret: redact.NewSecret("", secret)}
	re := func(status int, code, desc string) error {
		return fmt.Errorf("wrapped: %w", &oauth2.RetrieveError{
			Response:         &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status))},
			ErrorCode:        code,
			ErrorDescription: desc,
			Body:             []byte("body with " + secret),
		})
	}
	tests := []struct {
		name      string
		err       error
		wantFatal bool
		wantCode  string
		wantHint  string
	}{
		{"invalid_client", re(401, "invalid_client", "bad secret "+secret), true, "invalid_client", hintInvalidClient},
		{"invalid_scope", re(400, "invalid_scope", ""), true, "invalid_scope", hintInvalidScope},
		{"unauthorized_client", re(400, "unauthorized_client", ""), true, "unauthorized_client", hintUnauthorized},
		{"404 at the token URL", re(404, "", ""), true, "http_404", hintTokenURL},
		{"other 400", re(400, "invalid_request", ""), true, "invalid_request", hintOther},
		{"503 is retried", re(503, "", ""), false, "", ""},
		{"500 is retried", re(500, "server_error", ""), false, "", ""},
		{"429 is retried", re(429, "", ""), false, "", ""},
		{"network error is retried", errors.New("dial tcp: connection refused"), false, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ae := c.classify(tc.err)
			if (ae != nil) != tc.wantFatal {
				t.Fatalf("classify(%v) = %v, want fatal %v", tc.err, ae, tc.wantFatal)
			}
			if ae == nil {
				if s := c.scrub(tc.err).Error(); strings.Contains(s, secret) {
					t.Errorf("scrub(%v) = %q, contains the secret", tc.err, s)
				}
				return
			}
			if ae.Code != tc.wantCode || ae.Hint != tc.wantHint {
				t.Errorf("classify(%v) = code %q hint %q, want %q, %q", tc.err, ae.Code, ae.Hint, tc.wantCode, tc.wantHint)
			}
			var wrapped *AuthError
			if !errors.As(fmt.Errorf("createLead: %w", ae), &wrapped) {
				t.Errorf("errors.As(wrapped %v) = false, want the AuthError", ae)
			}
			if strings.Contains(ae.Error(), secret) {
				t.Errorf("AuthError.Error() = %q, contains the secret", ae.Error())
			}
			if !strings.Contains(ae.Error(), tc.wantHint) {
				t.Errorf("AuthError.Error() = %q, want the hint %q in it", ae.Error(), tc.wantHint)
			}
		})
	}
}

func TestDecodeInfo(t *testing.T) {
	fetched := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	enc := func(payload string) string {
		return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(payload)) + ".c2ln"
	}
	tests := []struct {
		name string
		tok  *oauth2.Token
		want Info
	}{
		{
			"jwt with expires_in",
			&oauth2.Token{AccessToken: enc(`{"aud":"sim-debt-core","roles":["Lead.Write","Lead.Read"],"appid":"cid","exp":1}`), ExpiresIn: 3599},
			Info{ExpiresAt: fetched.Add(3599 * time.Second), Roles: []string{"Lead.Write", "Lead.Read"}, Audience: "sim-debt-core", ClientID: "cid"},
		},
		{
			"jwt without expires_in uses exp, audience list, azp",
			&oauth2.Token{AccessToken: enc(`{"aud":["a","b"],"azp":"cid2","exp":1795000000}`)},
			Info{ExpiresAt: time.Unix(1795000000, 0), Audience: "a b", ClientID: "cid2"},
		},
		{
			"opaque token",
			&oauth2.Token{AccessToken: "opaque", ExpiresIn: 60},
			Info{ExpiresAt: fetched.Add(time.Minute), Opaque: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := decodeInfo(tc.tok, fetched)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || !got.ExpiresAt.Equal(tc.want.ExpiresAt) {
				t.Errorf("decodeInfo(%q) = %+v, want %+v", tc.name, got, tc.want)
			}
		})
	}
}

func TestTokenLifetime(t *testing.T) {
	tests := []struct {
		name string
		tok  *oauth2.Token
		want time.Duration
	}{
		{"ExpiresIn field", &oauth2.Token{ExpiresIn: 3599}, 3599 * time.Second},
		{"raw JSON number", (&oauth2.Token{}).WithExtra(map[string]any{"expires_in": float64(2)}), 2 * time.Second},
		{"raw string", (&oauth2.Token{}).WithExtra(map[string]any{"expires_in": "60"}), time.Minute},
		{"Expiry only", &oauth2.Token{Expiry: time.Now().Add(10*time.Second - time.Millisecond)}, 10 * time.Second},
		{"nothing", &oauth2.Token{}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tokenLifetime(tc.tok); got != tc.want {
				t.Errorf("tokenLifetime(%s) = %v, want %v", tc.name, got, tc.want)
			}
		})
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
		c := New(ctx, Config{
			TokenURL: ts.URL + "/token", ClientID: scrubID, ClientSecret: echoedSecret,
			Scope: "api://x/.default", Retries: 1, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		})
		_, err := c.Fetch(ctx)
		cancel()
		var ae *AuthError
		if err == nil || (status == http.StatusBadRequest) != errors.As(err, &ae) {
			t.Fatalf("HTTP %d: Fetch error = %v, want an AuthError only for the 400", status, err)
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
