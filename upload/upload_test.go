package upload

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/source"
	"github.com/bulkload/bulkload/submitter"
)

func TestFreshRows(t *testing.T) {
	tests := []struct {
		name     string
		cfg      func(*Config)
		api      *fakeAPI
		want     []lead.Status // journal lines of row 1, in order
		submits  int
		wantNote string
		wantErr  string
	}{
		{
			name: "not qualified: processed, no submitLead",
			want: []lead.Status{lead.StatusProcessed},
		},
		{
			name:    "qualified: created on disk before submitLead, then submitted",
			api:     &fakeAPI{create: qualified},
			want:    []lead.Status{lead.StatusCreated, lead.StatusSubmitted},
			submits: 1,
		},
		{
			name: "qualified with --no-submit: processed, no submitLead",
			cfg:  func(c *Config) { c.NoSubmit = true },
			api:  &fakeAPI{create: qualified},
			want: []lead.Status{lead.StatusProcessed},
		},
		{
			name: "createLead fails: failed with the call's error",
			api: &fakeAPI{create: func(context.Context, lead.Input) (lead.Result, submitter.Call, error) {
				return lead.Result{}, submitter.Call{Attempts: 5}, &submitter.CallError{Op: "createLead", Status: 503, Message: "HTTP 503", Retryable: true, Attempts: 5}
			}},
			want:    []lead.Status{lead.StatusFailed},
			wantErr: "createLead: HTTP 503 after 5 attempts",
		},
		{
			name: "submitLead fails: submit_failed, the lead's id kept",
			api: &fakeAPI{create: qualified, submit: func(context.Context, string) (lead.Result, submitter.Call, error) {
				return lead.Result{}, submitter.Call{Attempts: 1}, &submitter.CallError{Op: "submitLead", Status: 500, Message: "HTTP 500", Attempts: 1}
			}},
			want:    []lead.Status{lead.StatusCreated, lead.StatusSubmitFailed},
			submits: 1,
			wantErr: "submitLead: HTTP 500",
		},
		{
			name: "submitLead answers already submitted: submitted",
			api: &fakeAPI{create: qualified, submit: func(context.Context, string) (lead.Result, submitter.Call, error) {
				return lead.Result{}, submitter.Call{Attempts: 1}, &submitter.CallError{Op: "submitLead", Status: 200, Message: "[CONFLICT] lead already submitted", Errors: []submitter.GraphQLError{{Code: "CONFLICT", Message: "lead already submitted"}}, Attempts: 1}
			}},
			want:     []lead.Status{lead.StatusCreated, lead.StatusSubmitted},
			submits:  1,
			wantNote: "submitLead answered that the lead already was",
		},
		{
			name: "already-submitted pattern off: submit_failed",
			cfg:  func(c *Config) { c.AlreadySubmitted = nil },
			api: &fakeAPI{create: qualified, submit: func(context.Context, string) (lead.Result, submitter.Call, error) {
				return lead.Result{}, submitter.Call{Attempts: 1}, &submitter.CallError{Op: "submitLead", Status: 200, Message: "lead already submitted", Errors: []submitter.GraphQLError{{Message: "lead already submitted"}}, Attempts: 1}
			}},
			want:    []lead.Status{lead.StatusCreated, lead.StatusSubmitFailed},
			submits: 1,
			wantErr: "already submitted",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			if tc.api == nil {
				tc.api = &fakeAPI{}
			}
			res, j, err := run(t, context.Background(), cfg, &fakeSource{items: validItems(1)}, tc.api)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := j.statuses(1); !equalStatuses(got, tc.want) {
				t.Errorf("journal of row 1 = %v, want %v", got, tc.want)
			}
			_, submits, _ := tc.api.calls()
			if len(submits) != tc.submits {
				t.Errorf("submitLead calls = %v, want %d", submits, tc.submits)
			}
			last := j.last()[1]
			if !strings.Contains(noteOf(last), tc.wantNote) {
				t.Errorf("note = %q, want it to contain %q", noteOf(last), tc.wantNote)
			}
			if (tc.wantErr == "") != (last.Error == "") || !strings.Contains(last.Error, tc.wantErr) {
				t.Errorf("error = %q, want %q", last.Error, tc.wantErr)
			}
			if len(submits) > 0 && submits[0] != "id-L1" {
				t.Errorf("submitLead(%q), want the created lead's id id-L1", submits[0])
			}
			checkAccounting(t, res.Summary)
		})
	}
}

// TestOneRedactorPerRow: every call about a row (its createLead, the read
// of the lead a duplicate answer names, its submitLead) gets the one
// Redactor the engine made of the row's input.
func TestOneRedactorPerRow(t *testing.T) {
	api := &fakeAPI{
		create: func(_ context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
			return lead.Result{ID: "dup-" + in.LeadID, ResultCode: 1002, Note: "Duplicate of lead orig-" + in.LeadID}, submitter.Call{Attempts: 2, Ambiguous: true}, nil
		},
		lead: func(_ context.Context, id string) (lead.Result, submitter.Call, error) {
			own := strings.TrimPrefix(id, "orig-")
			return lead.Result{ID: id, ResultCode: 1017, Note: "Qualified; awaiting submission", BidValue: bid("45.00"), PartnerLeadID: own}, submitter.Call{Attempts: 1}, nil
		},
	}
	_, j, err := run(t, context.Background(), testConfig(), &fakeSource{items: validItems(3)}, api)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for row := 1; row <= 3; row++ {
		if got := j.last()[row].Status; got != lead.StatusSubmitted {
			t.Fatalf("row %d ended %s, want submitted after its own-lead check", row, got)
		}
		id := "L" + strconv.Itoa(row)
		created, read := api.reds[id], api.reds["orig-"+id]
		if len(created) != 1 || created[0] == nil || len(read) != 2 {
			t.Fatalf("row %d: createLead got %d Redactors, the lead's read and submitLead %d; want 1 and 2", row, len(created), len(read))
		}
		for _, red := range read {
			if red != created[0] {
				t.Errorf("row %d: a call got another Redactor than its createLead's: two built for one row", row)
			}
		}
		if other := api.reds["L"+strconv.Itoa(row%3+1)]; other[0] == created[0] {
			t.Errorf("rows %d and %d share a Redactor", row, row%3+1)
		}
	}
}

