package upload

import (
	"context"
	"errors"
	"io"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/source"
	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
	"github.com/bulkload/bulkload/token"
)

// fakeAPI is the service's three calls, scripted per test. A nil function
// answers like a service that takes every lead as unqualified (create),
// submits it (submit) or has no such lead (lead). It records every call.
type fakeAPI struct {
	create func(ctx context.Context, in lead.Input) (lead.Result, submitter.Call, error)
	submit func(ctx context.Context, id string) (lead.Result, submitter.Call, error)
	lead   func(ctx context.Context, id string) (lead.Result, submitter.Call, error)

	mu      sync.Mutex
	reds    map[string][]*redact.Redactor // by leadId (createLead) or id (the others): the Redactors each call got
	created []string                      // leadIds sent to createLead
	submits []string                      // ids sent to submitLead
	reads   []string                      // ids read
}

func (f *fakeAPI) Create(ctx context.Context, in lead.Input, red *redact.Redactor) (lead.Result, submitter.Call, error) {
	f.mu.Lock()
	f.redactor(in.LeadID, red)
	f.created = append(f.created, in.LeadID)
	f.mu.Unlock()
	if f.create == nil {
		return lead.Result{ID: "id-" + in.LeadID, ResultCode: lead.CodeComplete, Note: "not qualified"}, submitter.Call{Attempts: 1}, nil
	}
	return f.create(ctx, in)
}

func (f *fakeAPI) Submit(ctx context.Context, id string, red *redact.Redactor) (lead.Result, submitter.Call, error) {
	f.mu.Lock()
	f.redactor(id, red)
	f.submits = append(f.submits, id)
	f.mu.Unlock()
	if f.submit == nil {
		return lead.Result{ID: id, Note: "submitted"}, submitter.Call{Attempts: 1}, nil
	}
	return f.submit(ctx, id)
}

func (f *fakeAPI) Lead(ctx context.Context, id string, red *redact.Redactor) (lead.Result, submitter.Call, error) {
	f.mu.Lock()
	f.redactor(id, red)
	f.reads = append(f.reads, id)
	f.mu.Unlock()
	if f.lead == nil {
		return lead.Result{}, submitter.Call{Attempts: 1}, &submitter.CallError{Op: "lead", Status: 200, Message: "[NOT_FOUND] no such lead", Attempts: 1}
	}
	return f.lead(ctx, id)
}

// redactor notes the Redactor a call about key got. f.mu is held.
func (f *fakeAPI) redactor(key string, red *redact.Redactor) {
	if f.reds == nil {
		f.reds = map[string][]*redact.Redactor{}
	}
	f.reds[key] = append(f.reds[key], red)
}

func (f *fakeAPI) calls() (created, submits, reads []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.created...), append([]string(nil), f.submits...), append([]string(nil), f.reads...)
}

// fakeSource yields items in order, then io.EOF (or err, when set). Before
// row blockAt is returned it waits for release (or the context's end).
type fakeSource struct {
	items   []source.Item
	err     error
	next    int
	onNext  func(n int) // called before the n-th item (0-based) is returned
	release chan struct{}
}

func (s *fakeSource) Next(ctx context.Context) (source.Item, error) {
	if s.onNext != nil {
		s.onNext(s.next)
	}
	if ctx.Err() != nil {
		return source.Item{}, ctx.Err()
	}
	if s.next >= len(s.items) {
		if s.err != nil {
			return source.Item{}, s.err
		}
		return source.Item{}, io.EOF
	}
	it := s.items[s.next]
	s.next++
	return it, nil
}

// fakeJournal records what the engine appends. appendErr fails every
// append from the failAt-th on (0-based); compactErr fails Compact.
type fakeJournal struct {
	rows       []lead.Row
	appendErr  error
	failAt     int
	compactErr error
	compacted  bool
}

func (j *fakeJournal) AppendDurable(r lead.Row) error {
	if j.appendErr != nil && len(j.rows) >= j.failAt {
		return j.appendErr
	}
	j.rows = append(j.rows, r)
	return nil
}

func (j *fakeJournal) Compact() error {
	j.compacted = true
	return j.compactErr
}

// last returns each row's last journal line, by row number.
func (j *fakeJournal) last() map[int]lead.Row {
	m := map[int]lead.Row{}
	for _, r := range j.rows {
		m[r.Row] = r
	}
	return m
}

// statuses returns the statuses journalled for row n, in order.
func (j *fakeJournal) statuses(n int) []lead.Status {
	var out []lead.Status
	for _, r := range j.rows {
		if r.Row == n {
			out = append(out, r.Status)
		}
	}
	return out
}

// fakePrior is the journal of an earlier run.
type fakePrior map[int]lead.Row

func (p fakePrior) Get(row int) (lead.Row, bool) {
	r, ok := p[row]
	return r, ok
}

// validItem is input row n, valid, with leadId L<n>.
func validItem(n int) source.Item {
	id := "L" + strconv.Itoa(n)
	return source.Item{
		Row:   lead.Row{Row: n, LeadID: id, Status: lead.StatusValid},
		Input: lead.Input{LeadID: id},
	}
}

func validItems(n int) []source.Item {
	var out []source.Item
	for i := 1; i <= n; i++ {
		out = append(out, validItem(i))
	}
	return out
}

func bid(s string) *string { return &s }

// qualified answers createLead with a qualified lead whose id is the
// leadId's, bid $45.00.
func qualified(ctx context.Context, in lead.Input) (lead.Result, submitter.Call, error) {
	return lead.Result{ID: "id-" + in.LeadID, ResultCode: 1017, Note: "Qualified; awaiting submission", BidValue: bid("45.00"), PartnerLeadID: in.LeadID}, submitter.Call{Attempts: 1}, nil
}

// fatal is what the client returns once the token endpoint refused the
// credentials.
var fatal = &token.AuthError{Code: "invalid_client", Hint: "check the client id and secret"}

const testDuplicateOf = `(?i)duplicate(?: of lead ([0-9a-z-]+))?`

func testConfig() Config {
	return Config{
		Concurrency:      4,
		DrainTimeout:     5e9,
		AlreadySubmitted: regexp.MustCompile(`(?i)already submitted`),
		DuplicateOf:      regexp.MustCompile(testDuplicateOf),
	}
}

// run runs the engine over src with api and a fresh fake journal.
func run(t *testing.T, ctx context.Context, cfg Config, src *fakeSource, api *fakeAPI) (Result, *fakeJournal, error) {
	t.Helper()
	j := &fakeJournal{}
	res, err := Run(ctx, cfg, src, api, j)
	if !j.compacted {
		t.Errorf("Run did not compact the journal")
	}
	return res, j, err
}

// checkAccounting fails unless every row read has exactly one status.
func checkAccounting(t *testing.T, s summary.Summary) {
	t.Helper()
	if err := s.Check(); err != nil {
		t.Errorf("summary accounting: %v", err)
	}
}

var errBoom = errors.New("boom")

// noteOf is a row's note followed by each of the engine's notes in braces,
// for a test to search: "income too low {createLead was sent 3 times ...}".
func noteOf(r lead.Row) string {
	s := r.Note
	for _, n := range r.EngineNotes {
		s += " {" + n + "}"
	}
	return s
}
