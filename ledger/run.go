package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/bulkload/bulkload/lead"
)

// RunInfo is what a run records of itself when it begins.
type RunInfo struct {
	Account Account
	// Command is "upload".
	Command string
	// Input is the input as given ("-" for standard input); Results the
	// results file, absolute; JobName the job's name (the metrics'
	// job_name, which `bulkload history --partner` matches); Shard
	// "K-of-N" or "".
	Input, Results, JobName, Shard string
}

// Run is one run in the ledger, from BeginRun to End: it records the run,
// shows that it is alive while it goes on (another run waits for the
// leads it holds), claims leads and records their answers. Claim and
// Record are safe for concurrent use: one goroutine writes them to the
// ledger, many at a time in one transaction (a group commit).
type Run struct {
	ID int64

	l       *Ledger
	account int64
	release func()
	policy  ClaimPolicy

	claims  chan *claimReq
	answers chan Answer
	flushes chan chan error
	stop    chan struct{}
	done    chan struct{}

	mu  sync.Mutex
	err error // the first write that failed: every later claim fails with it
	// dead caches runs found dead (they stay dead).
	dead map[int64]bool
}

type claimReq struct {
	key Key
	row int
	res chan claimRes
}

type claimRes struct {
	d   Decision
	err error
}

// Answer is what became of a lead this run claimed (or submitted from its
// results file): its row's status and the service's answer.
type Answer struct {
	Key Key
	Row int
	// Status is the row's status (created, processed, submitted,
	// submit_failed, failed, unverified); others are not recorded.
	Status lead.Status
	// Created: this run's createLead created the lead (it answered with
	// one): the lead was sent by this run, at this time.
	Created    bool
	ServiceID  string
	ResultCode int
	Bid        string
	// Ambiguous: a failed createLead may have reached the service.
	Ambiguous bool
}

// batchMax bounds the claims or answers written in one transaction.
const batchMax = 256

// BeginRun records a run of account a and starts holding it alive. The
// caller ends it with End, whatever happens.
func (l *Ledger) BeginRun(ctx context.Context, info RunInfo, policy ClaimPolicy) (*Run, error) {
	acct, err := l.account(ctx, info.Account)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", l.where, err)
	}
	q := l.d.rebind(`INSERT INTO runs (account_id, command, host, pid, input, results, job_name, shard, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`)
	var id int64
	if err := l.db.QueryRowContext(ctx, q, acct, info.Command, hostname(), os.Getpid(), info.Input, info.Results, info.JobName, info.Shard, l.now().UnixMilli()).Scan(&id); err != nil {
		return nil, fmt.Errorf("ledger %s: record the run: %w", l.where, l.d.classify(err))
	}
	release, err := l.d.hold(ctx, l.db, id)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", l.where, err)
	}
	r := &Run{ID: id, l: l, account: acct, release: release, policy: policy,
		claims: make(chan *claimReq), answers: make(chan Answer, batchMax), flushes: make(chan chan error), stop: make(chan struct{}), done: make(chan struct{}), dead: map[int64]bool{}}
	go r.write()
	return r, nil
}

// KeyOf is the key of a lead of this run (Ledger.KeyOf).
func (r *Run) KeyOf(leadID string, in lead.Input) Key { return r.l.KeyOf(leadID, in) }

// Claim asks the ledger about a lead this run is about to send and, when
// the run may go on with it (Send, Submit), holds it for this run, in one
// transaction with other claims: two runs never both get Send or Submit
// for one lead. A lead a live run holds is waited for (polling, until ctx
// ends). An error means the ledger cannot be written: the run must stop
// before it sends the lead.
func (r *Run) Claim(ctx context.Context, key Key, row int) (Decision, error) {
	wait := r.l.poll
	for {
		req := &claimReq{key: key, row: row, res: make(chan claimRes, 1)}
		select {
		case r.claims <- req:
		case <-r.done:
			return Decision{}, r.failed()
		case <-ctx.Done():
			return Decision{}, ctx.Err()
		}
		res := <-req.res
		if res.err != nil || res.d.Kind != busy {
			return res.d, res.err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Decision{}, ctx.Err()
		}
		wait = min(2*wait, time.Second)
	}
}

// Record records the answer of a lead, soon: a lost record leaves the lead
// claimed, which the next run settles (Decision.Ambiguous). It waits only
// while the writer is behind by batchMax answers.
func (r *Run) Record(a Answer) {
	switch a.Status {
	case lead.StatusCreated, lead.StatusProcessed, lead.StatusSubmitted, lead.StatusSubmitFailed, lead.StatusFailed, lead.StatusUnverified:
	default:
		return
	}
	select {
	case r.answers <- a:
	case <-r.done:
	}
}