func equalStatuses(a, b []lead.Status) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestInvalidRowsAreJournalledNeverSent(t *testing.T) {
	bad := source.Item{Row: lead.Row{Row: 2, LeadID: "L2", Status: lead.StatusInvalid,
		Invalid: lead.RowErrors{{Row: 2, StartLine: 3, Column: 4, Field: lead.NoField, Rule: "bare quote"}}}}
	api := &fakeAPI{}
	res, j, err := run(t, context.Background(), testConfig(), &fakeSource{items: []source.Item{validItem(1), bad}}, api)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	created, _, _ := api.calls()
	if len(created) != 1 || created[0] != "L1" {
		t.Errorf("createLead calls = %v, want only L1", created)
	}
	if got := j.last()[2]; got.Status != lead.StatusInvalid || got.ErrorText() != bad.Row.ErrorText() {
		t.Errorf("row 2 journalled as %+v, want invalid with its own error", got)
	}
	if res.Summary.Invalid != 1 || res.Summary.Reasons["malformed record: bare quote"] != 1 {
		t.Errorf("summary: invalid %d, reasons %v; want 1 counted under the reason without positions", res.Summary.Invalid, res.Summary.Reasons)
	}
	checkAccounting(t, res.Summary)
}

func TestResume(t *testing.T) {
	prior := fakePrior{
		1: {Row: 1, LeadID: "L1", Status: lead.StatusCreated, ID: "old-1", ResultCode: 1015, BidValue: "12.00", Attempts: 1},
		2: {Row: 2, LeadID: "L2", Status: lead.StatusSubmitFailed, ID: "old-2", ResultCode: 1016, BidValue: "30.00", Attempts: 1, Error: "submitLead: HTTP 500"},
		3: {Row: 3, LeadID: "L3", Status: lead.StatusSubmitted, ID: "old-3", ResultCode: 1017, BidValue: "45.00"},
		4: {Row: 4, LeadID: "L4", Status: lead.StatusProcessed, ID: "old-4", ResultCode: 1020},
		5: {Row: 5, LeadID: "L5", Status: lead.StatusFailed, Error: "createLead: HTTP 503 after 5 attempts"},
		// row 6: no line (never sent before)
	}
	api := &fakeAPI{create: qualified}
	cfg := testConfig()
	cfg.Prior = prior
	res, j, err := run(t, context.Background(), cfg, &fakeSource{items: validItems(6)}, api)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	created, submits, _ := api.calls()
	if want := []string{"L5", "L6"}; !sameSet(created, want) {
		t.Errorf("createLead sent for %v, want %v (created and finished rows never again)", created, want)
	}
	if want := []string{"old-1", "old-2", "id-L5", "id-L6"}; !sameSet(submits, want) {
		t.Errorf("submitLead sent for %v, want %v", submits, want)
	}
	last := j.last()
	for _, n := range []int{1, 2} {
		r := last[n]
		if r.Status != lead.StatusSubmitted || r.ID != prior[n].ID || r.BidValue != prior[n].BidValue || r.Error != "" {
			t.Errorf("row %d = %+v, want submitted with the earlier run's id and bid, no error", n, r)
		}
	}
	for _, n := range []int{3, 4} {
		if got := j.statuses(n); len(got) != 0 {
			t.Errorf("row %d finished earlier: journalled %v again, want nothing", n, got)
		}
	}
	if res.Skipped != 2 {
		t.Errorf("Skipped = %d, want 2", res.Skipped)
	}
	s := res.Summary
	if s.Submitted != 5 || s.Processed != 1 || s.RowsRead != 6 {
		t.Errorf("summary: submitted %d processed %d read %d; want 5, 1, 6 (finished rows counted, not sent)", s.Submitted, s.Processed, s.RowsRead)
	}
	checkAccounting(t, s)
}

func TestResumeForeignJournal(t *testing.T) {
	cfg := testConfig()
	cfg.Prior = fakePrior{1: {Row: 1, LeadID: "OTHER", Status: lead.StatusFailed}}
	api := &fakeAPI{}
	_, _, err := run(t, context.Background(), cfg, &fakeSource{items: validItems(1)}, api)
	if !errors.Is(err, ErrForeignJournal) {
		t.Fatalf("Run: %v, want ErrForeignJournal", err)
	}
	if created, _, _ := api.calls(); len(created) != 0 {
		t.Errorf("createLead sent for %v, want nothing", created)
	}
}

func sameSet(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	seen := map[string]int{}
	for _, g := range got {
		seen[g]++
	}
	for _, w := range want {
		if seen[w] == 0 {
			return false
		}
		seen[w]--
	}
	return true
}

