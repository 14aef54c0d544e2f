package upload

import (
	"context"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/source"
	"github.com/bulkload/bulkload/submitter"
)

// TestAnswerWithoutCodeOrID: a createLead answer without a result code is
// no success (issue 18 item 6): the lead is read back by its id and takes
// its code, or the row is unverified; a qualified answer without an id is
// unverified; an unqualified one without an id stands.
func TestAnswerWithoutCodeOrID(t *testing.T) {
	readQualified := func(_ context.Context, id string) (lead.Result, submitter.Call, error) {
		return lead.Result{ID: id, ResultCode: 1015, Note: "Qualified; awaiting submission", BidValue: bid("30.00"), PartnerLeadID: "L1"}, submitter.Call{Attempts: 1}, nil
	}
	readNoCode := func(_ context.Context, id string) (lead.Result, submitter.Call, error) {
		return lead.Result{ID: id, PartnerLeadID: "L1"}, submitter.Call{Attempts: 1}, nil
	}
	readOther := func(_ context.Context, id string) (lead.Result, submitter.Call, error) {
		return lead.Result{ID: id, ResultCode: 1015, PartnerLeadID: "L9"}, submitter.Call{Attempts: 1}, nil
	}
	answer := func(res lead.Result) func(context.Context, lead.Input) (lead.Result, submitter.Call, error) {
		return func(context.Context, lead.Input) (lead.Result, submitter.Call, error) {
			return res, submitter.Call{Attempts: 1}, nil
		}
	}
	tests := []struct {
		name     string
		answer   lead.Result
		read     func(context.Context, string) (lead.Result, submitter.Call, error)
		want     lead.Status
		reads    int
		submits  int
		wantNote string
	}{
		{"null code, read back qualified: submitted", lead.Result{ID: "X1"}, readQualified, lead.StatusSubmitted, 1, 1, ""},
		{"null code, no Lead.Read: unverified", lead.Result{ID: "X1"}, nil, lead.StatusUnverified, 1, 0, "without a result code; could not read lead X1"},
		{"null code, read back without one: unverified", lead.Result{ID: "X1"}, readNoCode, lead.StatusUnverified, 1, 0, "has none either"},
		{"null code, read back another's: unverified", lead.Result{ID: "X1"}, readOther, lead.StatusUnverified, 1, 0, "belongs to leadId L9"},
		{"null code and id: unverified", lead.Result{}, readQualified, lead.StatusUnverified, 0, 0, "without a lead id"},
		{"qualified without an id: unverified", lead.Result{ResultCode: 1014}, readQualified, lead.StatusUnverified, 0, 0, "cannot be submitted"},
		{"unqualified without an id: processed", lead.Result{ResultCode: 1020}, readQualified, lead.StatusProcessed, 0, 0, "without a lead id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeAPI{create: answer(tc.answer), lead: tc.read}
			res, j, err := run(t, context.Background(), testConfig(), &fakeSource{items: validItems(1)}, api)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			_, submits, reads := api.calls()
			r := j.last()[1]
			if r.Status != tc.want || len(reads) != tc.reads || len(submits) != tc.submits {
				t.Errorf("row 1 = %s (reads %v, submits %v), want %s with %d reads and %d submits; note %q", r.Status, reads, submits, tc.want, tc.reads, tc.submits, r.Note)
			}
			if note := noteOf(r); !strings.Contains(note, tc.wantNote) || strings.Contains(strings.ToLower(note), "duplicate") {
				t.Errorf("row 1 note = %q, want it to contain %q (and no word a duplicate pattern would match)", note, tc.wantNote)
			}
			checkAccounting(t, res.Summary)
		})
	}
}

