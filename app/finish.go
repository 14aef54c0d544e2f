package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/bulkload/bulkload/htmlreport"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/report"
	"github.com/bulkload/bulkload/source"
	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
	"github.com/bulkload/bulkload/upload"
)

// writeSummary completes the run's summary with what the caller owns (build,
// settings, the input's identity and columns, call statistics), records the
// identity of a streamed input beside the results file, and prints and
// writes the summary. It returns the first error.
func (u *uploader) writeSummary(sum *summary.Summary, src *source.Source, st submitter.Stats, outages []submitter.Outage, ic *inputCheck, state *report.State, resultsPath string) error {
	stampBuild(sum)
	sum.Settings = u.settings(resultsPath)
	sum.InputSHA256 = src.InputSHA256()
	sum.InputBytes, sum.InputGrewBytes = src.InputBytes(), src.Grew()
	setColumns(sum, src.Provided(), src.Unknown())
	if ic.scan != nil {
		// The check before the first call counted the file's rows: those
		// the run stopped before reading are shown, not lost.
		sum.InputRows = ic.scan.Rows
		sum.NotReached = max(0, ic.scan.Rows-sum.RowsRead)
	}
	var metaErr error
	if ic.scan == nil && sum.RowsRead > 0 {
		metaErr = u.writeMeta(resultsPath, u.streamMeta(src, &outfile.Meta{Input: u.input, InputSHA256: sum.InputSHA256,
			InputBytes: sum.InputBytes, Rows: sum.RowsRead, AllLeadIDs: src.AllLeadIDs()}))
	}
	sum.APICalls = int(st.Calls)
	sum.Retries = int(st.Retries)
	sum.TokensFetched = int(st.TokensFetched)
	sum.Outages = outagesReport(outages)
	if st.Attempts > 0 {
		sum.Rate = rateReport(st, u.up.Rate)
		sum.Concurrency = concurrencyReport(st)
		sum.BoundBy = outageBound(boundBy(st, u.rows.Waited(), u.up), outages)
	}
	// The JSON file and the JSON log record wait for the exit status
	// (finishSummary, logSummary).
	// A closed stderr (piped to head -1) loses the printed summary, not
	// the run: its results, --summary-json and metrics are still written.
	_ = printSummary(u.env, sum)
	return metaErr
}

// outageBound is what bound a run that stopped in an outage: the service
// (or its identity provider) being away, whatever held the calls back
// before; b, what did, keeps its shares. A hang ends with the calls in
// flight timing out, which no pin of the concurrency or the rate helps.
// Otherwise b.
func outageBound(b *summary.BoundBy, outages []submitter.Outage) *summary.BoundBy {
	if b == nil || len(outages) == 0 || !outages[len(outages)-1].GaveUp {
		return b
	}
	o := outages[len(outages)-1]
	out := *b
	out.Kind = summary.BoundOutage
	out.Text = fmt.Sprintf("%s being away (%s from %s): the run stopped waiting after %d s; no pin of --concurrency or --rate helps, --resume once it answers",
		o.Who(), o.Cause, o.Start.Format(time.TimeOnly), int(o.Length(time.Now()).Seconds()))
	return &out
}

// outagesReport is the summary's list of the run's outages.
func outagesReport(outages []submitter.Outage) []summary.Outage {
	out := make([]summary.Outage, 0, len(outages))
	now := time.Now()
	for _, o := range outages {
		out = append(out, summary.Outage{
			Start:            o.Start,
			Seconds:          o.Length(now).Seconds(),
			IdentityProvider: o.IdentityProvider,
			Cause:            o.Cause,
			StoppedRun:       o.GaveUp,
		})
	}
	return out
}