// duplicateAfterLostAnswer answers createLead as a retry after a lost
// answer would be: a duplicate of lead orig (note empty: no id given).
func duplicateAfterLostAnswer(orig string) func(context.Context, lead.Input) (lead.Result, submitter.Call, error) {
	return func(_ context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
		note := "Duplicate lead"
		if orig != "" {
			note = "Duplicate of lead " + orig
		}
		return lead.Result{ID: "dup-" + in.LeadID, ResultCode: 1002, Note: note}, submitter.Call{Attempts: 2, Ambiguous: true}, nil
	}
}

func TestOwnLeadCheck(t *testing.T) {
	ownQualified := func(_ context.Context, id string) (lead.Result, submitter.Call, error) {
		return lead.Result{ID: id, ResultCode: 1017, Note: "Qualified; awaiting submission", BidValue: bid("45.00"), PartnerLeadID: "L1"}, submitter.Call{Attempts: 1}, nil
	}
	tests := []struct {
		name     string
		cfg      func(*Config)
		create   func(context.Context, lead.Input) (lead.Result, submitter.Call, error)
		read     func(context.Context, string) (lead.Result, submitter.Call, error)
		want     lead.Status
		wantID   string
		reads    int
		submits  int
		wantNote string
	}{
		{
			name:     "own lead found: the first attempt's lead is the row's, submitted",
			create:   duplicateAfterLostAnswer("orig-1"),
			read:     ownQualified,
			want:     lead.StatusSubmitted,
			wantID:   "orig-1",
			reads:    1,
			submits:  1,
			wantNote: "this is the lead the earlier attempt created",
		},
		{
			name:   "another partner lead: a genuine duplicate, processed",
			create: duplicateAfterLostAnswer("orig-1"),
			read: func(_ context.Context, id string) (lead.Result, submitter.Call, error) {
				return lead.Result{ID: id, ResultCode: 1017, PartnerLeadID: "SOMEONE-ELSE"}, submitter.Call{Attempts: 1}, nil
			},
			want:     lead.StatusProcessed,
			wantID:   "dup-L1",
			reads:    1,
			wantNote: "belongs to leadId SOMEONE-ELSE, not to this row: a genuine duplicate",
		},
		{
			name:   "lead read back without partnerLeadId (a lead document without it, or null): cannot tell, unverified",
			create: duplicateAfterLostAnswer("orig-1"),
			read: func(_ context.Context, id string) (lead.Result, submitter.Call, error) {
				return lead.Result{ID: id, ResultCode: 1017, Note: "Qualified; awaiting submission", BidValue: bid("45.00")}, submitter.Call{Attempts: 1}, nil
			},
			want:     lead.StatusUnverified,
			wantID:   "dup-L1",
			reads:    1,
			wantNote: "lead orig-1 was read back without a partnerLeadId, so whether it is this row's own cannot be told",
		},
		{
			name:   "lead unreadable: unverified, for reconciliation",
			create: duplicateAfterLostAnswer("orig-1"),
			read: func(context.Context, string) (lead.Result, submitter.Call, error) {
				return lead.Result{}, submitter.Call{Attempts: 1}, &submitter.CallError{Op: "lead", Status: 200, Message: "[FORBIDDEN] Lead.Read required", Attempts: 1}
			},
			want:     lead.StatusUnverified,
			wantID:   "dup-L1",
			reads:    1,
			wantNote: "could not read lead orig-1",
		},
		{
			name:     "no id in the note: unverified, nothing read",
			create:   duplicateAfterLostAnswer(""),
			want:     lead.StatusUnverified,
			wantID:   "dup-L1",
			wantNote: "reconcile by leadId",
		},
		{
			name:     "duplicate-of pattern off: no answer is a duplicate, processed with a note",
			cfg:      func(c *Config) { c.DuplicateOf = nil },
			create:   duplicateAfterLostAnswer("orig-1"),
			want:     lead.StatusProcessed,
			wantID:   "dup-L1",
			wantNote: "{createLead was sent 2 times after an answer was lost}",
		},
		{
			name: "a retried answer that is no duplicate stands, with a note",
			create: func(_ context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
				return lead.Result{ID: "new-L1", ResultCode: 1020, Note: "income too low"}, submitter.Call{Attempts: 3, Ambiguous: true}, nil
			},
			read:     ownQualified,
			want:     lead.StatusProcessed,
			wantID:   "new-L1",
			wantNote: "income too low {createLead was sent 3 times after an answer was lost}",
		},
		{
			name: "an unambiguous duplicate is not checked",
			create: func(_ context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
				return lead.Result{ID: "dup-L1", ResultCode: 1002, Note: "Duplicate of lead orig-1"}, submitter.Call{Attempts: 1}, nil
			},
			read:     ownQualified,
			want:     lead.StatusProcessed,
			wantID:   "dup-L1",
			wantNote: "Duplicate of lead orig-1",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			api := &fakeAPI{create: tc.create, lead: tc.read}
			res, j, err := run(t, context.Background(), cfg, &fakeSource{items: validItems(1)}, api)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			_, submits, reads := api.calls()
			if len(reads) != tc.reads || len(submits) != tc.submits {
				t.Errorf("lead reads %v, submits %v; want %d and %d", reads, submits, tc.reads, tc.submits)
			}
			r := j.last()[1]
			if r.Status != tc.want || r.ID != tc.wantID {
				t.Errorf("row 1 = %s id %s; want %s id %s", r.Status, r.ID, tc.want, tc.wantID)
			}
			// The note is on the line createLead's answer wrote (created
			// or processed): submitLead's answer may replace it.
			// The engine's notes are fields; only the results file's codec
			// writes them into the note column.
			if first := j.rows[0]; !strings.Contains(noteOf(first), tc.wantNote) || strings.Contains(first.Note, "[bulkload:") {
				t.Errorf("row 1's first line's note = %q, want it to contain %q", noteOf(first), tc.wantNote)
			}
			checkAccounting(t, res.Summary)
		})
	}
}

