package submitter

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"absent", "", 0, false},
		{"seconds", "3", 3 * time.Second, true},
		{"zero", "0", 0, true},
		{"spaces", " 2 ", 2 * time.Second, true},
		{"negative", "-1", 0, false},
		{"garbage", "soon", 0, false},
		{"http date", now.Add(7 * time.Second).Format(http.TimeFormat), 7 * time.Second, true},
		{"date in the past", now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"huge seconds capped", "999999999", maxRetryAfter, true},
		{"seconds past int64", "99999999999999999999", maxRetryAfter, true},
		{"fractional", "1.5", 1500 * time.Millisecond, true},
		{"fractional, rounded up to the millisecond", "0.0001", time.Millisecond, true},
		{"fractional huge", "99999999999999999999.5", maxRetryAfter, true},
		{"fraction without digits", "1.", 0, false},
		{"negative fraction", "-1.5", 0, false},
		{"exponent", "1e3", 0, false},
		{"plus sign", "+3", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseRetryAfter(tc.in, now)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("parseRetryAfter(%q) = %v, %v, want %v, %v", tc.in, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestClassifyStatus(t *testing.T) {
	tests := []struct {
		status int
		want   outcome
	}{
		{200, outcomeSuccess},
		{204, outcomeSuccess},
		{301, outcomePermanent},
		{400, outcomePermanent},
		{401, outcomeReauth},
		{403, outcomePermanent},
		{404, outcomePermanent},
		{413, outcomePermanent},
		{429, outcomeRetry},
		{500, outcomePermanent},
		{502, outcomeRetry},
		{503, outcomeRetry},
		{504, outcomeRetry},
		{524, outcomePermanent},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			if got := classifyStatus(tc.status); got != tc.want {
				t.Errorf("classifyStatus(%d) = %v, want %v", tc.status, got, tc.want)
			}
		})
	}
}

func TestMayBeProcessed(t *testing.T) {
	const (
		dflt = Ambiguous503NotGraphQL
		all  = Ambiguous503All
		none = Ambiguous503None
	)
	tests := []struct {
		name          string
		status        int
		wrote, answer bool
		rule          Ambiguous503
		want          bool
	}{
		{"nothing written", 0, false, false, dflt, false},
		{"no reply after the request", 0, true, false, dflt, true},
		{"no reply, rule none", 0, true, false, none, true},
		{"200 answer", 200, true, true, dflt, false},
		{"200 no usable answer", 200, true, false, dflt, true},
		{"200 answer, rule all", 200, true, true, all, false},
		{"301", 301, true, false, dflt, false},
		{"400", 400, true, false, dflt, false},
		{"401", 401, true, false, dflt, false},
		{"413", 413, true, false, dflt, false},
		{"429", 429, true, false, dflt, false},
		{"429 not GraphQL", 429, true, false, all, false},
		{"500", 500, true, false, dflt, true},
		{"500 GraphQL", 500, true, true, dflt, true},
		{"502", 502, true, false, dflt, true},
		{"502 GraphQL", 502, true, true, dflt, true},
		{"502, rule none", 502, true, false, none, true},
		{"503 the service's GraphQL refusal", 503, true, true, dflt, false},
		{"503 not GraphQL (a proxy's page)", 503, true, false, dflt, true},
		{"503 GraphQL, rule all", 503, true, true, all, true},
		{"503 not GraphQL, rule none", 503, true, false, none, false},
		{"504", 504, true, false, dflt, true},
		{"504 GraphQL", 504, true, true, dflt, true},
		{"524", 524, true, false, dflt, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mayBeProcessed(tc.status, tc.wrote, tc.answer, tc.rule); got != tc.want {
				t.Errorf("mayBeProcessed(%d, %v, %v, %v) = %v, want %v", tc.status, tc.wrote, tc.answer, tc.rule, got, tc.want)
			}
		})
	}
}

func TestParseAmbiguous503(t *testing.T) {
	for _, a := range []Ambiguous503{Ambiguous503NotGraphQL, Ambiguous503All, Ambiguous503None} {
		if got, err := ParseAmbiguous503(a.String()); err != nil || got != a {
			t.Errorf("ParseAmbiguous503(%q) = %v, %v; want %v", a.String(), got, err, a)
		}
	}
	for _, bad := range []string{"", "NONE", "graphql", "503"} {
		if _, err := ParseAmbiguous503(bad); err == nil {
			t.Errorf("ParseAmbiguous503(%q) succeeded, want an error", bad)
		}
	}
}

