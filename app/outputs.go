package app

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/bulkload/bulkload/htmlreport"
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
	return sum.WriteText(e.Stderr, cliHints())
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

// record is one output that records the run's exit status (--summary-json,
// --report, the summary beside the results file): written with a status,
// and written again when a later record's failure changes it
// (writeRecords).
type record struct {
	what  string // the output, for the message
	write func(code int) error
	// once marks a record that cannot be written again (standard
	// output): writeRecords writes it when the status is settled.
	once bool
}

// summaryJSONRecord is --summary-json (path; "-" is standard output) of
// sum, with its exit status, once it is known (so the printed summary,
// which comes before, has none).
func summaryJSONRecord(e *Env, sum *summary.Summary, path string) record {
	return record{what: "--summary-json", write: func(code int) error {
		sum.ExitCode = &code
		return writeSummaryTo(e, sum, path)
	}, once: path == "-"}
}

// reportRecord is --report, the run's HTML report of sum at path; history,
// when not nil, gives the run's place in the ledger's history for the
// exit status.
func reportRecord(sum *summary.Summary, path string, history func(code int) *htmlreport.Report) record {
	return record{what: "--report", write: func(code int) error {
		sum.ExitCode = &code
		rep := &htmlreport.Report{Summary: sum, Generated: time.Now(), Hints: cliHints()}
		if history != nil {
			if h := history(code); h != nil {
				rep.History, rep.HistoryOf = h.History, h.HistoryOf
			}
		}
		return htmlreport.Write(path, rep)
	}}
}

// sidecarRecords is the run's summary beside its results file
// (summary.Path), so that `bulkload report` draws the run's timeline,
// invalid columns and manifest from files alone: none when there is no
// results file, or when --summary-json names that very file (it is
// written there anyway).
func sidecarRecords(sum *summary.Summary, results, summaryJSON string) []record {
	path := summary.Path(results)
	if results == "" || summaryJSON == path {
		return nil
	}
	return []record{{what: "summary beside the results file", write: func(code int) error {
		sum.ExitCode = &code
		return sum.WriteJSON(path)
	}}}
}

// writeRecords writes recs with the exit status of err, the run's error,
// and returns the run's error: err, or, when a write fails in a run that
// had none, an exit 5 (outputFailed). When a failure changes the status,
// the records written before it are written again with the new one, so
// that every record of the exit status says the status the process
// returns (a --report whose folder vanished no longer leaves
// --summary-json saying 0 beside an exit 5). A record that failed is not
// tried again. The status changes at most once: from 0 to 5. A record on
// standard output (once) is written last, when the status is settled.
func writeRecords(e *Env, err error, recs ...record) error {
	failed := make([]bool, len(recs))
	// pass writes the records of kind once with the status of err and
	// returns the run's error after them.
	pass := func(err error, once bool) error {
		next := err
		for i, r := range recs {
			if failed[i] || r.once != once {
				continue
			}
			if werr := r.write(StatusOf(err)); werr != nil {
				failed[i] = true
				next = outputFailed(e, next, r.what, werr)
			}
		}
		return next
	}
	for {
		next := pass(err, false)
		if StatusOf(next) == StatusOf(err) {
			break
		}
		err = next
	}
	// Standard output cannot be written again: once the files say the
	// status, and again if writing it there changed the status.
	if next := pass(err, true); StatusOf(next) != StatusOf(err) {
		err = pass(next, false)
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