func TestFatalAuthStopsTheRun(t *testing.T) {
	t.Run("createLead", func(t *testing.T) {
		api := &fakeAPI{create: func(_ context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
			if in.LeadID == "L3" {
				return lead.Result{}, submitter.Call{}, fatal
			}
			return qualified(context.Background(), in)
		}}
		cfg := testConfig()
		cfg.Concurrency = 1
		res, j, err := run(t, context.Background(), cfg, &fakeSource{items: validItems(20)}, api)
		if !submitter.IsFatal(err) {
			t.Fatalf("Run: %v, want the fatal auth error", err)
		}
		if got := j.last()[3]; got.Status != "" {
			t.Errorf("row 3 journalled as %s, want no line (not sent: --resume sends it)", got.Status)
		}
		created, _, _ := api.calls()
		if len(created) != 3 {
			t.Errorf("createLead sent for %v, want rows 1-3 only: the run stops at the fatal error", created)
		}
		s := res.Summary
		if s.Submitted != 2 || s.NotSent == 0 {
			t.Errorf("summary: submitted %d, not sent %d; want 2 and the rest not sent", s.Submitted, s.NotSent)
		}
		checkAccounting(t, s)
	})
	t.Run("submitLead", func(t *testing.T) {
		api := &fakeAPI{create: qualified, submit: func(context.Context, string) (lead.Result, submitter.Call, error) {
			return lead.Result{}, submitter.Call{}, fatal
		}}
		cfg := testConfig()
		cfg.Concurrency = 1
		res, j, err := run(t, context.Background(), cfg, &fakeSource{items: validItems(5)}, api)
		if !submitter.IsFatal(err) {
			t.Fatalf("Run: %v, want the fatal auth error", err)
		}
		if got := j.last()[1]; got.Status != lead.StatusSubmitFailed || got.ID != "id-L1" {
			t.Errorf("row 1 = %+v, want submit_failed with its id, so that --resume submits it", got)
		}
		checkAccounting(t, res.Summary)
	})
}

// TestAccessDeniedStopsTheRun: the service refusing the application's
// access (an *AccessError from createLead) stops the run like refused
// credentials, but as an outage does: no new row is taken, the calls in
// flight finish and are recorded (the slow row 2 answered after the
// denial is processed), the denied rows have no line (not sent: --resume
// sends them), and Run's error is fatal.
func TestAccessDeniedStopsTheRun(t *testing.T) {
	denied := &submitter.AccessError{Op: "createLead", Status: 200, Code: "FORBIDDEN"}
	// Once refused, every later call is refused at once, as the Client
	// does.
	release := make(chan struct{})
	var once sync.Once
	api := &fakeAPI{create: func(_ context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
		select {
		case <-release:
			if in.LeadID != "L2" {
				return lead.Result{}, submitter.Call{}, denied
			}
		default:
		}
		switch in.LeadID {
		case "L2":
			<-release // on the wire when the access is refused
		case "L3":
			once.Do(func() { close(release) })
			return lead.Result{}, submitter.Call{Attempts: 1}, denied
		}
		return lead.Result{ID: "id-" + in.LeadID, ResultCode: lead.CodeComplete, Note: "not qualified"}, submitter.Call{Attempts: 1}, nil
	}}
	cfg := testConfig()
	cfg.Concurrency = 2
	res, j, err := run(t, context.Background(), cfg, &fakeSource{items: validItems(20)}, api)
	if !submitter.IsFatal(err) || !submitter.IsAccessDenied(err) {
		t.Fatalf("Run: %v, want the access refusal, fatal", err)
	}
	last := j.last()
	if got := last[2]; got.Status != lead.StatusProcessed {
		t.Errorf("row 2, in flight at the refusal, = %+v, want processed: calls in flight finish", got)
	}
	for row := 3; row <= 20; row++ {
		if got := last[row]; got.Status != "" {
			t.Errorf("row %d journalled as %s, want no line", row, got.Status)
		}
	}
	created, _, _ := api.calls()
	if len(created) > 3+cfg.Concurrency {
		t.Errorf("createLead sent for %v, want no new row taken after the refusal", created)
	}
	if s := res.Summary; s.Failed != 0 || s.Processed > 2 || s.NotSent == 0 {
		t.Errorf("summary: failed %d, processed %d, not sent %d; want none failed, rows 1 and 2 processed, the rows taken after not sent", s.Failed, s.Processed, s.NotSent)
	}
	checkAccounting(t, res.Summary)
}

func TestInputErrorStopsTheRun(t *testing.T) {
	readErr := errors.New("read leads.csv row 3: record larger than 1 MiB")
	api := &fakeAPI{}
	res, _, err := run(t, context.Background(), testConfig(), &fakeSource{items: validItems(2), err: readErr}, api)
	if !errors.Is(err, readErr) {
		t.Fatalf("Run: %v, want the read error", err)
	}
	checkAccounting(t, res.Summary)
}

func TestJournalWriteErrorStopsTheRun(t *testing.T) {
	api := &fakeAPI{create: qualified}
	cfg := testConfig()
	cfg.Concurrency = 1
	j := &fakeJournal{appendErr: errBoom, failAt: 0}
	_, err := Run(context.Background(), cfg, &fakeSource{items: validItems(10)}, api, j)
	if !errors.Is(err, errBoom) {
		t.Fatalf("Run: %v, want the write error", err)
	}
	_, submits, _ := api.calls()
	if len(submits) != 0 {
		t.Errorf("submitLead sent for %v although the created line was not on disk", submits)
	}
	if created, _, _ := api.calls(); len(created) > 2 {
		t.Errorf("createLead sent for %v, want the run to stop at the first unwritable line", created)
	}
}