// failed is the error of a claim after the writer stopped.
func (r *Run) failed() error {
	if err := r.errOf(); err != nil {
		return err
	}
	return errors.New("the run's ledger writer stopped")
}

// errOf is the first write that failed, nil while none did.
func (r *Run) errOf() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *Run) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = fmt.Errorf("ledger %s: %w", r.l.where, r.l.d.classify(err))
	}
}

// write is the one goroutine that writes the run's claims and answers:
// whatever is waiting goes in one transaction.
func (r *Run) write() {
	defer close(r.done)
	for {
		var claims []*claimReq
		var answers []Answer
		select {
		case c := <-r.claims:
			claims = append(claims, c)
		case a := <-r.answers:
			answers = append(answers, a)
		case f := <-r.flushes:
			// Every answer recorded before Flush is in the channel.
			for len(r.answers) > 0 {
				answers = append(answers, <-r.answers)
			}
			if len(answers) > 0 && r.errOf() == nil {
				if err := r.commit(nil, answers); err != nil {
					r.fail(err)
				}
			}
			f <- r.errOf()
			continue
		case <-r.stop:
			// The answers recorded before End go in.
		drain:
			for {
				select {
				case a := <-r.answers:
					answers = append(answers, a)
				default:
					break drain
				}
			}
			if len(answers) > 0 && r.errOf() == nil {
				if err := r.commit(nil, answers); err != nil {
					r.fail(err)
				}
			}
			return
		}
	gather:
		for len(claims)+len(answers) < batchMax {
			select {
			case c := <-r.claims:
				claims = append(claims, c)
			case a := <-r.answers:
				answers = append(answers, a)
			default:
				break gather
			}
		}
		if err := r.errOf(); err != nil {
			for _, c := range claims {
				c.res <- claimRes{err: err}
			}
			continue
		}
		if err := r.commit(claims, answers); err != nil {
			r.fail(err)
			err = r.failed()
			for _, c := range claims {
				c.res <- claimRes{err: err}
			}
		}
	}
}

// commit writes answers, then decides claims, in one transaction, and
// answers each claim once it is committed. A transaction that another got
// in the way of (retryable) runs again.
func (r *Run) commit(claims []*claimReq, answers []Answer) error {
	var err error
	for range 10 {
		if err = r.commitOnce(claims, answers); !retryable(err) {
			return err
		}
	}
	return err
}

