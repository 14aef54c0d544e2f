package upload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/ledger"
	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/source"
	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
)

// engine is one run's state.
type engine struct {
	cfg Config
	api API
	log *slog.Logger

	sum summary.Summary // the writer goroutine's alone until the pipeline ends
	// read counts the rows the producer took from the input: every one of
	// them must end with exactly one final status, or the summary's
	// accounting says how many did not (after an interrupt: the rows read
	// but not sent, which --resume sends). Producer only.
	read int
	// otherShards counts the rows read that belong to another shard: not
	// sent, not journalled, counted apart in the accounting.
	otherShards int
	// skipped counts rows a resumed run found finished. Producer only.
	skipped int
	// notSent counts rows read but deliberately not sent because the run
	// stopped; the accounting adds them, so that it stays a real check.
	notSent atomic.Int64
	// deferred names the rows not sent because the service asked a call
	// of theirs to come back later than the run waits (deferRow); under
	// deferMu, into the summary when the pipeline ends.
	deferMu  sync.Mutex
	deferred summary.RowList
	// incomplete is the input's end before its last row, which the file
	// still being written cut short (source.ErrInputIncomplete): the rows
	// before it go on as at the end of the input, and Run returns it.
	// Producer only, until the pipeline ends.
	incomplete error

	// halt stops the taking of rows, with the reason (Run's error); the
	// first reason wins. Safe for concurrent use.
	halt func(error)
	// inFlight counts the rows being sent (a worker in work), for the
	// timeline; timeline records the run over time (sample).
	inFlight atomic.Int64
	timeline *summary.TimelineRecorder
}

// job is one valid row for the workers.
type job struct {
	row   lead.Row
	input lead.Input
	// prior is the row's last line in the results file of an earlier run
	// when that run created the lead but did not finish submitting it.
	prior *lead.Row
	// ambiguous: an earlier attempt at createLead may have reached the
	// service (every row a resumed run sends: see plan), so a duplicate
	// answer may be this row's own lead and gets the own-lead check.
	ambiguous bool
	// recheck is an earlier run's unverified line whose duplicate answer
	// names the lead it duplicates: that lead is read again, nothing is
	// created.
	recheck *lead.Row
	// kept: the row's cells fail validation now, but an earlier run
	// created its lead (prior), which is submitted all the same.
	kept bool
	// key is the row's lead in the ledger (Config.Ledger), claimed by the
	// claimer for this run; nil without a ledger.
	key *ledger.Key
}

// line is one line for the results journal. A worker that must not go on
// before the line is on disk (a created lead, before submitLead) waits on
// written.
type line struct {
	row       lead.Row
	countOnly bool       // a row finished in an earlier run: count it, write nothing
	kept      bool       // the row's lead exists though its cells fail validation now (job.kept)
	written   chan error // when set, the writer answers once the line is written (or not)
	// key is the row's lead in the ledger (Config.Ledger), nil without
	// one: the writer records the line's answer there once it is written.
	// created: this line is the first with the lead this run's createLead
	// created (the ledger keeps when and by which run it was sent).
	key     *ledger.Key
	created bool
}

// pipeline reads rows, sends the valid ones through a pool of workers and
// journals every outcome. ctx ends when no more rows are to be taken (the
// first signal, the gate's stop, an input that cannot be read on); workCtx ends
// when the drain time is over or on a fatal error.
func (e *engine) pipeline(ctx, workCtx context.Context, src Source, journal Journal) error {
	// runCtx ends at the first fatal error, wherever it happens: refused
	// credentials (a worker), an unwritable results file (the writer), a
	// foreign journal (the producer). An input that cannot be read on only
	// stops the reading: the calls in flight finish and are recorded.
	runCtx, failRun := context.WithCancelCause(workCtx)
	defer failRun(nil)
	g, gctx := errgroup.WithContext(runCtx)
	jobs := make(chan job, e.cfg.Concurrency)
	lines := make(chan line, 4*e.cfg.Concurrency)

	// The producer stops taking rows at the first signal or when the run
	// fails; readCtx ends on either, so that an idle standard input holds
	// off neither.
	readCtx, cancelRead := context.WithCancel(gctx)
	defer cancelRead()
	defer context.AfterFunc(ctx, cancelRead)()
	planned := jobs
	if e.cfg.Ledger != nil {
		// The claimer stands between the producer and the workers: it
		// claims the rows queued for them in the ledger, many in one
		// transaction, before any is sent.
		planned = make(chan job, claimBatch)
		g.Go(func() error {
			defer close(jobs)
			return e.claimer(ctx, gctx, planned, jobs, lines)
		})
	}
	g.Go(func() error {
		defer close(planned)
		return e.produce(ctx, gctx, readCtx, src, planned, lines)
	})
	g.Go(func() error {
		defer close(lines)
		return e.runPool(ctx, gctx, jobs, lines)
	})
	g.Go(func() error { return e.writeLines(lines, journal, failRun) })
	return g.Wait()
}