func TestCompactionError(t *testing.T) {
	j := &fakeJournal{compactErr: errBoom}
	res, err := Run(context.Background(), testConfig(), &fakeSource{items: validItems(3)}, &fakeAPI{}, j)
	if !errors.Is(err, ErrCompact) || !errors.Is(err, errBoom) {
		t.Fatalf("Run: %v, want ErrCompact wrapping the cause", err)
	}
	if res.Summary.Processed != 3 {
		t.Errorf("processed %d, want 3: the rows are done and counted", res.Summary.Processed)
	}
}

// TestDrainOnSignal cancels the run's context while calls are in flight:
// no new row is taken, the calls in flight finish and are journalled, and
// the rest are counted as not sent.
func TestDrainOnSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inFlight := make(chan struct{}, 16)
	release := make(chan struct{})
	api := &fakeAPI{create: func(cctx context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
		inFlight <- struct{}{}
		<-release
		if cctx.Err() != nil {
			return lead.Result{}, submitter.Call{Attempts: 1}, &submitter.CallError{Op: "createLead", Message: "interrupted", Err: cctx.Err()}
		}
		return qualified(cctx, in)
	}}
	cfg := testConfig()
	cfg.Concurrency = 2
	var once sync.Once
	go func() {
		<-inFlight
		<-inFlight
		once.Do(cancel) // the first signal, with two calls in flight
		time.Sleep(10 * time.Millisecond)
		close(release)
	}()
	res, j, err := run(t, ctx, cfg, &fakeSource{items: validItems(50)}, api)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	s := res.Summary
	if !s.Interrupted {
		t.Errorf("Interrupted = false, want true")
	}
	if s.Submitted != 2 {
		t.Errorf("submitted %d, want the 2 calls in flight finished and submitted", s.Submitted)
	}
	created, _, _ := api.calls()
	if len(created) != 2 {
		t.Errorf("createLead sent for %v, want only the 2 in flight at the signal", created)
	}
	for n, r := range j.last() {
		if r.Status == lead.StatusFailed {
			t.Errorf("row %d failed: a row not sent must stay without a line, for --resume", n)
		}
	}
	if s.RowsRead > 2 && s.NotSent != s.RowsRead-2 {
		t.Errorf("read %d, not sent %d: want every row read but not sent counted", s.RowsRead, s.NotSent)
	}
	checkAccounting(t, s)
}

// TestDrainTimeout: a call still in flight when DrainTimeout ends is
// cancelled and the run ends. A createLead cut off on the wire (its
// request written, Ambiguous) is unverified: its answer never came, the
// lead may exist. One cut off before anything reached the service (waiting
// for its turn, between attempts) leaves no line: not sent, never failed.
// Its submitLead cut off leaves the created line for --resume.
func TestDrainTimeout(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ambiguous bool
		submit    bool        // cut off in submitLead, createLead answered
		want      lead.Status // "": no line
	}{
		{name: "createLead on the wire", ambiguous: true, want: lead.StatusUnverified},
		{name: "createLead waiting for its turn"},
		{name: "submitLead on the wire", ambiguous: true, submit: true, want: lead.StatusCreated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			started := make(chan struct{})
			cut := func(cctx context.Context, op string) error {
				close(started)
				<-cctx.Done()
				return &submitter.CallError{Op: op, Message: "interrupted: " + cctx.Err().Error(), Err: cctx.Err(), Interrupted: true, Ambiguous: tc.ambiguous}
			}
			api := &fakeAPI{create: func(cctx context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
				if tc.submit {
					return qualified(cctx, in)
				}
				return lead.Result{}, submitter.Call{Attempts: 1, Ambiguous: tc.ambiguous}, cut(cctx, "createLead")
			}, submit: func(cctx context.Context, id string) (lead.Result, submitter.Call, error) {
				return lead.Result{}, submitter.Call{Attempts: 1, Ambiguous: tc.ambiguous}, cut(cctx, "submitLead")
			}}
			cfg := testConfig()
			cfg.Concurrency = 1
			cfg.DrainTimeout = 20 * time.Millisecond
			go func() {
				<-started
				cancel()
			}()
			res, j, err := run(t, ctx, cfg, &fakeSource{items: validItems(3)}, api)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			got, ok := j.last()[1]
			switch {
			case tc.want == "" && ok:
				t.Errorf("row 1 = %s (%s), want no line: cut off before it reached the service", got.Status, got.Error)
			case tc.want != "" && got.Status != tc.want:
				t.Errorf("row 1 = %q (%s), want %s", got.Status, got.Error, tc.want)
			case tc.want == lead.StatusUnverified && (!got.Ambiguous || !strings.Contains(got.Error, "the lead may exist")):
				t.Errorf("row 1: ambiguous %v, error %q: want it marked, saying why", got.Ambiguous, got.Error)
			}
			for n, r := range j.last() {
				if r.Status == lead.StatusFailed || r.Status == lead.StatusSubmitFailed {
					t.Errorf("row %d = %s: a row cut off by the stop never fails", n, r.Status)
				}
			}
			final := 0 // row 1's final line
			if tc.want == lead.StatusUnverified {
				final = 1
			}
			if s := res.Summary; !s.Interrupted || s.NotSent != s.RowsRead-final {
				t.Errorf("Interrupted %v, read %d, not sent %d; want interrupted, every row read not sent but an unverified row 1", s.Interrupted, s.RowsRead, s.NotSent)
			}
			checkAccounting(t, res.Summary)
		})
	}
}

