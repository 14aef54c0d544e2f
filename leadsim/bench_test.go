package leadsim

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// BenchmarkCreateLead measures createLead calls through the whole handler
// (token check, JSON, gqlgen, workflow) with no latency configured: in
// process, without a network, so it shows the simulator's own cost.
func BenchmarkCreateLead(b *testing.B) {
	srv, err := New(Options{SigningKey: testKey(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	ts := httptest.NewServer(h)
	defer ts.Close()
	sm := &sim{Server: srv, URL: ts.URL}
	tok := sm.defaultToken(&testing.T{})
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := &discardWriter{h: http.Header{}}
		for pb.Next() {
			i := n.Add(1)
			body := fmt.Sprintf(`{"query":%q,"variables":{"input":{"dateOfBirth":"1985-06-15","email":"b%d@example.com","homePhone":"5550100000","leadId":"b-%d","socialSecurityNumber":"%09d","termsConsent":true,"loanAmount":5000}}}`,
				createDoc, i, i, 100000000+i)
			req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader([]byte(body)))
			req.Header.Set("Authorization", "Bearer "+tok)
			w.reset()
			h.ServeHTTP(w, req)
			if w.status != http.StatusOK {
				b.Fatalf("createLead status %d", w.status)
			}
		}
	})
}

type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) reset() {
	clear(w.h)
	w.status = 0
}
func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	return io.Discard.Write(b)
}
func (w *discardWriter) WriteHeader(s int) { w.status = s }
