// Package upload is the upload engine: it owns everything between a
// validated row and its final line in the results journal. It reads rows
// from a Source in one producer goroutine, plans each against the journal of
// an earlier run (--resume: skip finished rows, submit created ones, resend
// the rest), sends the valid ones through a pool of workers (createLead, the
// own-lead check after a lost answer, then submitLead for a qualified lead),
// and journals every outcome from the one goroutine that owns the journal.
// It decides which rows end unverified (a duplicate answer after a lost one
// that cannot be confirmed as the row's own lead, an answer without a
// result code or lead id that cannot be read back) and which failed rows are
// marked ambiguous for the next run. While the service is away (an outage:
// Config.Gate) its workers take no new rows; a row caught in an outage the
// run stopped waiting out is left without a line, for --resume, never
// failed. It stops taking rows on the first cancellation, when the gate
// stops waiting (an outage lasted too long, or too many calls in a row
// failed as if the service were gone) or when the input cannot be read
// on, and lets the calls
// in flight drain within a bound (or cancels them on Abort); at the end it
// compacts the journal and returns the run's counts.
//
// It owns no flags, files, signals or exit statuses: cmd/bulkload turns
// those into a Config and calls Run. The service sits behind API (which
// *submitter.Client satisfies), the journal behind Journal, so that every
// branch is tested with fakes.
package upload

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/ledger"
	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/source"
	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
)

// API is the service's three calls as the engine uses them.
// *submitter.Client satisfies it; it must be safe for concurrent use. The
// engine gives every call the Redactor of the row it is about, one per
// row (redact.New of its input), so that the row's SSN and date of birth
// reach no result, error or log.
type API interface {
	Create(ctx context.Context, in lead.Input, red *redact.Redactor) (lead.Result, submitter.Call, error)
	Submit(ctx context.Context, id string, red *redact.Redactor) (lead.Result, submitter.Call, error)
	Lead(ctx context.Context, id string, red *redact.Redactor) (lead.Result, submitter.Call, error)
}

// Gate holds the rows back while the service or its identity provider is
// away (an outage): a worker waits on it before it takes a new row, so no
// row is sent, or charged an attempt, into an outage. *submitter.Client
// satisfies it (it waits out the outage of the calls in flight itself); it
// must be safe for concurrent use.
type Gate interface {
	// WaitUp blocks while the run is in an outage: nil once the service
	// is there, an error wrapping a *submitter.OutageError once the run
	// stopped waiting (too long, or StopWaiting), or ctx's error.
	WaitUp(ctx context.Context) error
	// StopWaiting ends every wait, now and later: the run stops.
	StopWaiting()
}

// Source yields the input's rows, validated, in input order; io.EOF ends it.
// Only the engine's producer goroutine calls it. *source.Source satisfies it.
type Source interface {
	Next(ctx context.Context) (source.Item, error)
}

// Journal is the results file as the engine writes it. Only the engine's
// writer goroutine appends; Run compacts (and so closes) it at the end.
// *report.Journal satisfies it.
type Journal interface {
	AppendDurable(r lead.Row) error
	Compact() error
}

// Prior is the results of an earlier run, for --resume: a row's last line.
// *report.State satisfies it. It must be safe for use by one goroutine
// while Run runs.
type Prior interface {
	Get(row int) (lead.Row, bool)
}

// Ledger is the memory of earlier runs and of the other runs going on
// (*ledger.Run satisfies it): a row's lead is claimed in it before the
// first call (ClaimBatch, many rows at once; a lead another live run holds
// is Busy and claimed again later) and its answer recorded once its line
// is written (Record). It must be safe for concurrent use.
type Ledger interface {
	KeyOf(leadID string, in lead.Input) ledger.Key
	ClaimBatch(ctx context.Context, items []ledger.ClaimItem) ([]ledger.Decision, error)
	Record(a ledger.Answer)
}