// TestEditedRowKeepsLead: a row whose lead an earlier run created, or may
// have, keeps it when its cells are invalid now (issue 18 item 3, issue 28
// item 3): created and submit_failed leads are submitted by id, finished
// rows stay, an unverified lead known by an id is read again (and
// submitted when it is the row's own), and a lead that may exist without
// an id (an ambiguous failed line, an unverified one) is unverified, not
// dropped as invalid; the summary names them all. A row whose createLead
// was refused (a failed line not ambiguous) is invalid.
func TestEditedRowKeepsLead(t *testing.T) {
	invalid := func(n int) source.Item {
		it := validItem(n)
		it.Row.Status = lead.StatusInvalid
		it.Row.Invalid = lead.RowErrors{{Row: n, Field: lead.ZipCode, Rule: "must be 5 digits"}}
		it.Input = lead.Input{}
		return it
	}
	prior := fakePrior{
		1: {Row: 1, LeadID: "L1", Status: lead.StatusCreated, ID: "X1", ResultCode: 1016},
		2: {Row: 2, LeadID: "L2", Status: lead.StatusSubmitFailed, ID: "X2", ResultCode: 1013, Error: "submitLead: HTTP 503"},
		3: {Row: 3, LeadID: "L3", Status: lead.StatusSubmitted, ID: "X3", ResultCode: 1014},
		4: {Row: 4, LeadID: "L4", Status: lead.StatusProcessed, ID: "X4", ResultCode: 1020},
		5: {Row: 5, LeadID: "L5", Status: lead.StatusFailed, Error: "createLead: HTTP 503"},
		6: {Row: 6, LeadID: "L6", Status: lead.StatusFailed, Ambiguous: true, Attempts: 1, Error: "createLead: no reply within 60s"},
		7: {Row: 7, LeadID: "L7", Status: lead.StatusUnverified, ID: "D7", ResultCode: 1002, Note: "Duplicate of lead X7", Attempts: 2},
		8: {Row: 8, LeadID: "L8", Status: lead.StatusUnverified, ID: "D8", ResultCode: 1002, Note: "Duplicate lead", Attempts: 2},
		9: {Row: 9, LeadID: "L9", Status: lead.StatusUnverified, ResultCode: 1015, Note: "Qualified", Attempts: 1},
	}
	cfg := testConfig()
	cfg.Prior = prior
	api := &fakeAPI{lead: func(_ context.Context, id string) (lead.Result, submitter.Call, error) {
		return lead.Result{ID: id, ResultCode: 1017, Note: "Qualified; awaiting submission", BidValue: bid("45.00"), PartnerLeadID: "L7"}, submitter.Call{Attempts: 1}, nil
	}}
	var items []source.Item
	for n := 1; n <= 9; n++ {
		items = append(items, invalid(n))
	}
	res, j, err := run(t, context.Background(), cfg, &fakeSource{items: items}, api)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	created, submits, reads := api.calls()
	if len(created) != 0 || len(submits) != 3 || len(reads) != 1 || reads[0] != "X7" {
		t.Errorf("createLead %v, submitLead %v, lead reads %v; want none created, X1, X2 and X7 submitted, X7 read", created, submits, reads)
	}
	last := j.last()
	for row, want := range map[int]lead.Status{1: lead.StatusSubmitted, 2: lead.StatusSubmitted, 5: lead.StatusInvalid, 7: lead.StatusSubmitted} {
		wantID := prior[row].ID
		if row == 7 {
			wantID = "X7"
		}
		if r := last[row]; r.Status != want || (want == lead.StatusSubmitted && (r.ID != wantID || r.ErrorText() != "")) {
			t.Errorf("row %d = %s id %q error %q, want %s with its lead %q", row, r.Status, r.ID, r.ErrorText(), want, wantID)
		}
	}
	for _, row := range []int{6, 9} {
		r := last[row]
		if r.Status != lead.StatusUnverified || !strings.Contains(r.Error, "may have made its lead") || !strings.Contains(r.Error, "zipCode: must be 5 digits") || len(r.Invalid) != 0 ||
			r.Attempts != prior[row].Attempts || r.Ambiguous != prior[row].Ambiguous || r.ResultCode != prior[row].ResultCode {
			t.Errorf("row %d = %+v; want unverified, saying its lead may exist and why its cells are not sent, the earlier line's attempts, mark and code kept", row, r)
		}
	}
	for _, row := range []int{3, 4, 8} {
		if _, ok := last[row]; ok {
			t.Errorf("row %d (finished, or unverified without a lead to read, earlier) was journalled again: %+v", row, last[row])
		}
	}
	if got := res.Summary.KeptLeads; got.Count != 8 || len(got.Rows) != 8 || got.Rows[0] != 1 || got.Rows[4] != 6 || got.Rows[7] != 9 {
		t.Errorf("KeptLeads = %+v, want rows 1-4 and 6-9", got)
	}
	if res.Summary.Submitted != 4 || res.Summary.Processed != 1 || res.Summary.Invalid != 1 || res.Summary.Unverified != 3 {
		t.Errorf("summary submitted %d processed %d invalid %d unverified %d, want 4, 1, 1, 3", res.Summary.Submitted, res.Summary.Processed, res.Summary.Invalid, res.Summary.Unverified)
	}
	checkAccounting(t, res.Summary)
}
