package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/leadsim/simtest"
)

// reply is an HTTP answer as a test proxy writes it.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// alterFunc turns the service's answer to one createLead (already
// processed: the lead exists) into what the client gets. delay holds the
// answer back (longer than --timeout: no reply at all).
type alterFunc func(leadID string, r reply) (out reply, delay time.Duration)

// alteringSim is a leadsim behind a proxy that may alter the answers to
// createLead after the service processed them: a 500 after the commit, a
// body that does not decode, a timeout.
type alteringSim struct {
	*sim
	on atomic.Bool // alter while set
	// refuse answers every createLead 503 before the service sees it;
	// refuseSubmit every submitLead.
	refuse, refuseSubmit atomic.Bool
	alter                alterFunc
	mu                   sync.Mutex
	seen                 map[string]int // createLead calls by leadId
}

func startAlteringSim(t *testing.T, opts leadsim.Options, alter alterFunc) *alteringSim {
	t.Helper()
	a := &alteringSim{alter: alter, seen: map[string]int{}}
	a.on.Store(true)
	ss := simtest.StartHandler(t, opts, func(s *leadsim.Server) http.Handler { return a.handler(s.Handler()) })
	t.Cleanup(ss.HTTP.CloseClientConnections) // before ss closes
	a.sim = simOf(ss)
	return a
}

// handler serves h, altering or refusing the calls the test asks for.
func (a *alteringSim) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/graphql" || !a.on.Load() && !a.refuse.Load() && !a.refuseSubmit.Load() {
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
		if json.Unmarshal(body, &req) == nil && strings.Contains(req.Query, "submitLead") && a.refuseSubmit.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"errors":[{"message":"Service temporarily unavailable","extensions":{"code":"SERVICE_UNAVAILABLE"}}]}`)
			return
		}
		if json.Unmarshal(body, &req) != nil || !strings.Contains(req.Query, "createLead") || !a.on.Load() && !a.refuse.Load() {
			h.ServeHTTP(w, r)
			return
		}
		if a.refuse.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"errors":[{"message":"Service temporarily unavailable","extensions":{"code":"SERVICE_UNAVAILABLE"}}]}`)
			return
		}
		a.mu.Lock()
		a.seen[req.Variables.Input.LeadID]++
		a.mu.Unlock()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		out, delay := a.alter(req.Variables.Input.LeadID, reply{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()})
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		for k, v := range out.header {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(out.status)
		w.Write(out.body)
	})
}

// qualifyingRows writes the first n rows of samples/leads.csv that qualify
// to a file of their own, and returns its path.
func qualifyingRows(t *testing.T, dir string, n int) string {
	t.Helper()
	recs := readCSVFile(t, filepath.Join(samples, "leads.csv"))
	exp := readExpected(t)
	out := [][]string{recs[0]}
	for i, rec := range recs[1:] {
		if exp[i+1].Submitted && len(out) <= n {
			out = append(out, rec)
		}
	}
	path := filepath.Join(dir, "qualified.csv")
	w, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := csv.NewWriter(w).WriteAll(out); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// jsonReply is a 200 answer with a JSON body.
func jsonReply(status int, body string) reply {
	return reply{status: status, header: http.Header{"Content-Type": {"application/json"}}, body: []byte(body)}
}