// Config is how Run uploads.
type Config struct {
	// Concurrency is the number of calls in flight at once (at least 1).
	Concurrency int
	// DrainTimeout bounds how long calls in flight may take to finish after
	// ctx ends.
	DrainTimeout time.Duration
	// NoSubmit never calls submitLead (partners with automatic submission).
	NoSubmit bool
	// AlreadySubmitted, when set, recognises a submitLead GraphQL error
	// meaning the lead is submitted already; the row then counts as
	// submitted.
	AlreadySubmitted *regexp.Regexp
	// DuplicateOf, when set, finds in the note of a createLead answer the id
	// of the lead it duplicates (its first submatch), for the own-lead check.
	DuplicateOf *regexp.Regexp
	// Prior is the earlier run's journal when resuming; nil starts afresh.
	Prior Prior
	// Decided is what the check before the first call decided of the rows
	// it read against Prior (Check.Decided), so that the engine decides
	// only the rows after them; nil: the engine decides every row.
	Decided *Decided
	// Ledger, when set, is consulted before each row is sent: a lead an
	// earlier run created is not sent again (already_sent, or submitted
	// when it never was), a leadId sent with other content is a conflict,
	// and a lead another run holds is waited for. Nil: no ledger.
	Ledger Ledger
	// Gate, when set, holds new rows back during an outage: it is the
	// run's one outage detector (*submitter.Client's). A call that ends
	// with a *submitter.OutageError leaves its row without a final line
	// (not sent, for --resume); when the gate stops waiting because an
	// outage lasted too long the run stops (ErrOutage), and when calls in
	// a row failed as if the service were gone (OutageError.Calls), it
	// stops as unreachable (ErrUnreachable).
	Gate Gate
	// Abort, when closed after ctx ended, cancels the calls in flight at
	// once instead of letting them drain (a second signal). Nil: never.
	Abort <-chan struct{}
	// Shard, when its N is above 1, takes only the rows of one shard of
	// the input; the others are counted as OtherShards, not sent.
	Shard Shard
	// Log receives the engine's log lines; nil discards them.
	Log *slog.Logger
	// OnFinal, when set, is called once per row counted with a final
	// status, from the writer goroutine (the progress display counts them);
	// earlier is set for a row whose line an earlier run wrote (finished
	// then, or invalid then), which this run counts but did no work for.
	OnFinal func(r lead.Row, earlier bool)
	// Stats, when set, reads the client's counters (*submitter.Client's
	// Stats) once a second for the run's timeline (Summary.Timeline);
	// without it the timeline holds only the rows in flight.
	Stats func() submitter.Stats
	// SampleEvery is the timeline's sampling interval; 0: one second.
	// Tests shorten it.
	SampleEvery time.Duration
}

// Result is what a run did. Summary holds the counts (by status, qualified,
// bids, reasons), RowsRead, NotSent, Interrupted, Start and End; the caller
// adds the run-level fields it owns (mode, version, settings, input hash,
// call statistics) before printing it.
type Result struct {
	Summary summary.Summary
	// Skipped counts the rows a resumed run found finished and did not send.
	Skipped int
	// Compacted reports that the journal was compacted into the final
	// results file (one line per row); when false it is left as a journal,
	// still valid for --resume.
	Compacted bool
}

// ErrCompact wraps the error of the journal's compaction at the end of a
// run. The journal is intact and valid for --resume when it happens.
var ErrCompact = errors.New("compact the results file")

// ErrUnreachable is wrapped by Run's error when the gate stopped the run
// because calls in a row failed as if the service were gone
// (submitter.OutageError.Calls).
var ErrUnreachable = errors.New("service unreachable or not a GraphQL endpoint")

// ErrOutage is wrapped by Run's error when the run stopped because the
// service or its identity provider stayed away longer than the client
// would wait (a *submitter.OutageError).
var ErrOutage = errors.New("outage")

// ErrForeignJournal means the journal of the earlier run (Prior) is not this
// input's: a row's leadId differs.
var ErrForeignJournal = errors.New("the results file does not belong to this input")