func (r *Run) commitOnce(claims []*claimReq, answers []Answer) error {
	ctx := context.Background()
	l := r.l
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := l.now().UnixMilli()
	for _, a := range answers {
		if err := r.answer(ctx, tx, a, now); err != nil {
			return err
		}
	}
	ds := make([]Decision, len(claims))
	for i, c := range claims {
		if ds[i], err = r.claim(ctx, tx, c, now); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	for i, c := range claims {
		c.res <- claimRes{d: ds[i]}
	}
	return nil
}

// answer writes one answer: the lead's state, and when this run created
// it, the run and time it was sent.
func (r *Run) answer(ctx context.Context, tx *sql.Tx, a Answer, now int64) error {
	sentRun, sentAt := int64(0), int64(0)
	if a.Created {
		sentRun, sentAt = r.ID, now
	}
	q := r.l.d.rebind(`INSERT INTO leads (account_id, lead_key, lead_id, content_hash, state, ambiguous, service_id, result_code, bid, run_id, row_no, claimed_at, answered_at, sent_run_id, sent_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (account_id, lead_key) DO UPDATE SET
	state = excluded.state, ambiguous = excluded.ambiguous,
	content_hash = CASE WHEN excluded.content_hash <> '' THEN excluded.content_hash ELSE leads.content_hash END,
	service_id = CASE WHEN excluded.service_id <> '' THEN excluded.service_id ELSE leads.service_id END,
	result_code = CASE WHEN excluded.result_code <> 0 THEN excluded.result_code ELSE leads.result_code END,
	bid = CASE WHEN excluded.bid <> '' THEN excluded.bid ELSE leads.bid END,
	run_id = excluded.run_id, row_no = excluded.row_no, answered_at = excluded.answered_at,
	sent_run_id = CASE WHEN excluded.sent_run_id <> 0 THEN excluded.sent_run_id ELSE leads.sent_run_id END,
	sent_at = CASE WHEN excluded.sent_run_id <> 0 THEN excluded.sent_at ELSE leads.sent_at END`)
	_, err := tx.ExecContext(ctx, q, r.account, a.Key.Lead, a.Key.LeadID, a.Key.Hash, string(a.Status), boolInt(a.Ambiguous),
		a.ServiceID, a.ResultCode, a.Bid, r.ID, a.Row, now, now, sentRun, sentAt)
	return err
}

// claim decides one claim within tx (decide) and, when the run takes the
// lead, records it as this run's.
func (r *Run) claim(ctx context.Context, tx *sql.Tx, c *claimReq, now int64) (Decision, error) {
	l := r.l
	d := Decision{Key: c.key}
	ins := l.d.rebind(`INSERT INTO leads (account_id, lead_key, lead_id, content_hash, state, run_id, row_no, claimed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, lead_key) DO NOTHING`)
	res, err := tx.ExecContext(ctx, ins, r.account, c.key.Lead, c.key.LeadID, c.key.Hash, string(StateClaimed), r.ID, c.row, now)
	if err != nil {
		return d, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return d, err // a lead the ledger has never seen: Send
	}
	sel := l.d.rebind(`SELECT state, content_hash, ambiguous, run_id, service_id, result_code, bid, sent_run_id, sent_at, COALESCE(r.results, ''), row_no
FROM leads LEFT JOIN runs r ON r.id = leads.sent_run_id
WHERE leads.account_id = ? AND leads.lead_key = ?` + l.d.forUpdate())
	var (
		h       held
		state   string
		amb     int
		e       Earlier
		sentAt  int64
		results string
		rowNo   int64
	)
	if err := tx.QueryRowContext(ctx, sel, r.account, c.key.Lead).Scan(&state, &h.hash, &amb, &h.run, &e.ServiceID, &e.ResultCode, &e.Bid, &e.Run, &sentAt, &results, &rowNo); err != nil {
		return d, err
	}
	h.state, h.ambiguous = State(state), amb != 0
	e.State, e.Results = h.state, results
	if sentAt != 0 {
		e.At = time.UnixMilli(sentAt)
	}
	if h.run == e.Run {
		e.Row = int(rowNo)
	}
	if h.run != r.ID && (h.state == StateClaimed || h.state == StateCreated) {
		if h.alive, err = r.alive(ctx, tx, h.run); err != nil {
			return d, err
		}
	}
	var take bool
	d.Kind, d.Ambiguous, take = decide(h, c.key.Hash, r.policy)
	if d.Kind != Send {
		d.Earlier = &e
	}
	if !take {
		return d, nil
	}
	state = string(StateClaimed)
	if d.Kind == Submit {
		state = string(h.state) // it stays created or submit_failed: only its holder changes
	}
	upd := l.d.rebind(`UPDATE leads SET state = ?, run_id = ?, row_no = ?, claimed_at = ?,
	content_hash = CASE WHEN ? <> '' THEN ? ELSE content_hash END
WHERE account_id = ? AND lead_key = ?`)
	_, err = tx.ExecContext(ctx, upd, state, r.ID, c.row, now, c.key.Hash, c.key.Hash, r.account, c.key.Lead)
	return d, err
}

// alive reports whether run id (another run) is alive, remembering the
// dead.
func (r *Run) alive(ctx context.Context, q querier, id int64) (bool, error) {
	if r.dead[id] {
		return false, nil
	}
	ok, err := r.l.d.alive(ctx, q, id)
	if err == nil && !ok {
		r.dead[id] = true
	}
	return ok, err
}

// SetInput records the SHA-256 of the run's input as soon as it is known
// (before the first call), so that a later run of the same input finds
// this one even if it is killed.
func (r *Run) SetInput(ctx context.Context, sha string) error {
	_, err := r.l.db.ExecContext(ctx, r.l.d.rebind(`UPDATE runs SET input_sha256 = ? WHERE id = ?`), sha, r.ID)
	if err != nil {
		return fmt.Errorf("ledger %s: %w", r.l.where, r.l.d.classify(err))
	}
	return nil
}

// Flush waits until every answer recorded so far is in the ledger, and
// returns the first write of the run that failed, if any.
func (r *Run) Flush(ctx context.Context) error {
	res := make(chan error, 1)
	select {
	case r.flushes <- res:
	case <-r.done:
		return r.errOf()
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-res
}

// End records the answers still on their way and the run's end: its exit
// status and its summary (the --summary-json JSON), and stops holding it
// alive. It returns the first write of the run that failed, if any.
func (r *Run) End(ctx context.Context, exitCode int, summary []byte, inputSHA256 string) error {
	close(r.stop)
	<-r.done
	werr := r.errOf()
	q := r.l.d.rebind(`UPDATE runs SET ended_at = ?, exit_code = ?, summary = ?, input_sha256 = ? WHERE id = ?`)
	var sum any
	if summary != nil {
		sum = string(summary)
	}
	_, err := r.l.db.ExecContext(ctx, q, r.l.now().UnixMilli(), exitCode, sum, inputSHA256, r.ID)
	r.release()
	if err != nil {
		err = fmt.Errorf("ledger %s: record the run's end: %w", r.l.where, r.l.d.classify(err))
	}
	return errors.Join(werr, err)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
