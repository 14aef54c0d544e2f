package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/bulkload/bulkload/ledger"
	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/summary"
)

// LedgerOptions are the flags of the ledger: which one, and what an upload
// does with a lead an earlier run sent.
type LedgerOptions struct {
	// Location is --ledger: "" (the default file, or none for --simulate),
	// "off", a path or a postgres:// URL.
	Location      string
	Resend        bool
	ResendChanged bool
}

// off reports whether the run keeps no ledger: --ledger off, or a
// simulated run (a new simulator each time: no earlier run to know) that
// names none.
func (o *LedgerOptions) off(simulated bool) bool {
	return o.Location == "off" || o.Location == "" && simulated
}

// location is the ledger to open: --ledger, or the default file in the
// user's state folder.
func (o *LedgerOptions) location(getenv func(string) string) (string, error) {
	if o.Location != "" {
		if !ledger.IsURL(o.Location) && strings.Contains(o.Location, "://") {
			return "", UsageErrorf("--ledger %s: want a file path, a postgres:// URL, or off", redactLedger(o.Location))
		}
		if !ledger.IsURL(o.Location) {
			abs, err := filepath.Abs(o.Location)
			if err != nil {
				return "", UsageErrorf("--ledger %s: %v", o.Location, err)
			}
			return abs, nil
		}
		return o.Location, nil
	}
	p, err := ledger.DefaultPath(getenv)
	if err != nil {
		return "", UsageErrorf("%v; nothing was sent. Set XDG_STATE_HOME to a folder that outlives the run (in a container: on its volume; bulkload's image sets /data/results), or give --ledger PATH (a file), a postgres:// URL, or --ledger off", err)
	}
	return p, nil
}

// redactLedger is --ledger fit for a message or the summary's settings.
func redactLedger(where string) string {
	if ledger.IsURL(where) {
		return ledger.RedactURL(where)
	}
	return where
}

// openLedger opens the ledger where names. Every failure stops the run
// before anything is sent, with a message that says what to do: a ledger
// that cannot be read is never replaced by a fresh one (every lead would
// be sent again).
func openLedger(ctx context.Context, where string, mustExist bool) (*ledger.Ledger, error) {
	l, err := ledger.Open(ctx, ledger.Config{Where: where, MustExist: mustExist})
	switch {
	case err == nil:
		return l, nil
	case errors.Is(err, ledger.ErrNoLedger):
		return nil, UsageErrorf("--ledger: %v (no run has recorded one there yet: give the --ledger the uploads use)", err)
	case errors.Is(err, ledger.ErrCorrupt):
		return nil, UsageErrorf("--ledger: %v; nothing was sent. Restore it from a backup, or move it aside to start a new ledger (which knows no earlier run: their leads would be sent again); --ledger off runs without one", err)
	case errors.Is(err, ledger.ErrLocked):
		return nil, UsageErrorf("--ledger: %v; nothing was sent. Find the process holding it (fuser), or wait for it and run again", err)
	case errors.Is(err, ledger.ErrNewer):
		return nil, UsageErrorf("--ledger: %v; nothing was sent", err)
	case errors.Is(err, ledger.ErrUnreachable):
		return nil, exitErrorf(ExitUnreachable, "--ledger: %v; nothing was sent: run the same command again once the database answers", err)
	}
	return nil, UsageErrorf("--ledger: %v; nothing was sent", err)
}

// overwriteSends says what --overwrite does to the leads of an earlier
// upload, for the messages that offer it: with a ledger (and no --resend)
// a lead it holds as sent is not sent again (its row is written
// already_sent), so "start over" does not mean "send again".
func (u *uploader) overwriteSends() string {
	if o := u.ledgerOpts; o != nil && !o.off(u.simulated) && !o.Resend {
		return "the leads the ledger holds as sent are not sent again but written already_sent; add --resend to send them again"
	}
	return "every lead is sent again"
}

// beginLedger opens the run's ledger and records the run in it; nil, nil
// with --ledger off. The caller ends the run (endLedger).
func (u *uploader) beginLedger(ctx context.Context, resultsPath string) error {
	o := u.ledgerOpts
	if o == nil || o.off(u.simulated) {
		return nil
	}
	where, err := o.location(u.env.Getenv)
	if err != nil {
		return err
	}
	l, err := openLedger(ctx, where, false)
	if err != nil {
		return err
	}
	results, _ := filepath.Abs(resultsPath)
	run, err := l.BeginRun(ctx, ledger.RunInfo{Account: u.account(), Command: "upload", Input: u.input, Results: results, JobName: u.metrics.Job(), Shard: u.in.shard},
		ledger.ClaimPolicy{Resend: o.Resend, ResendChanged: o.ResendChanged})
	if err != nil {
		l.Close()
		return UsageErrorf("--ledger: %v; nothing was sent", err)
	}
	u.ledger, u.lrun = l, run
	u.log.Info("ledger", "where", l.String(), "run", run.ID)
	return nil
}

// account is the run's service account: the endpoint without its
// credentials, and the client id.
func (u *uploader) account() ledger.Account {
	return ledger.Account{Endpoint: redact.URL(u.creds.Endpoint), ClientID: u.creds.ClientID}
}