// TestAmbiguityAcrossRuns: the own-lead check runs on --resume for rows an
// earlier run may have sent (a failed or invalid row, a row without a line,
// an unverified row), and in a fresh run only after a lost answer.
func TestAmbiguityAcrossRuns(t *testing.T) {
	// A duplicate answer for every row, naming the row's own earlier lead.
	dupOfOwn := func(_ context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
		return lead.Result{ID: "dup-" + in.LeadID, ResultCode: 1002, Note: "Duplicate of lead own-" + in.LeadID}, submitter.Call{Attempts: 1}, nil
	}
	readOwn := func(_ context.Context, id string) (lead.Result, submitter.Call, error) {
		leadID := strings.TrimPrefix(id, "own-")
		return lead.Result{ID: id, ResultCode: 1016, Note: "Qualified; awaiting submission", BidValue: bid("30.00"), PartnerLeadID: leadID}, submitter.Call{Attempts: 1}, nil
	}
	tests := []struct {
		name     string
		prior    fakePrior // nil: a fresh run
		want     lead.Status
		wantID   string
		creates  int
		reads    int
		wantNote string
	}{
		{
			name:    "fresh run, unambiguous duplicate: processed, not checked",
			want:    lead.StatusProcessed,
			wantID:  "dup-L1",
			creates: 1,
		},
		{
			// A later run may have sent it again and been killed before
			// its answer was journalled (issue 18 item 2).
			name:     "failed without a lost answer: checked on resume all the same",
			prior:    fakePrior{1: {Row: 1, LeadID: "L1", Status: lead.StatusFailed, Error: "createLead: HTTP 503 after 5 attempts"}},
			want:     lead.StatusSubmitted,
			wantID:   "own-L1",
			creates:  1,
			reads:    1,
			wantNote: "an earlier run's createLead for this row may have reached the service",
		},
		{
			name:    "invalid earlier, valid now: checked on resume",
			prior:   fakePrior{1: {Row: 1, LeadID: "L1", Status: lead.StatusInvalid, Error: "zipCode: must be 5 digits"}},
			want:    lead.StatusSubmitted,
			wantID:  "own-L1",
			creates: 1,
			reads:   1,
		},
		{
			name:     "failed after a lost answer: checked on resume, own lead submitted",
			prior:    fakePrior{1: {Row: 1, LeadID: "L1", Status: lead.StatusFailed, Ambiguous: true, Error: "createLead: connection lost"}},
			want:     lead.StatusSubmitted,
			wantID:   "own-L1",
			creates:  1,
			reads:    1,
			wantNote: "an earlier run's createLead for this row may have reached the service",
		},
		{
			name:    "no line in a resumed run (in flight at a kill): checked, own lead submitted",
			prior:   fakePrior{},
			want:    lead.StatusSubmitted,
			wantID:  "own-L1",
			creates: 1,
			reads:   1,
		},
		{
			name:     "unverified naming its duplicate: read again, not created again",
			prior:    fakePrior{1: {Row: 1, LeadID: "L1", Status: lead.StatusUnverified, ID: "dup-L1", ResultCode: 1002, Note: "Duplicate of lead own-L1", EngineNotes: []string{"could not read lead own-L1: reconcile by leadId"}, Attempts: 2}},
			want:     lead.StatusSubmitted,
			wantID:   "own-L1",
			reads:    1,
			wantNote: "an earlier run left this row unverified; checked again",
		},
		{
			name:    "unverified naming no lead: sent again and checked",
			prior:   fakePrior{1: {Row: 1, LeadID: "L1", Status: lead.StatusUnverified, ID: "dup-L1", ResultCode: 1002, Note: "Duplicate lead", EngineNotes: []string{"reconcile by leadId"}, Attempts: 2}},
			want:    lead.StatusSubmitted,
			wantID:  "own-L1",
			creates: 1,
			reads:   1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			if tc.prior != nil {
				cfg.Prior = tc.prior
			}
			api := &fakeAPI{create: dupOfOwn, lead: readOwn}
			res, j, err := run(t, context.Background(), cfg, &fakeSource{items: validItems(1)}, api)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			created, _, reads := api.calls()
			if len(created) != tc.creates || len(reads) != tc.reads {
				t.Errorf("createLead %v, lead reads %v; want %d and %d", created, reads, tc.creates, tc.reads)
			}
			r := j.last()[1]
			if r.Status != tc.want || r.ID != tc.wantID {
				t.Errorf("row 1 = %s id %s, want %s id %s", r.Status, r.ID, tc.want, tc.wantID)
			}
			if first := j.rows[0]; !strings.Contains(noteOf(first), tc.wantNote) || len(first.EngineNotes) > 1 {
				t.Errorf("row 1's first note = %q, want one note of the engine's, containing %q", noteOf(first), tc.wantNote)
			}
			checkAccounting(t, res.Summary)
		})
	}
}

