package upload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/report"
	"github.com/bulkload/bulkload/source"
	"github.com/bulkload/bulkload/submitter"
)

// engine is one run's state.
type engine struct {
	cfg Config
	api API
	log *slog.Logger

	sum report.Summary // the writer goroutine's alone until the pipeline ends
	// read counts the rows the producer took from the input: every one of
	// them must end with exactly one final status, or the summary's
	// accounting says how many did not (after an interrupt: the rows read
	// but not sent, which --resume sends). Producer only.
	read int
	// skipped counts rows a resumed run found finished. Producer only.
	skipped int
	// notSent counts rows read but deliberately not sent because the run
	// stopped; the accounting adds them, so that it stays a real check.
	notSent atomic.Int64
}

// job is one valid row for the workers.
type job struct {
	row   report.Row
	input lead.Input
	// prior is the row's last line in the results file of an earlier run
	// when that run created the lead but did not finish submitting it.
	prior *report.Row
}

// line is one line for the results journal. A worker that must not go on
// before the line is on disk (a created lead, before submitLead) waits on
// written.
type line struct {
	row       report.Row
	reason    string     // the summary's reason when it differs from row.Error
	countOnly bool       // a row finished in an earlier run: count it, write nothing
	written   chan error // when set, the writer answers once the line is written (or not)
}