// Run uploads every row of src through api and journals each outcome. ctx
// ending (the first signal), the gate's stop or an input that cannot be
// read on stop the taking of rows; calls in flight then get up to
// cfg.DrainTimeout to finish (cfg.Abort cuts that short) and are recorded.
// Run compacts the journal at the end, whatever happened. It returns an
// error for what stops a run: refused credentials (submitter.IsFatal), an
// input that cannot be read on, the gate's stop (ErrOutage, ErrUnreachable), a journal that
// cannot be written, a foreign journal (ErrForeignJournal) or a failed
// compaction (ErrCompact); and, once every row before it is settled, an
// input whose last row is still being written (source.ErrInputIncomplete:
// the row is not sent). A row's failure is never an error, only its
// status. The Result is valid in every case.
func Run(ctx context.Context, cfg Config, src Source, api API, journal Journal) (Result, error) {
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &engine{cfg: cfg, api: api, log: log}
	e.sum.Mode = "upload"
	e.sum.Start = time.Now()
	e.timeline = summary.NewTimelineRecorder(e.sum.Start)

	// stopCtx ends when no more rows are to be taken: the first signal
	// (ctx), or a reason of the engine's own (halt), which becomes Run's
	// error.
	stopCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	e.halt = stop

	// Calls in flight outlive the stop by up to DrainTimeout: workCtx is
	// cut loose from ctx and cancelled only after the drain.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	var drainer sync.WaitGroup
	drainer.Go(func() {
		select {
		case <-stopCtx.Done():
		case <-workCtx.Done():
			return
		}
		if cfg.Gate != nil {
			// No call waits for the service any more: the run stops.
			cfg.Gate.StopWaiting()
		}
		if ctx.Err() == nil {
			log.Warn("stopping: no new rows are taken; waiting for calls in flight", "drain_timeout", cfg.DrainTimeout, "reason", context.Cause(stopCtx))
			e.timeline.Mark(time.Now(), 0, summary.MarkStop, stopNote(context.Cause(stopCtx)))
		} else {
			e.timeline.Mark(time.Now(), 0, summary.MarkSignal, "signal: no new rows taken; calls in flight drain")
		}
		t := time.NewTimer(cfg.DrainTimeout)
		defer t.Stop()
		select {
		case <-t.C:
			log.Warn("drain timeout: calls still in flight are cancelled")
			e.timeline.Mark(time.Now(), 0, summary.MarkDrainTimeout, "drain timeout: calls still in flight cancelled")
			cancelWork()
		case <-cfg.Abort:
			log.Warn("stopping at once: calls in flight are cancelled")
			e.timeline.Mark(time.Now(), 0, summary.MarkAbort, "second signal: calls in flight cancelled")
			cancelWork()
		case <-workCtx.Done():
		}
	})
	sampling, stopSampling := context.WithCancel(context.Background())
	var sampler sync.WaitGroup
	sampler.Go(func() { e.sample(sampling) })

	runErr := e.pipeline(stopCtx, workCtx, src, journal)
	cancelWork()
	drainer.Wait()
	stopSampling()
	sampler.Wait()
	if cause := context.Cause(stopCtx); runErr == nil && cause != nil && !errors.Is(cause, context.Canceled) {
		runErr = cause // the gate or the input stopped the run
	}
	if runErr == nil {
		runErr = e.incomplete // the input's last row was cut short: left
	}

	interrupted := ctx.Err() != nil
	cerr := journal.Compact()
	if cerr != nil {
		log.Error("compacting the results file failed; the journal is intact and valid for a resumed run", "err", cerr)
		if runErr == nil {
			runErr = fmt.Errorf("%w: %w", ErrCompact, cerr)
		}
	}
	e.sum.RowsRead = e.read
	e.sum.OtherShards = e.otherShards
	e.sum.NotSent = int(e.notSent.Load())
	e.sum.Deferred = e.deferred
	e.sum.Interrupted = interrupted
	e.sum.End = time.Now()
	e.sum.Timeline = e.timeline.Timeline()
	return Result{Summary: e.sum, Skipped: e.skipped, Compacted: cerr == nil}, runErr
}