// TestLostAnswerIsJournalledAmbiguous: a createLead that failed after an
// attempt may have reached the service is journalled Ambiguous, and stays
// so when an ambiguous row fails again on resume; a plain failure is not.
func TestLostAnswerIsJournalledAmbiguous(t *testing.T) {
	lost := &submitter.CallError{Op: "createLead", Message: "connection lost after the request was sent", Retryable: true, Attempts: 1, Ambiguous: true}
	plain := &submitter.CallError{Op: "createLead", Status: 503, Message: "HTTP 503", Retryable: true, Attempts: 1}
	tests := []struct {
		name  string
		prior fakePrior
		err   error
		call  submitter.Call
		want  bool
	}{
		{"lost answer", nil, lost, submitter.Call{Attempts: 1, Ambiguous: true}, true},
		{"lost answer, flagged on the error only", nil, lost, submitter.Call{Attempts: 1}, true},
		{"plain failure", nil, plain, submitter.Call{Attempts: 1}, false},
		{"ambiguous earlier, plain failure now", fakePrior{1: {Row: 1, LeadID: "L1", Status: lead.StatusFailed, Ambiguous: true}}, plain, submitter.Call{Attempts: 1}, true},
		{"no line in a resumed run, plain failure now", fakePrior{}, plain, submitter.Call{Attempts: 1}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			if tc.prior != nil {
				cfg.Prior = tc.prior
			}
			api := &fakeAPI{create: func(context.Context, lead.Input) (lead.Result, submitter.Call, error) {
				return lead.Result{}, tc.call, tc.err
			}}
			_, j, err := run(t, context.Background(), cfg, &fakeSource{items: validItems(1)}, api)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			r := j.last()[1]
			if r.Status != lead.StatusFailed || r.Ambiguous != tc.want {
				t.Errorf("row 1 = %s ambiguous %v, want failed ambiguous %v", r.Status, r.Ambiguous, tc.want)
			}
		})
	}
}

// outage is a createLead that failed as an outage (connection refused).
var outage = &submitter.CallError{Op: "createLead", Message: "dial tcp 127.0.0.1:1: connection refused", Retryable: true, Outage: true, Attempts: 5}

// TestGateStopsUnreachable: when the gate stops waiting because calls in
// a row failed as if the service were gone (the client counts them:
// submitter's TestGateCallsInARow), the run stops taking rows, the rows not
// sent are left without a line for --resume, and Run returns
// ErrUnreachable wrapping the last failure.
func TestGateStopsUnreachable(t *testing.T) {
	g := &fakeGate{open: make(chan struct{})}
	close(g.open)
	var mu sync.Mutex
	n := 0
	api := &fakeAPI{create: func(ctx context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
		mu.Lock()
		defer mu.Unlock()
		if n++; n == 5 {
			g.mu.Lock()
			g.err = &submitter.OutageError{Calls: 5, Last: outage, Outage: submitter.Outage{Start: time.Now(), Cause: outage.Message}}
			g.mu.Unlock()
		}
		return lead.Result{}, submitter.Call{Attempts: 5}, outage
	}}
	cfg := testConfig()
	cfg.Concurrency = 1 // a strict order of outcomes
	cfg.Gate = g
	res, j, err := run(t, context.Background(), cfg, &fakeSource{items: validItems(40)}, api)
	if !errors.Is(err, ErrUnreachable) || !errors.Is(err, outage) || !strings.Contains(err.Error(), "5 calls in a row failed") {
		t.Fatalf("Run: %v, want ErrUnreachable after 5 calls in a row, wrapping the last", err)
	}
	created, _, _ := api.calls()
	s := res.Summary
	if len(created) != 5 || s.RowsRead == 40 || len(j.last()) != len(created) || s.NotSent != s.RowsRead-len(created) {
		t.Errorf("sent %d, read %d, not sent %d, lines %d: want 5 sent, the reading stopped and the rows not sent left without a line, for --resume",
			len(created), s.RowsRead, s.NotSent, len(j.last()))
	}
	if !g.stopped {
		t.Error("the run stopped without telling the gate to stop waiting")
	}
	checkAccounting(t, s)
}

// TestInputErrorDrains: an input that cannot be read on stops the reading
// only, as a signal does: the calls in flight finish and are recorded.
func TestInputErrorDrains(t *testing.T) {
	readErr := errors.New("read leads.csv.gz: unexpected EOF (the file is corrupt)")
	inFlight := make(chan struct{}, 4)
	release := make(chan struct{})
	api := &fakeAPI{create: func(ctx context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
		inFlight <- struct{}{}
		<-release
		if ctx.Err() != nil {
			return lead.Result{}, submitter.Call{Attempts: 1}, &submitter.CallError{Op: "createLead", Message: "interrupted", Err: ctx.Err()}
		}
		return qualified(ctx, in)
	}}
	src := &fakeSource{items: validItems(2), err: readErr}
	src.onNext = func(n int) {
		if n == 2 { // both rows are in flight before the read fails
			<-inFlight
			<-inFlight
			go func() {
				time.Sleep(10 * time.Millisecond)
				close(release)
			}()
		}
	}
	cfg := testConfig()
	cfg.Concurrency = 2
	res, j, err := run(t, context.Background(), cfg, src, api)
	if !errors.Is(err, readErr) {
		t.Fatalf("Run: %v, want the read error", err)
	}
	for _, n := range []int{1, 2} {
		if got := j.last()[n]; got.Status != lead.StatusSubmitted {
			t.Errorf("row %d = %s, want submitted: a call in flight finishes after a read error", n, got.Status)
		}
	}
	checkAccounting(t, res.Summary)
}