// produce is the only reader of the input: it plans each row (plan) and
// hands a job to the workers or a line to the writer. It returns nil at the
// end of the input, at the first signal (ctx) or when the run fails (gctx);
// an input that cannot be read on halts the run (halt) and also returns
// nil, so that the calls in flight drain; only a plan's error (a foreign
// journal) is returned.
func (e *engine) produce(ctx, gctx, readCtx context.Context, src Source, jobs chan<- job, lines chan<- line) error {
	for {
		if ctx.Err() != nil || gctx.Err() != nil {
			return nil
		}
		it, err := src.Next(readCtx)
		if errors.Is(err, io.EOF) || ctx.Err() != nil || gctx.Err() != nil {
			return nil // end of input, or interrupted: calls in flight drain
		}
		if errors.Is(err, source.ErrInputIncomplete) {
			e.incomplete = err
			return nil
		}
		if err != nil {
			e.halt(err)
			return nil
		}
		e.read++
		if !e.cfg.Shard.Takes(it.Row.Row, it.Row.LeadID) {
			e.otherShards++
			continue
		}
		j, l, err := e.plan(it)
		if err != nil {
			return err
		}
		if l != nil {
			lines <- *l
			continue
		}
		select {
		case jobs <- j:
		case <-gctx.Done():
			e.notSent.Add(1)
			return nil
		}
	}
}