// pipeline reads rows, sends the valid ones through a pool of workers and
// journals every outcome. ctx ends on the first signal (stop reading);
// workCtx ends when the drain time is over or on a fatal error.
func (e *engine) pipeline(ctx, workCtx context.Context, src Source, journal Journal) error {
	// runCtx ends at the first fatal error, wherever it happens: refused
	// credentials (a worker), an unreadable input (the producer), an
	// unwritable results file (the writer).
	runCtx, failRun := context.WithCancelCause(workCtx)
	defer failRun(nil)
	g, gctx := errgroup.WithContext(runCtx)
	jobs := make(chan job, e.cfg.Concurrency)
	lines := make(chan line, 4*e.cfg.Concurrency)

	// Producer: the only reader of the input. It stops taking rows at the
	// first signal or when the run fails; readCtx ends on either, so that an
	// idle standard input holds off neither.
	readCtx, cancelRead := context.WithCancel(gctx)
	defer cancelRead()
	defer context.AfterFunc(ctx, cancelRead)()
	g.Go(func() error {
		defer close(jobs)
		for {
			if ctx.Err() != nil || gctx.Err() != nil {
				return nil
			}
			it, err := src.Next(readCtx)
			if errors.Is(err, io.EOF) || ctx.Err() != nil || gctx.Err() != nil {
				return nil // end of input, or interrupted: calls in flight drain
			}
			if err != nil {
				return err
			}
			e.read++
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
	})

	// Pool: an errgroup of exactly --concurrency long-lived workers (a
	// goroutine per row would grow a fresh stack through the HTTP path for
	// every row). A row's failure is a value; only a fatal error is
	// returned, and it cancels the others.
	g.Go(func() error {
		defer close(lines)
		pool, pctx := errgroup.WithContext(gctx)
		pool.SetLimit(e.cfg.Concurrency)
		for range e.cfg.Concurrency {
			pool.Go(func() error {
				for j := range jobs {
					if ctx.Err() != nil || pctx.Err() != nil {
						e.notSent.Add(1) // interrupted or failing: --resume sends it
						continue
					}
					if err := e.work(pctx, j, lines); err != nil {
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
	})

	// Writer: the one goroutine that owns the results journal. Every line
	// goes to the OS as it comes (a write syscall is nothing next to an API
	// call), so neither a stall nor a kill loses a finished row. A write
	// error fails the run at once; the writer drains what is still coming so
	// that no worker blocks, but counts none of it: it was not recorded.
	g.Go(func() error {
		var writeErr error
		for l := range lines {
			if writeErr == nil && !l.countOnly {
				if err := journal.AppendDurable(l.row); err != nil {
					writeErr = fmt.Errorf("write results file: %w (the run stops: an outcome that cannot be recorded would be sent again by --resume)", err)
					failRun(writeErr)
				}
			}
			if l.written != nil {
				l.written <- writeErr
			}
			if writeErr != nil || !l.row.Status.Final() {
				continue
			}
			e.sum.Count(source.CountedAs(l.row, l.reason))
			if e.cfg.OnFinal != nil {
				e.cfg.OnFinal(l.row)
			}
		}
		return writeErr
	})
	return g.Wait()
}

// plan decides what to do with one row: a line to journal now (invalid, or
// finished in an earlier run) or a job for the workers.
func (e *engine) plan(it source.Item) (job, *line, error) {
	var prior report.Row
	var hasPrior bool
	if e.cfg.Prior != nil {
		prior, hasPrior = e.cfg.Prior.Get(it.Row.Row)
	}
	if hasPrior && prior.LeadID != it.Row.LeadID {
		return job{}, nil, fmt.Errorf("--resume: %w: row %d has leadId %q there but %q here", ErrForeignJournal, it.Row.Row, prior.LeadID, it.Row.LeadID)
	}
	if it.Row.Status == report.StatusInvalid {
		if hasPrior && prior.Status == report.StatusInvalid {
			return job{}, &line{row: prior, countOnly: true}, nil
		}
		return job{}, &line{row: it.Row, reason: it.Reason}, nil
	}
	if hasPrior {
		switch prior.Status {
		case report.StatusProcessed, report.StatusSubmitted:
			e.skipped++
			return job{}, &line{row: prior, countOnly: true}, nil
		case report.StatusCreated, report.StatusSubmitFailed:
			p := prior
			return job{row: it.Row, input: it.Input, prior: &p}, nil, nil
		}
	}
	return job{row: it.Row, input: it.Input}, nil, nil
}

// work sends one row: createLead, then submitLead for a qualified lead. It
// returns an error only when the run must stop.
func (e *engine) work(ctx context.Context, j job, lines chan<- line) error {
	row := j.row
	row.Status, row.Error = "", ""
	if j.prior != nil {
		// Created by an earlier run: never create it again.
		row.ID, row.ResultCode, row.BidValue, row.Note = j.prior.ID, j.prior.ResultCode, j.prior.BidValue, j.prior.Note
		row.Attempts = j.prior.Attempts
	} else {
		res, call, err := e.api.Create(ctx, j.input)
		row.Attempts = call.Attempts
		if err != nil {
			if submitter.IsFatal(err) {
				return err
			}
			row.Status, row.Error = report.StatusFailed, err.Error()
			e.log.Debug("createLead failed", "row", row.Row, "leadId", row.LeadID, "err", err)
			lines <- line{row: row}
			return nil
		}
		if call.Ambiguous {
			if res, err = e.ownLead(ctx, row.LeadID, res, call.Attempts); err != nil {
				return err
			}
		}
		row.ID, row.ResultCode, row.Note = res.ID, res.ResultCode, res.Note
		if res.BidValue != nil {
			row.BidValue = *res.BidValue
		}
		if !lead.NeedsSubmission(res.ResultCode) || e.cfg.NoSubmit {
			row.Status = report.StatusProcessed
			lines <- line{row: row}
			return nil
		}
		// The lead is worth a bid: its id is on disk before submitLead.
		created := row
		created.Status = report.StatusCreated
		written := make(chan error, 1)
		lines <- line{row: created, written: written}
		if err := <-written; err != nil {
			// Not on disk: submitting now could lose track of the lead. Its
			// id goes to the log, the one record left, for reconciliation.
			e.log.Error("lead created but its results line could not be written", "row", row.Row, "leadId", row.LeadID, "id", row.ID, "resultCode", row.ResultCode)
			return err
		}
	}
	if e.cfg.NoSubmit {
		row.Status = report.StatusProcessed
		lines <- line{row: row}
		return nil
	}
	res, _, err := e.api.Submit(ctx, row.ID)
	if err != nil && e.submittedAlready(err) {
		row.Status = report.StatusSubmitted
		row.Note = "submitted (submitLead answered that the lead already was: an earlier attempt's answer was lost, or the partner submits automatically)"
		lines <- line{row: row}
		return nil
	}
	if err != nil {
		if submitter.IsFatal(err) {
			// Record what is known so that --resume submits it later.
			row.Status, row.Error = report.StatusSubmitFailed, err.Error()
			lines <- line{row: row}
			return err
		}
		row.Status, row.Error = report.StatusSubmitFailed, err.Error()
		lines <- line{row: row}
		return nil
	}
	row.Status = report.StatusSubmitted
	if res.Note != "" {
		row.Note = res.Note
	}
	lines <- line{row: row}
	return nil
}

// duplicateID returns the id of the lead a createLead answer says this one
// duplicates, or "" when it says no such thing.
func (e *engine) duplicateID(res lead.Result) string {
	if e.cfg.DuplicateOf == nil || lead.NeedsSubmission(res.ResultCode) {
		return ""
	}
	m := e.cfg.DuplicateOf.FindStringSubmatch(res.Note)
	if len(m) < 2 || m[1] == res.ID {
		return ""
	}
	return m[1]
}

// ownLead settles a createLead that was sent again after an answer was
// lost. If the answer says the lead duplicates lead X, and X is this row's
// own (the service holds it under this row's leadId), then X is what the
// first attempt created: its result, perhaps qualified and worth a bid, is
// the row's, and the caller goes on to journal and submit it. Otherwise the
// answer stands, with a note for a person to reconcile. An error is returned
// only when the run must stop.
func (e *engine) ownLead(ctx context.Context, leadID string, res lead.Result, attempts int) (lead.Result, error) {
	sent := "bulkload: createLead was sent " + strconv.Itoa(attempts) + " times after an answer was lost"
	orig := e.duplicateID(res)
	if orig == "" || leadID == "" {
		res.Note += " [" + sent + "; a duplicate result may be this row's own earlier attempt: reconcile by leadId]"
		return res, nil
	}
	own, _, err := e.api.Lead(ctx, orig)
	switch {
	case submitter.IsFatal(err):
		return res, err
	case err != nil:
		res.Note += " [" + sent + "; could not read lead " + orig + " to tell whether it is this row's (" + err.Error() + "): reconcile by leadId]"
		return res, nil
	case own.PartnerLeadID != leadID:
		res.Note += " [" + sent + "; lead " + orig + " belongs to leadId " + own.PartnerLeadID + ", not to this row: a genuine duplicate]"
		return res, nil
	}
	own.Note += " [" + sent + "; this is the lead the first attempt created, answered as a duplicate on the retry]"
	return own, nil
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
