package submitter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// replyTransport answers every request with one status and body.
type replyTransport struct {
	status int
	body   []byte
}

func (rt replyTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: rt.status, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(rt.body))}, nil
}

// FuzzOutcome feeds the outcomeLayer any reply to a createLead and checks
// the one rule of ambiguity: an attempt is handed up as an answer only when
// it is one (the result without errors, or only refusals and no result);
// anything else that may have been processed (a 2xx that is no answer, a
// 5xx but the service's own 503, a 503 whose body is not the service's
// GraphQL refusal, under each rule) is ambiguous; nothing panics.
func FuzzOutcome(f *testing.F) {
	for _, seed := range []struct {
		status int
		body   string
	}{
		{200, `{"data":{"createLead":{"id":"a","resultCode":1013,"note":"Qualified","partnerLeadId":"L1","bidValue":"$15.00"}}}`},
		{200, `{"data":{"createLead":{"id":"a","resultCode":"1013"}}}`},
		{200, `{"data":{"createLead":{"id":"a","resultCode":1.013e22}}}`},
		{200, `{"data":{"createLead":{"id":"a","resultCode":null}}}`},
		{200, `{"data":{"createLead":null},"errors":[{"message":"zipCode: must be 5 digits","extensions":{"code":"BAD_USER_INPUT"}}]}`},
		{200, `{"data":{"createLead":null},"errors":[{"message":"boom"}]}`},
		{200, `{"data":{"createLead":{"id":"a","resultCode":1020}},"errors":[{"message":"late"}]}`},
		{200, `<html>hello</html>`},
		{200, `{"data":{"createLead":{"id":"a"`},
		{200, `{}`},
		{500, `{"errors":[{"message":"Internal server error","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]}`},
		{503, `{"errors":[{"message":"busy","extensions":{"code":"SERVICE_UNAVAILABLE"}}]}`},
		{524, `<html>timeout</html>`},
		{503, `upstream connect error or disconnect/reset before headers. reset reason: connection termination`},
		{503, ``},
		{503, `{"errors":[],"data":null}`},
		{503, `{"Errors":[{"message":"busy"}]}`},
		{429, ``},
		{400, `{"errors":[{"message":"bad"}]}`},
	} {
		f.Add(seed.status, []byte(seed.body))
	}
	refusals := refusalSet(nil)
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 200 || status > 599 {
			return
		}
		rule := Ambiguous503(len(body) % 3)
		l := &outcomeLayer{next: replyTransport{status: status, body: body}, now: time.Now, refusals: refusals, ambiguous503: rule}
		ctx := withHandOff(context.Background(), &handOff{spec: callSpec{op: "createLead"}})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/graphql", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := l.RoundTrip(req)
		var ae *attemptError
		switch {
		case err == nil:
			if resp == nil || status < 200 || status > 299 {
				t.Fatalf("HTTP %d handed up as an answer", status)
			}
			rb := replyOf(resp)
			if rb == nil {
				t.Fatalf("HTTP %d handed up without what the layer decoded", status)
			}
			usable := l.usable(rb.result, rb.errs)
			if rb.ambiguous == usable {
				t.Fatalf("HTTP %d %q: ambiguous %v, usable %v: want exactly one", status, body, rb.ambiguous, usable)
			}
		case !errors.As(err, &ae):
			t.Fatalf("error %v is not an attemptError", err)
		case ae.ambiguous != mayBeProcessed(status, true, status == 503 && isGraphQLRefusal(body), rule):
			t.Fatalf("HTTP %d %q under %v failed as %v with ambiguous %v, want %v", status, body, rule, err, ae.ambiguous, !ae.ambiguous)
		}
	})
}

// isGraphQLRefusal is the fuzz test's own reading of a body as the
// service's GraphQL refusal, by the interface's words: a JSON object whose
// errors are a non-empty array of objects with a message and an
// extensions.code (strings), and whose data is absent or null.
func isGraphQLRefusal(body []byte) bool {
	var env struct {
		Data   json.RawMessage
		Errors []*struct {
			Message    string
			Extensions struct{ Code string }
		}
	}
	if !bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{")) || json.Unmarshal(body, &env) != nil {
		return false
	}
	return len(env.Errors) > 0 && (env.Data == nil || string(env.Data) == "null")
}