// TestOutcome503 is issue 28 item 1 at the layer that owns it: a 503 is
// the service's throttling only when its body is the service's GraphQL
// refusal (errors, no data); any other body may follow a commit: a proxy's
// page after the backend reset the stream.
func TestOutcome503(t *testing.T) {
	tests := []struct {
		name, body string
		want       bool // ambiguous under the default rule
	}{
		{"the service's GraphQL refusal", `{"errors":[{"message":"Service temporarily unavailable","extensions":{"code":"SERVICE_UNAVAILABLE"}}]}`, false},
		{"GraphQL refusal with data null", `{"errors":[{"message":"overloaded"}],"data":null}`, false},
		{"GraphQL refusal after white space", " \r\n{\"errors\":[{\"message\":\"busy\"}]}", false},
		{"Envoy's text line", "upstream connect error or disconnect/reset before headers. reset reason: connection termination", true},
		{"a gateway's HTML page", "<html><head><title>503 Service Unavailable</title></head></html>", true},
		{"empty", "", true},
		{"JSON that is no GraphQL answer", `{"message":"no healthy upstream"}`, true},
		{"an empty errors array", `{"errors":[]}`, true},
		{"errors and data", `{"errors":[{"message":"late"}],"data":{"createLead":null}}`, true},
		{"errors that do not decode", `{"errors":"busy"}`, true},
		{"truncated GraphQL", `{"errors":[{"message":"Service temp`, true},
		{"a JSON array", `[{"errors":[{"message":"busy"}]}]`, true},
	}
	for _, tc := range tests {
		for _, rule := range []Ambiguous503{Ambiguous503NotGraphQL, Ambiguous503All, Ambiguous503None} {
			t.Run(tc.name+"/"+rule.String(), func(t *testing.T) {
				cl := &classifier{refusals: refusalSet(nil), ambiguous503: rule}
				v := cl.classify(&reply{status: 503, statusText: "503 Service Unavailable", body: []byte(tc.body)}, "createLead", time.Now())
				want := tc.want
				switch rule {
				case Ambiguous503All:
					want = true
				case Ambiguous503None:
					want = false
				}
				if v.ambiguous != want || v.kind != outcomeRetry || v.outage {
					t.Errorf("503 %q under %v: ambiguous %v, kind %v, outage %v; want ambiguous %v, retried, no outage", tc.body, rule, v.ambiguous, v.kind, v.outage, want)
				}
			})
		}
	}
}

func TestCallErrorMessages(t *testing.T) {
	tests := []struct {
		name string
		err  *CallError
		want string
	}{
		{"http status", &CallError{Op: "createLead", Status: 500, Message: "HTTP 500 Internal Server Error", Attempts: 1},
			"createLead: HTTP 500 Internal Server Error after 1 attempt"},
		{"retries exhausted", &CallError{Op: "submitLead", Status: 503, Message: "HTTP 503 Service Unavailable", Attempts: 5},
			"submitLead: HTTP 503 Service Unavailable after 5 attempts"},
		{"graphql refusal", &CallError{Op: "submitLead", Status: 200, Message: joinGraphQLErrors([]GraphQLError{{Message: "lead x already submitted", Code: "SUBMIT_REFUSED"}, {Message: "second"}}),
			Errors: []GraphQLError{{}, {}}, Attempts: 1},
			"submitLead: GraphQL error [SUBMIT_REFUSED] lead x already submitted; second"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
			if IsFatal(tc.err) {
				t.Errorf("IsFatal(%v) = true, want false", tc.err)
			}
		})
	}
}

// FuzzParseRetryAfter: whatever a service writes in Retry-After, the wait
// is between 0 and maxRetryAfter, and a header of digits, with or without
// a fraction, is always read.
func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	for _, s := range []string{"", "2", "1.5", "99999999999999999999", "0.0001", now.Add(time.Hour).Format(http.TimeFormat), "soon", "-1", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := parseRetryAfter(v, now)
		if d < 0 || d > maxRetryAfter || (!ok && d != 0) {
			t.Fatalf("parseRetryAfter(%q) = %v, %v: want a wait in [0, %v]", v, d, ok, maxRetryAfter)
		}
		w, fr, _ := strings.Cut(strings.TrimSpace(v), ".")
		if digits(w) && (fr == "" && !strings.Contains(v, ".") || digits(fr)) && !ok {
			t.Fatalf("parseRetryAfter(%q) = not read, want seconds read", v)
		}
	})
}
