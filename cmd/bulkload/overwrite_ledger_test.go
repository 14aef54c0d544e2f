//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

// TestOverwriteWithLedger: --overwrite replaces the results file, but with
// a ledger the leads an earlier run sent are not sent again (already_sent),
// and the messages that offer --overwrite say so instead of promising
// every lead again; --overwrite --resend sends them again. On main the
// refusal said "--overwrite to start over and send its leads again",
// while the overwrite sent nothing.
func TestOverwriteWithLedger(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	where := filepath.Join(dir, "state", "ledger.sqlite")
	input := filepath.Join(dir, "leads.csv")
	writeCSV(t, input, sampleRecords(t))
	results := filepath.Join(dir, "leads.results.csv")

	res, first := ledgerUpload(t, s, where, input, results)
	if res.code != app.ExitOK {
		t.Fatalf("first run: exit %d\n%s", res.code, res.stderr)
	}
	valid := num(first, "rowsRead") - num(first, "invalid")
	calls := createCalls(s)

	res, _ = ledgerUpload(t, s, where, input, results)
	if res.code != app.ExitUsage {
		t.Fatalf("rerun without --resume: exit %d, want %d\n%s", res.code, app.ExitUsage, res.stderr)
	}
	if strings.Contains(res.stderr, "send its leads again") || !strings.Contains(res.stderr, "--overwrite to start over (the leads the ledger holds as sent are not sent again but written already_sent; add --resend to send them again)") {
		t.Errorf("the refusal does not say what --overwrite does with a ledger:\n%s", res.stderr)
	}

	res, over := ledgerUpload(t, s, where, input, results, "--overwrite")
	if res.code != app.ExitOK {
		t.Fatalf("--overwrite: exit %d\n%s", res.code, res.stderr)
	}
	if got := num(over, "alreadySent"); got != valid {
		t.Errorf("--overwrite: %d rows already_sent, want %d", got, valid)
	}
	if got := createCalls(s); got != calls {
		t.Errorf("--overwrite: %d createLead calls, want none (%d before, %d after)", got-calls, calls, got)
	}

	res, again := ledgerUpload(t, s, where, input, results, "--overwrite", "--resend")
	if res.code != app.ExitOK {
		t.Fatalf("--overwrite --resend: exit %d\n%s", res.code, res.stderr)
	}
	if num(again, "alreadySent") != 0 || createCalls(s)-calls != valid {
		t.Errorf("--overwrite --resend: %d already_sent, %d createLead calls; want 0 and %d", num(again, "alreadySent"), createCalls(s)-calls, valid)
	}
}

// createCalls is the number of createLead calls the service got.
func createCalls(s *sim) int {
	n := 0
	for _, c := range s.Stats().CreateCalls {
		n += c
	}
	return n
}
