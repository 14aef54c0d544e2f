// Package alterproxy is a proxy in front of a simulator that alters or
// refuses its answers, for the end-to-end tests of app and cmd/bulkload of
// what an upload makes of an answer it cannot trust: a 500 after the
// commit, a body that does not decode, a timeout. Both test packages had
// a copy of it.
package alterproxy

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Reply is an HTTP answer as the proxy writes it.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// AlterFunc turns the service's answer to one createLead (already
// processed: the lead exists) into what the client gets. delay holds the
// answer back (longer than --timeout: no reply at all).
type AlterFunc func(leadID string, r Reply) (out Reply, delay time.Duration)

// Proxy alters the answers to createLead after the service processed
// them while On is set, and refuses calls before the service sees them
// while Refuse or RefuseSubmit is.
type Proxy struct {
	On atomic.Bool // alter while set
	// Refuse answers every createLead 503 before the service sees it;
	// RefuseSubmit every submitLead.
	Refuse, RefuseSubmit atomic.Bool

	alter AlterFunc
	mu    sync.Mutex
	seen  map[string]int // createLead calls by leadId
}

// New is a Proxy that alters with alter, On set.
func New(alter AlterFunc) *Proxy {
	p := &Proxy{alter: alter, seen: map[string]int{}}
	p.On.Store(true)
	return p
}

// Seen is how many createLeads of leadID reached the proxy while it
// altered or refused.
func (p *Proxy) Seen(leadID string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[leadID]
}

// Handler serves h, altering or refusing the calls the test asks for.
func (p *Proxy) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/graphql" || !p.On.Load() && !p.Refuse.Load() && !p.RefuseSubmit.Load() {
			h.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			Query     string `json:"query"`
			Variables struct {
				Input struct {
					LeadID string `json:"leadId"`
				} `json:"input"`
			} `json:"variables"`
		}
		if json.Unmarshal(body, &req) == nil && strings.Contains(req.Query, "submitLead") && p.RefuseSubmit.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"errors":[{"message":"Service temporarily unavailable","extensions":{"code":"SERVICE_UNAVAILABLE"}}]}`)
			return
		}
		if json.Unmarshal(body, &req) != nil || !strings.Contains(req.Query, "createLead") || !p.On.Load() && !p.Refuse.Load() {
			h.ServeHTTP(w, r)
			return
		}
		if p.Refuse.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"errors":[{"message":"Service temporarily unavailable","extensions":{"code":"SERVICE_UNAVAILABLE"}}]}`)
			return
		}
		p.mu.Lock()
		p.seen[req.Variables.Input.LeadID]++
		p.mu.Unlock()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		out, delay := p.alter(req.Variables.Input.LeadID, Reply{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()})
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		for k, v := range out.Header {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(out.Status)
		w.Write(out.Body)
	})
}

// JSONReply is an answer of status with a JSON body.
func JSONReply(status int, body string) Reply {
	return Reply{Status: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)}
}