// runPool runs exactly --concurrency long-lived workers over jobs (a
// goroutine per row would grow a fresh stack through the HTTP path for
// every row). A row's failure is a value; only a fatal error is returned,
// and it cancels the other workers. A job not sent (interrupted, failing)
// counts as not sent: --resume sends it.
func (e *engine) runPool(ctx, gctx context.Context, jobs <-chan job, lines chan<- line) error {
	pool, pctx := errgroup.WithContext(gctx)
	pool.SetLimit(e.cfg.Concurrency)
	for range e.cfg.Concurrency {
		pool.Go(func() error {
			for j := range jobs {
				if ctx.Err() != nil || pctx.Err() != nil || !e.waitUp(ctx) {
					e.notSent.Add(1)
					continue
				}
				e.inFlight.Add(1)
				err := e.work(pctx, j, lines)
				e.inFlight.Add(-1)
				if submitter.IsAccessDenied(err) {
					// The service refuses the application's access: every
					// row would be refused alike. No new row is taken, as
					// for an outage; the calls in flight end as they must
					// (an answer recorded, a lead that may exist kept),
					// and the run stops as for refused credentials.
					e.halt(fmt.Errorf("%w; rows not sent stay for a resumed run", err))
					continue
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	err := pool.Wait()
	for range jobs {
		// A worker that failed left jobs behind: drain them so the
		// producer never blocks.
		e.notSent.Add(1)
	}
	return err
}

// waitUp holds a worker back, before it takes a new row, while the service
// is away (Config.Gate), and reports whether it may go on. A run that stops
// waiting, or a stop (ctx), says no.
func (e *engine) waitUp(ctx context.Context) bool {
	if e.cfg.Gate == nil {
		return true
	}
	err := e.cfg.Gate.WaitUp(ctx)
	if err != nil {
		e.outageStop(err)
	}
	return err == nil
}

// outageStop takes note of a call (or a wait) that ended because the run
// stopped waiting for the service (the gate's verdict, Config.Gate): when
// an outage lasted too long, the run stops (ErrOutage, exit 4), and when
// calls in a row failed as if the service were gone, it stops as
// unreachable (ErrUnreachable, exit 4); rows not sent are left for
// --resume. A stop for another reason (a signal, while the call waited)
// is that reason's.
func (e *engine) outageStop(err error) {
	var oe *submitter.OutageError
	switch {
	case !errors.As(err, &oe), oe.Stopped:
	case oe.Calls > 0 && oe.Deferred:
		e.halt(fmt.Errorf("%w: %w; rows not sent stay for a resumed run", ErrOutage, oe))
	case oe.Calls > 0:
		e.halt(fmt.Errorf("%w: %d calls in a row failed (the last: %w); rows not sent stay for a resumed run", ErrUnreachable, oe.Calls, oe.Last))
	default:
		e.halt(fmt.Errorf("%w: %w; rows not sent stay for a resumed run", ErrOutage, oe))
	}
}

// deferredRow reports whether err is a call the service asked to come
// back later than the run waits (submitter.IsDeferred) with nothing of it
// known to have reached the service: the row leaves without a line, not
// sent (deferRow), for --resume. One that may have reached the service
// (Ambiguous) is not: its lead may exist (unverified).
func deferredRow(err error) bool {
	var ce *submitter.CallError
	return submitter.IsDeferred(err) && errors.As(err, &ce) && !ce.Ambiguous
}

// deferRow counts row as left for a resumed run because the service asked
// its call (err) to come back later than the run waits, and says so: the
// first at WARN, the others at DEBUG (a tenth of a large file would be
// thousands of lines; the summary names them).
func (e *engine) deferRow(row *lead.Row, err error) {
	e.deferMu.Lock()
	e.deferred.Add(row.Row)
	first := e.deferred.Count == 1
	e.deferMu.Unlock()
	msg := "row left for a resumed run: the service asked it to come back later than the run waits"
	if first {
		e.log.Warn(msg+"; the summary names every such row", "row", row.Row, "leadId", row.LeadID, "err", err)
		return
	}
	e.log.Debug(msg, "row", row.Row, "leadId", row.LeadID, "err", err)
}

// stopped reports whether err ends a row's work without a final line:
// refused credentials (the run stops) or an outage the run stopped
// waiting out. The row counts as not sent; --resume sends it.
func stopped(err error) bool {
	return submitter.IsFatal(err) || submitter.IsOutageStop(err)
}

// cutOff reports whether err is a call the run's stop cut off (its drain
// over, or a second signal; or the stop itself, for a call waiting
// between its attempts: submitter.ErrStopped) with nothing of it known to
// have reached the service: waiting for its turn or between attempts, or
// with a request not yet written. The row leaves without a line, not sent: --resume
// sends it. One cut off with its request written is not: its answer never
// came, and the lead may exist (unverified).
func cutOff(err error) bool {
	var ce *submitter.CallError
	return submitter.IsInterrupted(err) && errors.As(err, &ce) && !ce.Ambiguous
}

// writeLines is the one goroutine that owns the results journal. Every
// line goes to the OS as it comes (a write syscall is nothing next to an
// API call), so neither a stall nor a kill loses a finished row. A write
// error fails the run at once (failRun); the writer drains what is still
// coming so that no worker blocks, but counts none of it: it was not
// recorded.
func (e *engine) writeLines(lines <-chan line, journal Journal, failRun context.CancelCauseFunc) error {
	var writeErr error
	for l := range lines {
		if writeErr == nil && !l.countOnly {
			if err := journal.AppendDurable(l.row); err != nil {
				writeErr = fmt.Errorf("write results file: %w (the run stops: an outcome that cannot be recorded would be sent again by a resumed run)", err)
				failRun(writeErr)
			}
		}
		if l.written != nil {
			l.written <- writeErr
		}
		if writeErr == nil && l.key != nil && e.cfg.Ledger != nil && !l.countOnly {
			r := l.row
			e.cfg.Ledger.Record(ledger.Answer{Key: *l.key, Row: r.Row, Status: r.Status, Created: l.created,
				ServiceID: r.ID, ResultCode: r.ResultCode, Bid: r.BidValue, Ambiguous: r.Ambiguous})
		}
		if writeErr != nil || !l.row.Status.Final() {
			continue
		}
		e.sum.Count(l.row)
		if l.kept {
			e.sum.KeptLeads.Add(l.row.Row)
		}
		if e.cfg.OnFinal != nil {
			e.cfg.OnFinal(l.row, l.countOnly)
		}
	}
	return writeErr
}

// plan decides what to do with one row: a line to journal now (invalid, or
// finished in an earlier run) or a job for the workers.
func (e *engine) plan(it source.Item) (job, *line, error) {
	r, err := e.resumed(it.Row)
	if err != nil {
		return job{}, nil, err
	}
	prior, hasPrior := r.Prior, r.Has
	if r.Kept {
		// Its cells were edited since an earlier run created its lead, or
		// may have: the lead keeps its id and its obligations (submitted
		// when qualified, checked again when unverified); the edit is not
		// sent. The summary names the row.
		switch {
		case prior.Status == lead.StatusCreated, prior.Status == lead.StatusSubmitFailed:
			row := prior
			row.Status, row.Error, row.Invalid = "", "", nil
			return job{row: row, prior: &prior, kept: true}, nil, nil
		case prior.Status == lead.StatusUnverified && e.recheckable(prior):
			// Its lead is known by an id: read it again, nothing is sent.
			row := prior
			row.Status, row.Error, row.Invalid = "", "", nil
			return job{row: row, recheck: &prior, kept: true}, nil, nil
		case !prior.HasLead():
			// An earlier createLead may have made its lead, whose id is
			// unknown, and the cells cannot be sent again to find it (the
			// own-lead check needs a duplicate answer): a person
			// reconciles it, or fixes the cells for a later resume to check.
			row := it.Row
			row.Status, row.ID, row.ResultCode, row.BidValue = lead.StatusUnverified, prior.ID, prior.ResultCode, prior.BidValue
			row.Note, row.EngineNotes, row.Attempts, row.Ambiguous = prior.Note, slices.Clone(prior.EngineNotes), prior.Attempts, prior.Ambiguous
			reasons := make([]string, len(row.Invalid))
			for i, e := range row.Invalid {
				reasons[i] = e.Reason()
			}
			row.Error, row.Invalid = "an earlier createLead for this row may have made its lead (its answer was lost), and its cells fail validation now ("+strings.Join(reasons, "; ")+"), so it is not sent again to check: look the lead up by leadId and submit it if it is yours, or fix the cells and resume", nil
			return job{}, &line{row: row, kept: true}, nil
		}
		e.skipped++
		return job{}, &line{row: prior, countOnly: true, kept: true}, nil
	}
	if it.Row.Status == lead.StatusInvalid {
		if hasPrior && prior.Status == lead.StatusInvalid {
			// Written by the earlier run; counted by this run's errors,
			// which are values (the file holds only their text).
			return job{}, &line{row: it.Row, countOnly: true}, nil
		}
		return job{}, &line{row: it.Row}, nil
	}
	// Resuming, every row sent again may have reached the service in some
	// earlier run: one without a line may have been in flight at a kill;
	// one whose last line is failed (or invalid, its cells edited since) may
	// have been sent again by a later run that was killed, or whose
	// journal stopped (a full disk), before its answer was recorded. The
	// journal holds no line before a send, so none of them is known to
	// be unsent: each gets the own-lead check on a duplicate answer.
	j := job{row: it.Row, input: it.Input, ambiguous: e.cfg.Prior != nil}
	if !hasPrior {
		return j, nil, nil
	}
	switch prior.Status {
	case lead.StatusProcessed, lead.StatusSubmitted, lead.StatusAlreadySent:
		e.skipped++
		return job{}, &line{row: prior, countOnly: true}, nil
	case lead.StatusCreated, lead.StatusSubmitFailed:
		j.prior = &prior
	case lead.StatusUnverified:
		if e.recheckable(prior) {
			j.recheck = &prior
		}
	}
	return j, nil, nil
}

// recheckable reports whether an earlier run's unverified line knows its
// lead by an id (a duplicate answer's, or an answer without a result
// code's): then the lead is read again and nothing is created. The
// service's note, not the engine's notes on it, says what it duplicates:
// create reads it the same way.
func (e *engine) recheckable(prior lead.Row) bool {
	dup, orig := e.duplicate(prior.ResultCode, prior.ID, prior.Note)
	return (dup && orig != "") || (prior.ResultCode == 0 && prior.ID != "")
}

// work sends one row: createLead, then submitLead for a qualified lead. It
// returns an error only when the run must stop.
func (e *engine) work(ctx context.Context, j job, lines chan<- line) error {
	// submitLead and lead answers, errors and debug logs are redacted for
	// this row's SSN and date of birth too, not only createLead's.
	red := redact.New(j.input)
	row := j.row
	row.Status, row.Error = "", ""
	send := func(l line) {
		l.key = j.key
		lines <- l
	}
	if j.prior != nil {
		// Created by an earlier run: never create it again.
		row.ID, row.ResultCode, row.BidValue = j.prior.ID, j.prior.ResultCode, j.prior.BidValue
		row.Note, row.EngineNotes = j.prior.Note, j.prior.EngineNotes
		row.Attempts = j.prior.Attempts
	} else {
		res, attempts, unverified, err := e.create(ctx, j, &row, red)
		if submitter.IsOutageStop(err) || cutOff(err) || deferredRow(err) {
			e.outageStop(err)
			return nil
		}
		if err != nil {
			return err
		}
		if row.Status == lead.StatusFailed || row.Status == lead.StatusUnverified {
			send(line{row: row, kept: j.kept})
			return nil
		}
		row.Attempts = attempts
		if !unverified {
			if res, unverified, err = e.checkAnswer(ctx, row.LeadID, res, red); err != nil {
				e.notSent.Add(1) // unrecorded: --resume sends it again and checks
				return err
			}
		}
		row.ID, row.ResultCode, row.Note, row.EngineNotes = res.ID, res.ResultCode, res.Note, res.notes
		if res.BidValue != nil {
			row.BidValue = *res.BidValue
		}
		switch {
		case unverified:
			row.Status = lead.StatusUnverified
			send(line{row: row, kept: j.kept, created: row.ID != ""})
			return nil
		case !lead.NeedsSubmission(res.ResultCode) || e.cfg.NoSubmit:
			row.Status = lead.StatusProcessed
			send(line{row: row, kept: j.kept, created: true})
			return nil
		}
		// The lead is worth a bid: its id is on disk before submitLead.
		created := row
		created.Status = lead.StatusCreated
		written := make(chan error, 1)
		send(line{row: created, written: written, created: true})
		if err := <-written; err != nil {
			// Not on disk: submitting now could lose track of the lead. Its
			// id goes to the log, the one record left, for reconciliation.
			e.log.Error("lead created but its results line could not be written", "row", row.Row, "leadId", row.LeadID, "id", row.ID, "resultCode", row.ResultCode)
			return err
		}
	}
	if e.cfg.NoSubmit {
		row.Status = lead.StatusProcessed
		send(line{row: row, kept: j.kept})
		return nil
	}
	res, _, err := e.api.Submit(ctx, row.ID, red)
	if submitter.IsOutageStop(err) || submitter.IsInterrupted(err) || submitter.IsAccessDenied(err) || submitter.IsDeferred(err) {
		// The lead's created line stands: --resume submits it (a
		// submitLead cut off on the wire may have gone through: the
		// service then answers that it is submitted already). Refused
		// access stops the run (runPool).
		e.notSent.Add(1)
		if submitter.IsDeferred(err) {
			e.deferRow(&row, err)
		}
		e.outageStop(err)
		if submitter.IsAccessDenied(err) {
			return err
		}
		return nil
	}
	if err != nil && e.submittedAlready(err) {
		row.Status = lead.StatusSubmitted
		row.Note, row.EngineNotes = "submitted (submitLead answered that the lead already was: an earlier attempt's answer was lost, or the partner submits automatically)", nil
		send(line{row: row, kept: j.kept})
		return nil
	}
	if err != nil {
		row.Status, row.Error = lead.StatusSubmitFailed, err.Error()
		send(line{row: row, kept: j.kept})
		if submitter.IsFatal(err) {
			return err // recorded: --resume submits it later
		}
		return nil
	}
	row.Status = lead.StatusSubmitted
	if res.Note != "" {
		// submitLead's note is the lead's now, in place of createLead's
		// and of what the engine said about that.
		row.Note, row.EngineNotes = res.Note, nil
	}
	send(line{row: row, kept: j.kept})
	return nil
}

// claimBatch is the most rows the claimer claims in one transaction.
const claimBatch = 64

// claimPoll is the first wait before a row another live run holds is
// claimed again; it doubles up to claimPollMax.
const (
	claimPoll    = 50 * time.Millisecond
	claimPollMax = time.Second
)

// claimer is the one goroutine between the producer and the workers when
// the run has a ledger (Config.Ledger): it claims the rows queued for the
// workers, up to claimBatch in one transaction (one claim a row would cost
// a transaction a row), and settles what the ledger says (settle) before
// any is sent. A row another live run holds (Busy) is claimed again
// later, polling, while the others go on. It returns an error only when
// the ledger cannot be written: the rows not sent are counted, for a
// resumed run. At the first signal (ctx) the rows not yet handed to a
// worker are not sent.
func (e *engine) claimer(ctx, gctx context.Context, in <-chan job, out chan<- job, lines chan<- line) error {
	var busy []job
	// spare, items and decOf are reused from one batch to the next (a
	// job is large: a batch of them was the claimer's garbage).
	var spare []job
	var items []ledger.ClaimItem
	var decOf []int
	wait := claimPoll
	notSent := func(js []job) {
		e.notSent.Add(int64(len(js)))
	}
	drain := func() {
		for range in {
			e.notSent.Add(1)
		}
	}
	for {
		clear(spare)
		batch := append(spare[:0], busy...)
		busy = busy[:0]
		if in == nil && len(batch) == 0 {
			return nil
		}
		// Wait for a row, or, while rows are busy, for their next try.
		var timer *time.Timer
		var retry <-chan time.Time
		if len(batch) > 0 {
			timer = time.NewTimer(wait)
			retry = timer.C
		}
		select {
		case j, ok := <-in: // a nil in (closed) never answers
			if ok {
				batch = append(batch, j)
			} else {
				in = nil
			}
		case <-retry:
		case <-gctx.Done():
		}
		if timer != nil {
			timer.Stop()
		}
		for more := true; more && in != nil && len(batch) < claimBatch; {
			select {
			case j, ok := <-in:
				if !ok {
					in = nil
				} else {
					batch = append(batch, j)
				}
			default:
				more = false
			}
		}
		if ctx.Err() != nil || gctx.Err() != nil {
			notSent(batch)
			if in != nil {
				drain()
			}
			return nil
		}
		if len(batch) == 0 && in == nil {
			return nil
		}
		spare = batch
		items = items[:0]
		decOf = decOf[:0]
		for i := range batch {
			j := &batch[i]
			if j.key == nil {
				j.key = e.keyOf(j)
			}
			decOf = append(decOf, -1)
			if j.key != nil && j.prior == nil {
				decOf[i] = len(items)
				items = append(items, ledger.ClaimItem{Key: *j.key, Row: j.row.Row})
			}
		}
		var ds []ledger.Decision
		if len(items) > 0 {
			var err error
			if ds, err = e.cfg.Ledger.ClaimBatch(gctx, items); err != nil {
				notSent(batch)
				if in != nil {
					drain()
				}
				if gctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("%w (the run stops: a lead that cannot be claimed in the ledger could be sent twice; rows not sent stay for a resumed run)", err)
			}
		}
		anyBusy := false
		for i, j := range batch {
			if n := decOf[i]; n >= 0 {
				d := ds[n]
				if d.Kind == ledger.Busy {
					busy = append(busy, j)
					anyBusy = true
					continue
				}
				if e.settle(&j, d, lines) {
					continue
				}
			}
			select {
			case out <- j:
			case <-gctx.Done():
				e.notSent.Add(1)
			}
		}
		if anyBusy {
			wait = min(2*wait, claimPollMax)
		} else {
			wait = claimPoll
		}
	}
}

// keyOf is a row's key in the ledger: its leadId, or its content; nil for
// a row without a leadId whose content is not known (kept by its earlier
// lead although its cells fail validation now).
func (e *engine) keyOf(j *job) *ledger.Key {
	var k ledger.Key
	switch {
	case !j.kept:
		k = e.cfg.Ledger.KeyOf(j.row.LeadID, j.input)
	case j.row.LeadID != "":
		k = ledger.KeyOfID(j.row.LeadID)
	default:
		return nil
	}
	return &k
}

// settle acts on what the ledger says of a row before anything is sent
// for it: a lead an earlier run created with this content and that needs
// nothing more is journalled already_sent; one created under this leadId
// with other content, conflict (done: the row is finished); one created
// and qualified but not submitted becomes the job's prior, to be submitted
// by its id; a lead whose earlier call may have reached the service
// unanswered makes the job ambiguous (the own-lead check).
func (e *engine) settle(j *job, d ledger.Decision, lines chan<- line) (done bool) {
	switch d.Kind {
	case ledger.AlreadySent:
		r := j.row
		ea := d.Earlier
		r.Status, r.ID, r.ResultCode = lead.StatusAlreadySent, ea.ServiceID, ea.ResultCode
		r.Note = alreadySentNote(ea)
		lines <- line{row: r, kept: j.kept}
		return true
	case ledger.Conflict:
		r := j.row
		r.Status = lead.StatusConflict
		r.Error = conflictError(j.row.LeadID, d.Earlier)
		lines <- line{row: r, kept: j.kept}
		return true
	case ledger.Submit:
		ea := d.Earlier
		p := j.row
		p.Status, p.ID, p.ResultCode, p.BidValue = lead.StatusCreated, ea.ServiceID, ea.ResultCode, ea.Bid
		p.Note = "created by " + runText(ea)
		j.prior = &p
	case ledger.Send:
		j.ambiguous = j.ambiguous || d.Ambiguous
	}
	return false
}

// runText names the run that created a lead: "run 12 on 2026-11-21 02:30
// UTC (results /runs/x.results.csv, row 5)".
func runText(ea *ledger.Earlier) string {
	s := "run " + strconv.FormatInt(ea.Run, 10)
	if !ea.At.IsZero() {
		s += " on " + ea.At.UTC().Format("2006-01-02 15:04 UTC")
	}
	if ea.Results != "" {
		s += " (results " + ea.Results
		if ea.Row > 0 {
			s += ", row " + strconv.Itoa(ea.Row)
		}
		s += ")"
	}
	return s
}

// alreadySentNote is the note of an already_sent row: who sent the lead
// when, as which lead, with what answer (its bid is in the note, not in
// the bid column: it was that run's, and counted there).
func alreadySentNote(ea *ledger.Earlier) string {
	s := "already sent: " + runText(ea) + " created lead " + ea.ServiceID
	if ea.ResultCode != 0 {
		s += ", result code " + strconv.Itoa(ea.ResultCode)
	}
	if ea.Bid != "" {
		s += ", bid " + ea.Bid
	}
	switch {
	case ea.Submitted():
		s += ", submitted"
	case lead.NeedsSubmission(ea.ResultCode):
		s += ", not submitted"
	}
	return s + "; not sent again"
}

// conflictError is the error of a conflict row.
func conflictError(leadID string, ea *ledger.Earlier) string {
	return "conflict: leadId " + leadID + " was sent with other content by " + runText(ea) + ", which created lead " + ea.ServiceID + "; this row's content was not sent"
}

// create gets the row's createLead result: it sends createLead and, when
// an earlier attempt may have reached the service, settles a duplicate
// answer with the own-lead check; for an earlier run's unverified row whose
// duplicate is known, it only checks that lead again. A createLead that
// failed sets row's status to failed (with Ambiguous when its lead may
// exist all the same); one the run's stop cut off on the wire sets it to
// unverified. unverified reports a duplicate answer that could not be
// confirmed as the row's own. red is the row's Redactor, for the lead
// reads. An error is returned when the run must stop, or when the row's
// call ended without reaching the service because the run stopped (an
// outage stop, or cutOff); the row is then counted as not sent, for
// --resume.
func (e *engine) create(ctx context.Context, j job, row *lead.Row, red *redact.Redactor) (res answer, attempts int, unverified bool, err error) {
	if p := j.recheck; p != nil {
		// The service's answer as the earlier run recorded it, without
		// what that run's engine said about it.
		res.Result = lead.Result{ID: p.ID, ResultCode: p.ResultCode, Note: p.Note}
		if p.BidValue != "" {
			bid := p.BidValue
			res.BidValue = &bid
		}
		res, unverified, err = e.ownLead(ctx, row.LeadID, res, "an earlier run left this row unverified; checked again", false, red)
		if err != nil {
			e.notSent.Add(1)
		}
		return res, p.Attempts, unverified, err
	}
	created, call, err := e.api.Create(ctx, j.input, red)
	res.Result = created
	if err != nil {
		if deferredRow(err) {
			// Asked to come back later than the run waits: --resume
			// sends it, as a row the stop found waiting to retry.
			e.notSent.Add(1)
			e.deferRow(row, err)
			return res, call.Attempts, false, err
		}
		if stopped(err) || cutOff(err) {
			// No token, caught in an outage the run stopped waiting out,
			// or cut off by the stop before it reached the service:
			// --resume sends it (with the own-lead check, since a row
			// without a line may have reached the service).
			e.notSent.Add(1)
			return res, call.Attempts, false, err
		}
		if submitter.IsInterrupted(err) || submitter.IsDeferred(err) {
			// Cut off on the wire: no answer, and the lead may exist. Or
			// stopped while it waited to retry, or asked to come back
			// later than the run waits, after an attempt that may have
			// reached the service: its answer was lost.
			row.Status, row.Attempts, row.Ambiguous = lead.StatusUnverified, call.Attempts, true
			row.Error = err.Error() + " (on the wire when the run stopped, no answer: the lead may exist)"
			if errors.Is(err, submitter.ErrStopped) || submitter.IsDeferred(err) {
				row.Error = err.Error() + " (an attempt may have reached the service, its answer lost: the lead may exist)"
			}
			return res, call.Attempts, false, nil
		}
		var ce *submitter.CallError
		row.Status, row.Error, row.Attempts = lead.StatusFailed, err.Error(), call.Attempts
		row.Ambiguous = j.ambiguous || call.Ambiguous || (errors.As(err, &ce) && ce.Ambiguous)
		row.Refused = !row.Ambiguous && errors.As(err, &ce) && !ce.Retryable && !ce.Outage && ce.Err == nil && (len(ce.Errors) > 0 || ce.Status >= 400 && ce.Status < 500)
		e.log.Debug("createLead failed", "row", row.Row, "leadId", row.LeadID, "ambiguous", row.Ambiguous, "err", err)
		return res, call.Attempts, false, nil
	}
	switch {
	case call.Ambiguous:
		why := "createLead was sent " + strconv.Itoa(call.Attempts) + " times after an answer was lost"
		res, unverified, err = e.ownLead(ctx, row.LeadID, res, why, true, red)
	case j.ambiguous:
		res, unverified, err = e.ownLead(ctx, row.LeadID, res, "an earlier run's createLead for this row may have reached the service", false, red)
	}
	if err != nil {
		e.notSent.Add(1) // unrecorded: --resume sends it again and checks
	}
	return res, call.Attempts, unverified, err
}

// duplicate reports whether a createLead answer (its result code, id and
// note) says the lead duplicates another, and the id of that other lead
// when the answer names one ("" otherwise). DuplicateOf recognises the
// answer; its first group is the id.
func (e *engine) duplicate(code int, id, note string) (bool, string) {
	if e.cfg.DuplicateOf == nil || lead.NeedsSubmission(code) {
		return false, ""
	}
	m := e.cfg.DuplicateOf.FindStringSubmatch(note)
	if m == nil {
		return false, ""
	}
	if len(m) < 2 || m[1] == id {
		return true, ""
	}
	return true, m[1]
}

// answer is a createLead result and the notes the engine adds to it as it
// settles it (lead.Row.EngineNotes).
type answer struct {
	lead.Result
	notes []string
}

// note adds one of the engine's notes.
func (a *answer) note(text string) { a.notes = append(a.notes, text) }

// ownLead settles a createLead answer when an earlier attempt may have
// reached the service (why says how). If the answer says the lead
// duplicates lead X, and X is this row's own (the service holds it under
// this row's leadId), then X is what the earlier attempt created: its
// result, perhaps qualified and worth a bid, is the row's, and the caller
// goes on to journal and submit it. If X is another's, the answer stands: a
// genuine duplicate. If X cannot be read, is read without a partnerLeadId
// (whose it is cannot be told), or the answer names no X, the row is
// unverified: a person reconciles it by leadId. An answer that is no
// duplicate stands (with why in its note when noteAlways). red is the row's
// Redactor, for the read of X. An error is returned only when the run must
// stop.
func (e *engine) ownLead(ctx context.Context, leadID string, res answer, why string, noteAlways bool, red *redact.Redactor) (_ answer, unverified bool, _ error) {
	dup, orig := e.duplicate(res.ResultCode, res.ID, res.Note)
	switch {
	case !dup:
		if noteAlways {
			res.note(why)
		}
		return res, false, nil
	case orig == "" || leadID == "":
		res.note(why + "; the duplicate answer names no lead to check: it may be this row's own earlier attempt, reconcile by leadId")
		return res, true, nil
	}
	own, _, err := e.api.Lead(ctx, orig, red)
	switch {
	case stopped(err):
		return res, false, err
	case err != nil:
		res.note(why + "; could not read lead " + orig + " to tell whether it is this row's (" + err.Error() + "): reconcile by leadId")
		return res, true, nil
	case own.PartnerLeadID == "":
		// No partnerLeadId (a lead read that does not select it, or a
		// null): nothing says whose lead X is, least of all "another's".
		res.note(why + "; lead " + orig + " was read back without a partnerLeadId, so whether it is this row's own cannot be told (the lead read must select partnerLeadId): reconcile by leadId")
		return res, true, nil
	case own.PartnerLeadID != leadID:
		res.note(why + "; lead " + orig + " belongs to leadId " + own.PartnerLeadID + ", not to this row: a genuine duplicate")
		return res, false, nil
	}
	// The lead read back is the answer now, in place of the duplicate
	// and of what was said about it.
	res = answer{Result: own}
	res.note(why + "; this is the lead the earlier attempt created, answered as a duplicate on the retry")
	return res, false, nil
}

// checkAnswer settles a createLead answer that lacks what the row needs: a
// result code (the schema lets it be null; none is no success) or a lead
// id. With an id, the lead is read by it (Lead.Read) for its code; if that
// fails too, or without an id, the row is unverified (its lead exists, its
// outcome is unknown): a person reconciles it by leadId, and --resume
// checks it again. A lead without an id whose code needs no submission
// stands (the summary names it). red is the row's Redactor. An error is
// returned only when the run must stop.
func (e *engine) checkAnswer(ctx context.Context, leadID string, res answer, red *redact.Redactor) (_ answer, unverified bool, _ error) {
	const why = "createLead answered without a result code"
	switch {
	case res.ResultCode != 0 && res.ID != "":
		return res, false, nil
	case res.ID == "" && res.ResultCode != 0 && !lead.NeedsSubmission(res.ResultCode):
		res.note("createLead answered without a lead id")
		return res, false, nil
	case res.ID == "" && res.ResultCode != 0:
		res.note("createLead answered a qualified lead without a lead id: it cannot be submitted or read by id; reconcile by leadId")
		return res, true, nil
	case res.ID == "":
		res.note(why + " and without a lead id: its outcome is unknown; reconcile by leadId")
		return res, true, nil
	}
	got, _, err := e.api.Lead(ctx, res.ID, red)
	switch {
	case submitter.IsFatal(err):
		return res, false, err
	case err != nil:
		res.note(why + "; could not read lead " + res.ID + " for it (" + err.Error() + "): reconcile by leadId")
		return res, true, nil
	case got.ResultCode == 0:
		res.note(why + "; lead " + res.ID + " read back has none either: reconcile by leadId")
		return res, true, nil
	case got.PartnerLeadID != "" && leadID != "" && got.PartnerLeadID != leadID:
		res.note(why + "; lead " + res.ID + " read back belongs to leadId " + got.PartnerLeadID + ": reconcile by leadId")
		return res, true, nil
	}
	if got.ID == "" {
		got.ID = res.ID
	}
	// The lead read back is the answer now, in place of the one without
	// a result code and of what was said about it.
	id := res.ID
	res = answer{Result: got}
	res.note(why + "; read back from lead " + id)
	return res, false, nil
}

// submittedAlready reports whether a submitLead error says the lead is
// submitted already.
func (e *engine) submittedAlready(err error) bool {
	var ce *submitter.CallError
	if e.cfg.AlreadySubmitted == nil || !errors.As(err, &ce) {
		return false
	}
	for _, ge := range ce.Errors {
		if e.cfg.AlreadySubmitted.MatchString(ge.Message) {
			return true
		}
	}
	return false
}
