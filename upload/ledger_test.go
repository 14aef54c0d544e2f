package upload

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/ledger"
	"github.com/bulkload/bulkload/source"
	"github.com/bulkload/bulkload/submitter"
)

// ledgerRun runs the engine over items as one run of a real SQLite ledger
// (the package ledger's tests cover PostgreSQL): it begins a run, uploads,
// and ends it.
func ledgerRun(t *testing.T, l *ledger.Ledger, p ledger.ClaimPolicy, items []source.Item, api *fakeAPI) (Result, *fakeJournal) {
	t.Helper()
	r, err := l.BeginRun(context.Background(), ledger.RunInfo{Account: ledger.Account{Endpoint: "https://x/graphql", ClientID: "c"}, Command: "upload", Results: "/runs/x.results.csv"}, p)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Ledger = r
	res, j, err := run(t, context.Background(), cfg, &fakeSource{items: items}, api)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := r.End(context.Background(), 0, nil, ""); err != nil {
		t.Fatal(err)
	}
	checkAccounting(t, res.Summary)
	return res, j
}

func openLedger(t *testing.T) *ledger.Ledger {
	t.Helper()
	l, err := ledger.Open(context.Background(), ledger.Config{Where: filepath.Join(t.TempDir(), "ledger.sqlite"), Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestLedgerAcrossRuns: a second run of the same rows sends nothing (every
// row already_sent, naming the earlier run's lead); a cumulative export
// sends only its new rows; a row whose content changed under its leadId is
// a conflict unless the policy sends it.
func TestLedgerAcrossRuns(t *testing.T) {
	l := openLedger(t)
	api := &fakeAPI{create: qualified}
	ledgerRun(t, l, ledger.ClaimPolicy{}, validItems(3), api)
	if created, submits, _ := api.calls(); len(created) != 3 || len(submits) != 3 {
		t.Fatalf("first run: %d creates, %d submits, want 3 and 3", len(created), len(submits))
	}

	again := &fakeAPI{create: qualified}
	res, j := ledgerRun(t, l, ledger.ClaimPolicy{}, validItems(3), again)
	if created, submits, _ := again.calls(); len(created)+len(submits) != 0 {
		t.Errorf("second run of the same rows sent %v and submitted %v, want nothing", created, submits)
	}
	if res.Summary.AlreadySent != 3 || res.Summary.Qualified != 0 || res.Summary.BidCents != 0 {
		t.Errorf("second run: already sent %d, qualified %d, bids %d; want 3, 0, 0", res.Summary.AlreadySent, res.Summary.Qualified, res.Summary.BidCents)
	}
	r1 := j.last()[1]
	if r1.Status != lead.StatusAlreadySent || r1.ID != "id-L1" || r1.ResultCode != 1017 || r1.BidValue != "" ||
		!strings.Contains(r1.Note, "run 1 on ") || !strings.Contains(r1.Note, "bid 45.00, submitted") {
		t.Errorf("row 1 = %+v, want already_sent naming run 1, lead id-L1 and its bid in the note", r1)
	}

	cumulative := &fakeAPI{create: qualified}
	items := validItems(5)
	items[1].Input.FirstName = "Changed"
	res, j = ledgerRun(t, l, ledger.ClaimPolicy{}, items, cumulative)
	if created, _, _ := cumulative.calls(); !sameSet(created, []string{"L4", "L5"}) {
		t.Errorf("cumulative export sent %v, want only the new rows L4, L5", created)
	}
	if got := j.last()[2]; got.Status != lead.StatusConflict || !strings.Contains(got.Error, "other content") {
		t.Errorf("changed row 2 = %+v, want a conflict", got)
	}
	if res.Summary.Conflict != 1 || res.Summary.AlreadySent != 2 || res.Summary.Submitted != 2 {
		t.Errorf("summary: conflict %d, already sent %d, submitted %d; want 1, 2, 2", res.Summary.Conflict, res.Summary.AlreadySent, res.Summary.Submitted)
	}

	changed := &fakeAPI{create: qualified}
	ledgerRun(t, l, ledger.ClaimPolicy{ResendChanged: true}, items, changed)
	if created, _, _ := changed.calls(); !sameSet(created, []string{"L2"}) {
		t.Errorf("with ResendChanged sent %v, want only the changed row L2", created)
	}
}

// TestLedgerSubmitsWhatWasNot: a lead created, qualified, by a run that
// stopped before submitLead is submitted by the next run by its id,
// whatever its results file (none here), and never created again; a
// failed lead is sent again.
func TestLedgerSubmitsWhatWasNot(t *testing.T) {
	l := openLedger(t)
	failing := &fakeAPI{create: func(ctx context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
		if in.LeadID == "L2" {
			return lead.Result{}, submitter.Call{Attempts: 5}, &submitter.CallError{Op: "createLead", Status: 503, Message: "HTTP 503", Retryable: true, Attempts: 5}
		}
		return qualified(ctx, in)
	}, submit: func(context.Context, string) (lead.Result, submitter.Call, error) {
		return lead.Result{}, submitter.Call{Attempts: 1}, &submitter.CallError{Op: "submitLead", Status: 500, Message: "HTTP 500", Attempts: 1}
	}}
	ledgerRun(t, l, ledger.ClaimPolicy{}, validItems(2), failing)

	api := &fakeAPI{create: qualified}
	res, j := ledgerRun(t, l, ledger.ClaimPolicy{}, validItems(2), api)
	created, submits, _ := api.calls()
	if !sameSet(created, []string{"L2"}) || !sameSet(submits, []string{"id-L1", "id-L2"}) {
		t.Errorf("second run created %v and submitted %v; want L2 created, id-L1 and id-L2 submitted", created, submits)
	}
	if got := j.last()[1]; got.Status != lead.StatusSubmitted || got.ID != "id-L1" {
		t.Errorf("row 1 = %+v, want submitted by its earlier id", got)
	}
	if res.Summary.Submitted != 2 {
		t.Errorf("submitted %d, want 2", res.Summary.Submitted)
	}
}
