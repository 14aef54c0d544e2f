package ledger

import (
	"cmp"
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
// leads it holds), claims leads and records their answers. ClaimBatch,
// Claim and Record are safe for concurrent use: one goroutine writes them
// to the ledger, as many as are waiting in one transaction (a group
// commit), with statements of many rows each.
type Run struct {
	ID int64

	l       *Ledger
	st      *stmts
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
	// dead caches runs found dead (they stay dead). The writer's alone.
	dead map[int64]bool
	// batch writes the many-row statements (the writer's alone).
	batch batcher
	// merged and at are the writer's scratch, reused from one
	// transaction to the next: the garbage of many-row statements made
	// the upload's collector run a third more often.
	merged []Answer
	at     map[string]int
}

// ClaimItem is one lead a run is about to send: its key and its row.
type ClaimItem struct {
	Key Key
	Row int
}

type claimReq struct {
	items []ClaimItem
	res   chan claimRes
}

type claimRes struct {
	ds  []Decision
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
const batchMax = 512

// answerLinger is the longest an answer waits for others to share its
// transaction.
const answerLinger = 200 * time.Millisecond

// claimChunk bounds the claims of one many-row statement: a statement
// that did not insert every row is read back row by row
// (Run.insertClaims).
const claimChunk = 64

// The columns of the many-row statements, and what an answer does to a
// lead the ledger holds (an empty value keeps what is there).
const (
	claimCols  = `account_id, lead_key, lead_id, content_hash, state, run_id, row_no, claimed_at`
	answerCols = `account_id, lead_key, lead_id, content_hash, state, ambiguous, service_id, result_code, bid, run_id, row_no, claimed_at, answered_at, sent_run_id, sent_at`
	answerSet  = ` ON CONFLICT (account_id, lead_key) DO UPDATE SET
	state = excluded.state, ambiguous = excluded.ambiguous,
	content_hash = CASE WHEN excluded.content_hash <> '' THEN excluded.content_hash ELSE leads.content_hash END,
	service_id = CASE WHEN excluded.service_id <> '' THEN excluded.service_id ELSE leads.service_id END,
	result_code = CASE WHEN excluded.result_code <> 0 THEN excluded.result_code ELSE leads.result_code END,
	bid = CASE WHEN excluded.bid <> '' THEN excluded.bid ELSE leads.bid END,
	run_id = excluded.run_id, row_no = excluded.row_no, answered_at = excluded.answered_at,
	sent_run_id = CASE WHEN excluded.sent_run_id <> 0 THEN excluded.sent_run_id ELSE leads.sent_run_id END,
	sent_at = CASE WHEN excluded.sent_run_id <> 0 THEN excluded.sent_at ELSE leads.sent_at END`
	claimSelSQL = `SELECT state, content_hash, ambiguous, run_id, service_id, result_code, bid, sent_run_id, sent_at, COALESCE(r.results, ''), row_no
FROM leads LEFT JOIN runs r ON r.id = leads.sent_run_id
WHERE leads.account_id = ? AND leads.lead_key = ?`
	claimUpdSQL = `UPDATE leads SET state = ?, run_id = ?, row_no = ?, claimed_at = ?,
	content_hash = CASE WHEN ? <> '' THEN ? ELSE content_hash END
WHERE account_id = ? AND lead_key = ?`
)

// stmts are a run's prepared statements of the claim of a lead the
// ledger holds already (Run.claimHeld): its select and its update.
type stmts struct {
	claimSel, claimUpd *sql.Stmt
}

// prepare prepares a run's statements in the ledger's dialect.
func (l *Ledger) prepare(ctx context.Context) (*stmts, error) {
	st := &stmts{}
	prep := func(dst **sql.Stmt, q string) error {
		s, err := l.db.PrepareContext(ctx, l.d.rebind(q))
		if err != nil {
			return l.d.classify(err)
		}
		*dst = s
		return nil
	}
	err := errors.Join(prep(&st.claimSel, claimSelSQL+l.d.forUpdate()), prep(&st.claimUpd, claimUpdSQL))
	if err != nil {
		st.close()
		return nil, err
	}
	return st, nil
}

func (st *stmts) close() {
	for _, s := range []*sql.Stmt{st.claimSel, st.claimUpd} {
		if s != nil {
			s.Close()
		}
	}
}

// batcher writes the many-row statements of a run's transactions on the
// driver's own connection (sql.Conn.Raw), within the transaction
// database/sql began on it: database/sql converted and copied every
// argument of every statement (hundreds), a share of the writer's CPU and
// most of its garbage (bench/README.md, the ledger). Each store has its own (sqliteBatch,
// pgBatch), made for one run (its account and id); the run's writer alone
// uses it.
type batcher interface {
	// claimChunk and answerChunk are the number of rows of the next
	// statement of claims or answers, n (> 0) left to write.
	claimChunk(n int) int
	answerChunk(n int) int
	// claims inserts items (a chunk) as the run's claims at now, leaving
	// a lead the ledger holds as it is, and returns how many it inserted.
	claims(ctx context.Context, dc any, items []ClaimItem, now int64) (int64, error)
	// answers writes answers (a chunk, one per lead) at now: each lead's
	// state, and when the run created it, the run and time it was sent.
	answers(ctx context.Context, dc any, answers []Answer, now int64) error
	// close releases what it holds on the driver's connection dc.
	close(dc any)
}

// eachChunk calls f for each chunk [start, end) of n items, of the sizes
// size gives, in order.
func eachChunk(n int, size func(int) int, f func(start, end int) error) error {
	for start := 0; start < n; {
		end := start + size(n-start)
		if err := f(start, end); err != nil {
			return err
		}
		start = end
	}
	return nil
}

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
	st, err := l.prepare(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", l.where, err)
	}
	release, err := l.d.hold(ctx, l.db, id)
	if err != nil {
		st.close()
		return nil, fmt.Errorf("ledger %s: %w", l.where, err)
	}
	r := &Run{ID: id, l: l, st: st, account: acct, release: release, policy: policy, batch: l.d.batcher(acct, id),
		claims: make(chan *claimReq), answers: make(chan Answer, batchMax), flushes: make(chan chan error), stop: make(chan struct{}), done: make(chan struct{}), dead: map[int64]bool{}}
	go r.write()
	return r, nil
}

// KeyOf is the key of a lead of this run (Ledger.KeyOf).
func (r *Run) KeyOf(leadID string, in lead.Input) Key { return r.l.KeyOf(leadID, in) }

// ClaimBatch asks the ledger about leads this run is about to send, in one
// transaction (with whatever else is waiting), and holds for this run
// those it may go on with (Send, Submit): two runs never both get Send or
// Submit for one lead. A lead a live run holds (this one included: a row
// of the same content twice in one input) is Busy: ask again later. An
// error means the ledger cannot be written: the run must stop before it
// sends them.
func (r *Run) ClaimBatch(ctx context.Context, items []ClaimItem) ([]Decision, error) {
	req := &claimReq{items: items, res: make(chan claimRes, 1)}
	select {
	case r.claims <- req:
	case <-r.done:
		return nil, r.failed()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	res := <-req.res
	return res.ds, res.err
}

// Claim is ClaimBatch for one lead, waiting while a live run holds it
// (polling, from Config.Poll to a second apart, until ctx ends).
func (r *Run) Claim(ctx context.Context, key Key, row int) (Decision, error) {
	wait := r.l.poll
	for {
		ds, err := r.ClaimBatch(ctx, []ClaimItem{{Key: key, Row: row}})
		if err != nil || ds[0].Kind != Busy {
			if err != nil {
				return Decision{}, err
			}
			return ds[0], nil
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

// write is the one goroutine that writes the run's claims and answers.
// Claims go at once, with the answers waiting; answers alone wait for the
// next claim, batchMax of them, answerLinger, a Flush or End: an answer is
// no hurry (a lost one is settled by the next run), and one transaction
// for many is cheaper than one each.
func (r *Run) write() {
	defer close(r.done)
	var answers []Answer
	var linger *time.Timer
	var lingerC <-chan time.Time
	stopLinger := func() {
		if linger != nil {
			linger.Stop()
		}
		linger, lingerC = nil, nil
	}
	drainAnswers := func() {
		for {
			select {
			case a := <-r.answers:
				answers = append(answers, a)
			default:
				return
			}
		}
	}
	commitAnswers := func() {
		stopLinger()
		if len(answers) > 0 && r.errOf() == nil {
			if err := r.commit(nil, answers); err != nil {
				r.fail(err)
			}
		}
		clear(answers)
		answers = answers[:0]
	}
	for {
		var claims []*claimReq
		select {
		case c := <-r.claims:
			claims = append(claims, c)
		case a := <-r.answers:
			answers = append(answers, a)
			if len(answers) >= batchMax {
				commitAnswers()
			} else if linger == nil {
				linger = time.NewTimer(answerLinger)
				lingerC = linger.C
			}
			continue
		case <-lingerC:
			commitAnswers()
			continue
		case f := <-r.flushes:
			// Every answer recorded before Flush is in the channel.
			drainAnswers()
			commitAnswers()
			f <- r.errOf()
			continue
		case <-r.stop:
			// The answers recorded before End go in.
			drainAnswers()
			commitAnswers()
			return
		}
	gather:
		for n := len(claims[0].items); n < batchMax; {
			select {
			case c := <-r.claims:
				claims = append(claims, c)
				n += len(c.items)
			default:
				break gather
			}
		}
		drainAnswers()
		stopLinger()
		err := r.errOf()
		if err == nil {
			if err = r.commit(claims, answers); err != nil {
				r.fail(err)
				err = r.failed()
			}
		}
		if err != nil {
			for _, c := range claims {
				c.res <- claimRes{err: err}
			}
		}
		clear(answers)
		answers = answers[:0]
	}
}

// commit writes answers, then decides claims, in one transaction, and
// answers each claim once it is committed. A transaction that another got
// in the way of (retryable) runs again.
func (r *Run) commit(claims []*claimReq, answers []Answer) error {
	var items []ClaimItem
	for _, c := range claims {
		items = append(items, c.items...)
	}
	answers = r.mergeAnswers(answers)
	var ds []Decision
	var err error
	for range 10 {
		if ds, err = r.commitOnce(items, answers); !retryable(err) {
			break
		}
	}
	if err != nil {
		return err
	}
	for _, c := range claims {
		c.res <- claimRes{ds: ds[:len(c.items):len(c.items)]}
		ds = ds[len(c.items):]
	}
	return nil
}

// mergeAnswers keeps one answer per lead, the last, with what the earlier
// ones said that it does not (a created lead's id and when it was sent):
// a qualified lead's created and submitted answers are one write.
func (r *Run) mergeAnswers(answers []Answer) []Answer {
	if r.at == nil {
		r.at = make(map[string]int, batchMax)
	}
	at := r.at
	clear(at)
	clear(r.merged) // the last transaction's, done with
	out := r.merged[:0]
	defer func() { r.merged = out }()
	for _, a := range answers {
		i, ok := at[a.Key.Lead]
		if !ok {
			at[a.Key.Lead] = len(out)
			out = append(out, a)
			continue
		}
		p := out[i]
		a.Created = a.Created || p.Created
		a.Key.Hash = cmp.Or(a.Key.Hash, p.Key.Hash)
		a.ServiceID, a.Bid = cmp.Or(a.ServiceID, p.ServiceID), cmp.Or(a.Bid, p.Bid)
		a.ResultCode = cmp.Or(a.ResultCode, p.ResultCode)
		out[i] = a
	}
	return out
}

func (r *Run) commitOnce(items []ClaimItem, answers []Answer) ([]Decision, error) {
	ctx := context.Background()
	l := r.l
	conn, err := l.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	now := l.now().UnixMilli()
	var mixed [][2]int
	err = conn.Raw(func(dc any) error {
		if err := eachChunk(len(answers), r.batch.answerChunk, func(start, end int) error {
			return r.batch.answers(ctx, dc, answers[start:end], now)
		}); err != nil {
			return err
		}
		var err error
		mixed, err = r.insertClaims(ctx, dc, items, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	ds := make([]Decision, len(items))
	for i, it := range items {
		ds[i].Key = it.Key
	}
	for _, m := range mixed {
		for i := m[0]; i < m[1]; i++ {
			if ds[i], err = r.claimHeld(ctx, tx, items[i], now); err != nil {
				return nil, err
			}
		}
	}
	return ds, tx.Commit()
}

// insertClaims inserts items as this run's claims, many in one statement,
// and returns the chunks [start, end) of items that met leads the ledger
// holds: claimHeld decides each of their rows. A statement that inserted
// every row of its chunk (the common case: new leads) needs nothing more;
// the rows of one that did not are read back, and a row this statement
// inserted is known by its holder (this run), state (claimed) and row: no
// earlier claim of this run holds a lead for the same row (a row is
// claimed again only when it was Busy, which this run's claim of it never
// made).
func (r *Run) insertClaims(ctx context.Context, dc any, items []ClaimItem, now int64) ([][2]int, error) {
	var mixed [][2]int
	err := eachChunk(len(items), r.batch.claimChunk, func(start, end int) error {
		n, err := r.batch.claims(ctx, dc, items[start:end], now)
		if err == nil && n != int64(end-start) {
			mixed = append(mixed, [2]int{start, end})
		}
		return err
	})
	return mixed, err
}

// claimHeld decides the claim of a lead that a claim insert did not
// insert, or did (then it is this run's: Send).
func (r *Run) claimHeld(ctx context.Context, tx *sql.Tx, it ClaimItem, now int64) (Decision, error) {
	d := Decision{Key: it.Key}
	var (
		h       held
		state   string
		amb     int
		e       Earlier
		sentAt  int64
		results string
		rowNo   int64
	)
	if err := tx.StmtContext(ctx, r.st.claimSel).QueryRowContext(ctx, r.account, it.Key.Lead).Scan(&state, &h.hash, &amb, &h.run, &e.ServiceID, &e.ResultCode, &e.Bid, &e.Run, &sentAt, &results, &rowNo); err != nil {
		return d, err
	}
	h.state, h.ambiguous = State(state), amb != 0
	if h.state == StateClaimed && h.run == r.ID && rowNo == int64(it.Row) {
		// The claim insert of this transaction made it: new, and this
		// run's.
		return d, nil
	}
	e.State, e.Results = h.state, results
	if sentAt != 0 {
		e.At = time.UnixMilli(sentAt)
	}
	if h.run == e.Run {
		e.Row = int(rowNo)
	}
	switch {
	case h.state != StateClaimed && h.state != StateCreated:
	case h.run == r.ID:
		// This run holds it: the same lead twice in one input (a row of
		// the same content without a leadId). It waits for the first.
		h.alive = true
	default:
		var err error
		if h.alive, err = r.alive(ctx, tx, h.run); err != nil {
			return d, err
		}
	}
	var take bool
	d.Kind, d.Ambiguous, take = decide(h, it.Key.Hash, r.policy)
	if d.Kind != Send && d.Kind != Busy {
		d.Earlier = &e
	}
	if !take {
		return d, nil
	}
	state = string(StateClaimed)
	if d.Kind == Submit {
		state = string(h.state) // it stays created or submit_failed: only its holder changes
	}
	_, err := tx.StmtContext(ctx, r.st.claimUpd).ExecContext(ctx, state, r.ID, it.Row, now, it.Key.Hash, it.Key.Hash, r.account, it.Key.Lead)
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
	r.st.close()
	if conn, cerr := r.l.db.Conn(ctx); cerr == nil {
		_ = conn.Raw(func(dc any) error { r.batch.close(dc); return nil })
		conn.Close()
	}
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