// TestAbortCancelsCallsInFlight: a second signal (Abort) cancels the calls
// in flight without waiting for the drain timeout; they are recorded, the
// journal compacted.
func TestAbortCancelsCallsInFlight(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	abort := make(chan struct{})
	started := make(chan struct{}, 4)
	api := &fakeAPI{create: func(cctx context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
		started <- struct{}{}
		<-cctx.Done()
		return lead.Result{}, submitter.Call{Attempts: 1}, &submitter.CallError{Op: "createLead", Message: "interrupted", Err: cctx.Err(), Ambiguous: true}
	}}
	cfg := testConfig()
	cfg.Concurrency = 2
	cfg.DrainTimeout = time.Hour // only Abort can end the calls
	cfg.Abort = abort
	go func() {
		<-started
		<-started
		cancel()
		close(abort)
	}()
	res, j, err := run(t, ctx, cfg, &fakeSource{items: validItems(10)}, api)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := len(j.last()); got != 2 {
		t.Errorf("%d rows journalled, want the 2 in flight", got)
	}
	for n, r := range j.last() {
		if r.Status != lead.StatusFailed || !r.Ambiguous {
			t.Errorf("row %d = %s ambiguous %v, want failed and ambiguous (cut off in flight)", n, r.Status, r.Ambiguous)
		}
	}
	if !res.Summary.Interrupted {
		t.Error("Interrupted = false, want true")
	}
	checkAccounting(t, res.Summary)
}

// fakeGate is an outage gate: closed (waiting) until open is closed, or
// failing every wait with err once set.
type fakeGate struct {
	mu      sync.Mutex
	open    chan struct{}
	err     error
	stopped bool
}

func (g *fakeGate) WaitUp(ctx context.Context) error {
	g.mu.Lock()
	open, err := g.open, g.err
	g.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case <-open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *fakeGate) StopWaiting() {
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
}

// outageStop is a call's error once the run stopped waiting out an outage.
func outageStop(stopped bool) error {
	oe := &submitter.OutageError{Outage: submitter.Outage{Start: time.Now(), Cause: "502 Bad Gateway"}, Wait: time.Second, Stopped: stopped}
	return &submitter.CallError{Op: "createLead", Message: oe.Error(), Attempts: 3, Err: oe}
}

// TestOutageGate: no row is taken while the gate is shut; a call that ends
// in an outage the run stopped waiting out leaves its row without a line
// (not sent, for --resume), never failed, and stops the run with ErrOutage
// unless the run was stopping anyway.
func TestOutageGate(t *testing.T) {
	t.Run("rows wait for the gate", func(t *testing.T) {
		g := &fakeGate{open: make(chan struct{})}
		api := &fakeAPI{}
		cfg := testConfig()
		cfg.Gate = g
		done := make(chan struct{})
		var res Result
		var err error
		go func() {
			defer close(done)
			res, _, err = run(t, context.Background(), cfg, &fakeSource{items: validItems(5)}, api)
		}()
		time.Sleep(50 * time.Millisecond)
		if created, _, _ := api.calls(); len(created) != 0 {
			t.Fatalf("%d rows sent while the gate was shut, want none", len(created))
		}
		close(g.open)
		<-done
		if err != nil || res.Summary.Processed != 5 {
			t.Fatalf("Run: %v, processed %d, want 5 once the gate opened", err, res.Summary.Processed)
		}
	})
	for _, tc := range []struct {
		name    string
		stopped bool
	}{{"too long: the run stops", false}, {"stopped while waiting: no reason of its own", true}} {
		t.Run(tc.name, func(t *testing.T) {
			g := &fakeGate{open: make(chan struct{})}
			close(g.open)
			var once sync.Once
			api := &fakeAPI{create: func(ctx context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
				if in.LeadID == "L3" {
					once.Do(func() {
						g.mu.Lock()
						g.err = outageStop(tc.stopped).(*submitter.CallError).Err
						g.mu.Unlock()
					})
					return lead.Result{}, submitter.Call{Attempts: 3}, outageStop(tc.stopped)
				}
				return lead.Result{ID: "id-" + in.LeadID, ResultCode: 1020}, submitter.Call{Attempts: 1}, nil
			}}
			cfg := testConfig()
			cfg.Concurrency = 1
			cfg.Gate = g
			res, j, err := run(t, context.Background(), cfg, &fakeSource{items: validItems(10)}, api)
			if got := errors.Is(err, ErrOutage); got == tc.stopped {
				t.Errorf("Run: %v; ErrOutage %v, want %v", err, got, !tc.stopped)
			}
			if _, ok := j.last()[3]; ok {
				t.Errorf("row 3 has a line %v, want none: not sent, for --resume", j.last()[3])
			}
			for n, r := range j.last() {
				if r.Status == lead.StatusFailed {
					t.Errorf("row %d failed: %s", n, r.Error)
				}
			}
			if res.Summary.NotSent == 0 || res.Summary.Failed != 0 {
				t.Errorf("not sent %d, failed %d: want the rows caught in the outage not sent, none failed", res.Summary.NotSent, res.Summary.Failed)
			}
			if !tc.stopped && !g.stopped {
				t.Error("the run stopped without telling the gate to stop waiting")
			}
			checkAccounting(t, res.Summary)
		})
	}
}

// TestResumeDecidedOnce: the engine takes the check's decision for the
// rows the check read (Config.Decided) and decides only the rows after
// them. Row 1's line has another leadId, which the check would have
// refused: decided, it is not decided again (no ErrForeignJournal); the
// same line at row 2, after the rows decided, stops the run.
func TestResumeDecidedOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		through int
		foreign bool
	}{
		{"decided by the check", 2, false},
		{"after the rows decided", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Prior = fakePrior{2: {Row: 2, LeadID: "OTHER", Status: lead.StatusFailed}}
			cfg.Decided = &Decided{Through: tc.through, Kept: map[int]bool{}}
			api := &fakeAPI{create: qualified}
			_, _, err := run(t, context.Background(), cfg, &fakeSource{items: validItems(2)}, api)
			if got := errors.Is(err, ErrForeignJournal); got != tc.foreign {
				t.Fatalf("Run: %v, want ErrForeignJournal %v", err, tc.foreign)
			}
		})
	}
}
