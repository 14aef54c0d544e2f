package app

import (
	"net/http"
	"testing"

	"github.com/bulkload/bulkload/internal/alterproxy"
	"github.com/bulkload/bulkload/internal/resultstest"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/leadsim/simtest"
)

// A simulator behind a proxy that alters its answers (internal/alterproxy,
// which cmd/bulkload's ambiguity_test.go uses too), for the tests of what
// an upload makes of an answer it cannot trust.

// reply and alterFunc are internal/alterproxy's, under the short names
// the tests use.
type (
	reply     = alterproxy.Reply
	alterFunc = alterproxy.AlterFunc
)

// alteringSim is a leadsim behind a proxy that may alter the answers to
// createLead after the service processed them (alterproxy.Proxy: On,
// Refuse, RefuseSubmit, Seen).
type alteringSim struct {
	*simtest.Server
	*alterproxy.Proxy
}

func startAlteringSim(t *testing.T, opts leadsim.Options, alter alterFunc) *alteringSim {
	t.Helper()
	p := alterproxy.New(alter)
	ss := simtest.StartHandler(t, opts, func(s *leadsim.Server) http.Handler { return p.Handler(s.Handler()) })
	t.Cleanup(ss.HTTP.CloseClientConnections) // before ss closes
	return &alteringSim{Server: ss, Proxy: p}
}

// qualifyingRows writes the first n rows of samples/leads.csv that qualify
// to a file of their own, and returns its path (resultstest.WriteQualifying).
func qualifyingRows(t *testing.T, dir string, n int) string {
	return resultstest.WriteQualifying(t, samples, dir, n)
}

// jsonReply is an answer of status with a JSON body.
func jsonReply(status int, body string) reply { return alterproxy.JSONReply(status, body) }