// earlierRuns logs, for an input the ledger has seen before under another
// results file (a {date} placeholder after midnight, another --shard
// count, a manual run beside cron's), which run that was: the ledger
// knows its leads, so this run resumes it instead of sending them again.
func (u *uploader) earlierRuns(ctx context.Context, sha, resultsPath string) {
	if u.ledger == nil || sha == "" {
		return
	}
	if err := u.lrun.SetInput(ctx, sha); err != nil {
		u.log.Warn("could not record the input's SHA-256 in the ledger", "err", err)
	}
	runs, err := u.ledger.History(ctx, ledger.Filter{InputSHA256: sha})
	if err != nil {
		u.log.Warn("could not read the ledger's earlier runs of this input", "err", err)
		return
	}
	results, _ := filepath.Abs(resultsPath)
	for _, r := range runs {
		if r.ID == u.lrun.ID {
			continue
		}
		attrs := []any{"run", r.ID, "started", r.Started.UTC().Format(time.RFC3339), "results", r.Results}
		if r.ExitCode != nil {
			attrs = append(attrs, "exit", *r.ExitCode)
		}
		if r.Results != results {
			u.log.Info("the ledger knows an earlier run of this input under another results file: the leads it created are not sent again", attrs...)
		} else {
			u.log.Info("the ledger knows an earlier run of this input", attrs...)
		}
	}
}

// ledgerKnows reports whether the ledger recorded a run that wrote the
// results file at path.
func (u *uploader) ledgerKnows(ctx context.Context, path string) bool {
	if u.ledger == nil {
		return false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	runs, err := u.ledger.History(ctx, ledger.Filter{Results: []string{abs}})
	return err == nil && len(runs) > 0
}

// endLedger records the run's end in the ledger: its exit status and its
// summary (the --summary-json object), and closes the ledger. A failure
// is logged: the leads' answers were flushed before the summary (a
// failure there is the run's), this is the run's record.
func (u *uploader) endLedger(ctx context.Context, code int) {
	if u.lrun == nil {
		return
	}
	defer u.ledger.Close()
	sum := u.summary
	if sum == nil {
		sum = stoppedSummary("upload", u.start, nil, u.stopped, u.settings(u.in.resultsPath(u.input)))
		sum.Interrupted = code == ExitInterrupted
	}
	sum.ExitCode = &code
	b, err := json.Marshal(sum.JSON())
	if err != nil {
		u.log.Error("ledger: encode the run's summary", "err", err)
		b = nil
	}
	if err := u.lrun.End(context.WithoutCancel(ctx), code, b, sum.InputSHA256); err != nil {
		u.log.Error("ledger: the run's end was not recorded", "run", u.lrun.ID, "err", err)
	}
}

// flushLedger waits until every answer of the run is in the ledger; a
// failure is the run's (exit 5): the next run would not know those leads
// were answered (it would check them again with the own-lead check).
func (u *uploader) flushLedger(ctx context.Context) error {
	if u.lrun == nil {
		return nil
	}
	if err := u.lrun.Flush(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("%w; the leads whose answers are not recorded are checked again by the next run (the own-lead check)", err)
	}
	return nil
}

// StoppedUpload records an upload that stopped before it began (a setting
// that does not parse, an input that cannot be opened for its {sha}, no
// credentials): its metrics file, so that the alert sees the exit status,
// and its run in the ledger. account is the endpoint and client id as
// given (perhaps empty). log may be nil.
func StoppedUpload(ctx context.Context, e *Env, log *slog.Logger, j *UploadJob, account ledger.Account, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	code := StatusOf(err)
	why := strings.TrimPrefix(err.Error(), "usage: ")
	if j.Metrics != nil {
		if rec := j.Metrics.recorder(j.Input, j.In.shard); rec.Enabled() {
			if serr := rec.Start(); serr != nil {
				log.Warn("metrics not written", "err", serr)
			} else if ferr := rec.Finish(context.WithoutCancel(ctx), nil, code); ferr != nil {
				log.Warn("metrics not written", "err", metricsFlags(ferr))
			}
		}
	}
	o := j.Ledger
	if o == nil || o.off(false) {
		return
	}
	where, lerr := o.location(e.Getenv)
	if lerr != nil {
		return
	}
	l, lerr := openLedger(ctx, where, false)
	if lerr != nil {
		log.Warn("the run was not recorded in the ledger", "err", lerr)
		return
	}
	defer l.Close()
	account.Endpoint = redact.URL(account.Endpoint)
	run, lerr := l.BeginRun(ctx, ledger.RunInfo{Account: account, Command: "upload", Input: j.Input, JobName: j.Metrics.recorder(j.Input, "").Job()}, ledger.ClaimPolicy{})
	if lerr != nil {
		log.Warn("the run was not recorded in the ledger", "err", lerr)
		return
	}
	sum := stoppedSummary("upload", time.Now(), err, why, map[string]any{"input": j.Input})
	sum.ExitCode = &code
	b, _ := json.Marshal(sum.JSON())
	if lerr := run.End(context.WithoutCancel(ctx), code, b, ""); lerr != nil {
		log.Warn("the run was not recorded in the ledger", "err", lerr)
	}
}

// summaryOf decodes a run's summary from the ledger.
func summaryOf(r ledger.RunRecord) (*summary.Summary, error) {
	if r.Summary == nil {
		return nil, fmt.Errorf("run %d has no summary in the ledger (it did not end: killed, or still going)", r.ID)
	}
	var s summary.Summary
	if err := json.Unmarshal(r.Summary, &s); err != nil {
		return nil, fmt.Errorf("run %d: its summary in the ledger: %w", r.ID, err)
	}
	return &s, nil
}