// finishSummary writes the records of the run's exit status once its
// error, and so its status, is known (writeRecords): the summary beside
// the results file, --summary-json and --report, each the run's summary,
// or, for a run that stopped before its end once its outputs were proven,
// one that says why (Stopped) with no counts, so that a fixed path never
// shows an earlier run's figures as this one's. It returns the run's
// error, or, when a write failed in a run that had none, that failure
// (exit 5), which every record then says.
func (u *uploader) finishSummary(err error) error {
	var recs []record
	if u.summary != nil {
		recs = sidecarRecords(u.summary, u.in.resultsPath(u.input), u.in.SummaryJSON)
	}
	if (u.in.SummaryJSON != "" || u.in.Report != "") && u.outputsChecked {
		sum := u.summary
		if sum == nil {
			sum = stoppedSummary("upload", u.start, err, cmp.Or(u.stopped, "stopped before the first row; see the log"), u.settings(u.in.resultsPath(u.input)))
		}
		// Refused because its files are another run's: that run's
		// summary and report stay; a new path gets this run's.
		keep := func(path string) bool { return u.refused() && keepOther(u.log, path) }
		if u.in.SummaryJSON != "" && !keep(u.in.SummaryJSON) {
			recs = append(recs, summaryJSONRecord(u.env, sum, u.in.SummaryJSON))
		}
		if u.in.Report != "" && !keep(u.in.Report) {
			var history func(code int) *htmlreport.Report
			if !u.refused() {
				history = func(code int) *htmlreport.Report {
					return &htmlreport.Report{History: u.runHistory(context.Background(), sum, code), HistoryOf: u.metrics.Job()}
				}
			}
			recs = append(recs, reportRecord(sum, u.in.Report, history))
		}
	}
	return writeRecords(u.env, err, recs...)
}

// keepOther reports, for a run refused because its files are another
// run's, whether path (--summary-json, --report) holds a file already:
// that run's (the day's first export, when its re-drop is refused), which
// the refused run leaves as it is. A new path gets the refused run's,
// saying why.
func keepOther(log *slog.Logger, path string) bool {
	if path == "-" {
		return false
	}
	if _, err := os.Lstat(path); err != nil {
		return false
	}
	log.Info("left as it was: it holds the summary or report of the run whose results file this run was refused", "path", path)
	return true
}

// exitStatus reports how the upload ended and returns the run's error: nil only for a run that leaves nothing to do.
func (u *uploader) exitStatus(ctx context.Context, sum *summary.Summary, runErr error, resultsPath string) error {
	switch {
	case submitter.IsFatal(runErr):
		return u.authFailure(ctx, runErr)
	case errors.Is(runErr, upload.ErrOutage):
		return exitErrorf(ExitUnreachable, "%v; run the same command with --resume once it answers", runErr)
	case errors.Is(runErr, upload.ErrUnreachable):
		return exitErrorf(ExitUnreachable, "%v; check --endpoint %s, then run the same command with --resume", runErr, redact.URL(u.creds.Endpoint))
	case sum.Interrupted:
		return exitErrorf(ExitInterrupted, "interrupted; run the same command with --resume to finish")
	case errors.Is(runErr, upload.ErrCompact):
		// Every row is done and recorded: only the tidying failed.
		return exitErrorf(ExitRowsFailed, "every row was uploaded, but the results file %s could not be compacted: %v\n"+
			"bulkload: it is left as the run's journal (several lines per row, the last one counts): intact and valid for --resume, which compacts it", resultsPath, runErr)
	case runErr != nil:
		return runErr
	}
	if done, err := u.checks.noRows(u.input, sum); done {
		return err
	}
	err := rowsStatus(sum, u.checks.Strict)
	if sum.Invalid > 0 {
		u.logInvalid(sum, err == nil)
	}
	return err
}

// logInvalid says what became of the invalid rows of a run that went
// through its input: not sent, where they are listed, and whether they
// made the exit status (--strict) or not (the partner's to fix).
func (u *uploader) logInvalid(sum *summary.Summary, ok bool) {
	where := "the results file " + u.in.resultsPath(u.input) + " (status invalid)"
	if u.in.Rejects != "" {
		where = "--rejects " + u.in.Rejects + ", for the partner to fix and send again"
	}
	attrs := []any{"invalid", sum.Invalid, "share", fmt.Sprintf("%.2f%%", 100*sum.InvalidShare()), "max_invalid", u.checks.limitText(), "listed_in", where}
	if u.checks.Strict {
		u.log.Info("invalid rows were not sent; --strict: they fail the run (exit 1)", attrs...)
		return
	}
	msg := "invalid rows were not sent, within --max-invalid: the partner's to fix, they do not fail the run (--strict would)"
	if !ok {
		msg = "invalid rows were not sent, within --max-invalid: the partner's to fix (the exit status is for other rows)"
	}
	u.log.Info(msg, attrs...)
}
