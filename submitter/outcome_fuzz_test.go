package submitter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// FuzzOutcome feeds classify any reply to a createLead and checks the one
// rule of ambiguity: an attempt is a success only for a 2xx, and then it is
// ambiguous exactly when it is no answer (an answer: the result without
// errors, or only refusals and no result); anything else that may have
// been processed (a 2xx that is no answer, a 5xx but the service's own
// 503, a 503 whose body is not the service's GraphQL refusal, under each
// rule) is ambiguous; nothing panics.
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
		cl := &classifier{refusals: refusals, ambiguous503: rule}
		v := cl.classify(&reply{status: status, statusText: fmt.Sprint(status), header: http.Header{}, body: body}, "createLead", time.Now())
		switch {
		case v.kind == outcomeSuccess:
			if status < 200 || status > 299 {
				t.Fatalf("HTTP %d classified a success", status)
			}
			usable := cl.usable(v.data.of("createLead"), v.errs)
			if v.ambiguous == usable {
				t.Fatalf("HTTP %d %q: ambiguous %v, usable %v: want exactly one", status, body, v.ambiguous, usable)
			}
		case v.ambiguous != mayBeProcessed(status, true, status == 503 && isGraphQLRefusal(body), rule):
			t.Fatalf("HTTP %d %q under %v failed as %v with ambiguous %v, want %v", status, body, rule, v.Error(), v.ambiguous, !v.ambiguous)
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
