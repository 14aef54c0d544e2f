package app

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/bulkload/bulkload/runreport"
	"github.com/bulkload/bulkload/summary"
)

// stampBuild records which binary made the run.
func stampBuild(sum *summary.Summary) {
	sum.Build = summary.Build(ReadBuildInfo())
	sum.Version = sum.Build.Version
}

// printSummary prints the summary on stderr as text, as soon as the run's
// figures are in. With --log-format json it prints nothing: logSummary
// logs it once the exit status is known.
func printSummary(e *Env, sum *summary.Summary) error {
	if e.JSONLogs {
		return nil
	}
	return sum.WriteText(e.Stderr)
}

// LogSummary is printSummary's half for --log-format json: the summary as
// one log record, the same object as --summary-json, exitCode included,
// written last so that a log collector reads how the run ended in one
// record.
func LogSummary(e *Env, log *slog.Logger, sum *summary.Summary, code int) {
	if e.JSONLogs {
		sum.ExitCode = &code
		log.Info("summary", "summary", sum.JSON())
	}
}

// writeSummaryJSON writes sum to path with the exit status of err, the
// run's error, once it is known (so the printed summary, which comes
// before, has none). It returns err, or, when the write fails in a run
// that had none, the write's failure (outputFailed).
func writeSummaryJSON(e *Env, sum *summary.Summary, path string, err error) error {
	code := StatusOf(err)
	sum.ExitCode = &code
	if werr := writeSummaryTo(e, sum, path); werr != nil {
		return outputFailed(e, err, "--summary-json", werr)
	}
	return err
}

// writeReport writes --report, the run's HTML report, with the exit status
// of err (nothing when path is ""); it returns as writeSummaryJSON.
func writeReport(e *Env, sum *summary.Summary, path string, err error) error {
	return writeReportIn(e, sum, path, err, nil)
}

// writeReportIn is writeReport with the run's place in the ledger's
// history (nil: none), given the exit status.
func writeReportIn(e *Env, sum *summary.Summary, path string, err error, history func(code int) *runreport.Report) error {
	if path == "" {
		return err
	}
	code := StatusOf(err)
	sum.ExitCode = &code
	rep := &runreport.Report{Summary: sum, Generated: time.Now()}
	if history != nil {
		if h := history(code); h != nil {
			rep.History, rep.HistoryOf = h.History, h.HistoryOf
		}
	}
	if werr := runreport.Write(path, rep); werr != nil {
		return outputFailed(e, err, "--report", werr)
	}
	return err
}

// writeSidecar writes the run's summary beside its results file
// (summary.Path), with the exit status, so that `bulkload report`
// draws the run's timeline, invalid columns and manifest from files
// alone; skipped when --summary-json names that very file (it is written
// there anyway). It returns as writeSummaryJSON.
func writeSidecar(e *Env, sum *summary.Summary, results, summaryJSON string, err error) error {
	path := summary.Path(results)
	if results == "" || summaryJSON == path {
		return err
	}
	code := StatusOf(err)
	sum.ExitCode = &code
	if werr := sum.WriteJSON(path); werr != nil {
		return outputFailed(e, err, "summary beside the results file", werr)
	}
	return err
}

// outputFailed reports that writing output what failed once the run's
// status was known (it is printed at once, beside the run's own message)
// and returns the run's error: err, or, for a run that had none, an exit 5
// (the outputs are part of the run).
func outputFailed(e *Env, err error, what string, werr error) error {
	fmt.Fprintf(e.Stderr, "bulkload: %s: %v\n", what, werr)
	if err != nil {
		return err
	}
	return &ExitError{Code: ExitIO, Msg: what + ": " + werr.Error(), Quiet: true}
}

// stoppedSummary is the summary of a run that stopped before it read or
// sent its rows, once its outputs were proven: why, and no counts.
func stoppedSummary(mode string, start time.Time, err error, why string, settings map[string]any) *summary.Summary {
	sum := &summary.Summary{Mode: mode, Start: start, End: time.Now(), Interrupted: StatusOf(err) == ExitInterrupted, Stopped: why, Settings: settings}
	stampBuild(sum)
	return sum
}

// writeSummaryTo writes sum as JSON to path, "-" being standard output.
func writeSummaryTo(e *Env, sum *summary.Summary, path string) error {
	if path != "-" {
		return sum.WriteJSON(path)
	}
	b, err := json.MarshalIndent(sum.JSON(), "", "  ")
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	_, err = e.Stdout.Write(append(b, '\n'))
	return err
}
