package app

import (
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/metrics"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/report"
	"github.com/bulkload/bulkload/summary"
)

// ctxCheckEvery is how many rows validate reads between looks at the
// context: often enough to stop within milliseconds, rare enough to cost
// nothing per row.
const ctxCheckEvery = 1024

// ValidateJob is one validate run: its input and the options that shape
// it.
type ValidateJob struct {
	Input     string
	In        *InputOptions
	Checks    *CheckOptions
	Metrics   *MetricsOptions
	Overwrite bool
}

// Prepare checks the job's options and completes them from the input's
// name and the clock, before anything is opened or logged.
func (j *ValidateJob) Prepare(e *Env) error {
	if err := errors.Join(j.In.check(), j.Checks.check()); err != nil {
		return err
	}
	if err := checkInputKind("validate", j.Input); err != nil {
		return err
	}
	return j.In.expand(j.Input, e.Now())
}

// RunValidateJob reads and validates every row of the prepared job's
// Input, sending nothing. It returns the run's summary, nil when it stopped
// before it read a row, and the run's error (nil: every row valid).
func RunValidateJob(ctx context.Context, e *Env, log *slog.Logger, j *ValidateJob) (*summary.Summary, error) {
	in, input := j.In, j.Input
	budget := &memoryBudget{} // off: Deps.KeepRuntimeSettings
	if !e.Deps.KeepRuntimeSettings {
		budget = newMemoryBudget(e.Getenv)
	}
	defer budget.restore()
	start := time.Now()
	sum, provided, unknown, err := validateFile(ctx, input, e, in, j.Overwrite, log, budget, j.Metrics.outputs()...)
	rec := j.Metrics.recorder(input, "")
	if sum == nil { // stopped before reading: no summary to print
		if errors.Is(err, context.Canceled) {
			err = &ExitError{Code: ExitInterrupted, Msg: "interrupted", Quiet: true}
		}
		var stop *stoppedBeforeReading
		if errors.As(err, &stop) && (in.SummaryJSON != "" || in.Report != "") {
			// The outputs were proven: say why in --summary-json and the
			// report, so that a fixed path does not keep an earlier run's
			// figures.
			stub := stoppedSummary("validate", start, err, strings.TrimPrefix(stop.err.Error(), "usage: "), in.settings(input, in.resultsPath(input)))
			var recs []record
			if in.SummaryJSON != "" {
				recs = append(recs, summaryJSONRecord(e, stub, in.SummaryJSON))
			}
			if in.Report != "" {
				recs = append(recs, reportRecord(stub, in.Report, nil))
			}
			err = writeRecords(e, err, recs...)
			finishValidateMetrics(ctx, log, rec, nil, StatusOf(err))
		}
		return nil, err
	}
	// A closed stderr (piped to head -1) loses the printed summary, not
	// the run: its results and --summary-json are still written.
	_ = printSummary(e, sum)
	err = validateStatus(j.Checks, input, sum, provided, unknown, err)
	recs := sidecarRecords(sum, in.resultsPath(input), in.SummaryJSON)
	if in.SummaryJSON != "" {
		recs = append(recs, summaryJSONRecord(e, sum, in.SummaryJSON))
	}
	if in.Report != "" {
		recs = append(recs, reportRecord(sum, in.Report, nil))
	}
	err = writeRecords(e, err, recs...)
	finishValidateMetrics(ctx, log, rec, sum, StatusOf(err))
	return sum, err
}

// finishValidateMetrics writes validate's --metrics-file, once the run's
// outputs were proven (so that a dry-run cron job is monitored as an
// upload is): rows valid and invalid, the invalid share, the exit status.
// A failure is logged and does not change the exit status.
func finishValidateMetrics(ctx context.Context, log *slog.Logger, rec *metrics.Recorder, sum *summary.Summary, code int) {
	if !rec.Enabled() {
		return
	}
	err := rec.Start()
	if err == nil {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		err = rec.Finish(pctx, sum, code)
	}
	if err != nil {
		log.Warn("metrics not written", "err", metricsFlags(err))
	}
}

// validateStatus is the error of a validate that read its input (sum),
// err being what stopped it early, if anything: nil only when every row
// is valid.
func validateStatus(checks *CheckOptions, input string, sum *summary.Summary, provided []lead.Field, unknown []string, err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return &ExitError{Code: ExitInterrupted, Msg: "interrupted", Quiet: true}
	case corruptInput(err):
		// As upload's check before its first call: a corrupt input is
		// the input's problem (exit 2), not an I/O failure (5).
		return UsageErrorf("%v: the input is corrupt", err)
	case err != nil:
		return err
	}
	if sum.RowsRead > 0 {
		// Validate reads on to the end so that every row is reported, then
		// refuses the file as upload would.
		if err := checks.missingRequired(input, provided, unknown); err != nil {
			return err
		}
	}
	if done, err := checks.noRows(input, sum); done {
		return err
	}
	return rowsStatus(sum, true)
}

// validateFile reads, maps and records every row of the input. It returns
// the summary even when it stops early, so that what was done is reported.
// It also returns the fields the input's columns provide and its unknown
// columns.
func validateFile(ctx context.Context, name string, e *Env, in *InputOptions, overwrite bool, log *slog.Logger, budget *memoryBudget, extra ...outfile.Output) (*summary.Summary, []lead.Field, []string, error) {
	resultsPath := in.resultsPath(name)
	lock, err := lockResults(resultsPath, "validate")
	if err != nil {
		return nil, nil, nil, err
	}
	defer lock.Unlock()
	if err := in.checkOutputs(name, resultsPath, false, overwrite, "choose another path, or pass --overwrite to replace it and lose its lead ids and bids", extra...); err != nil {
		return nil, nil, nil, err
	}
	src, err := in.open(ctx, name, e.Stdin, log, 0, nil, nil)
	if err != nil {
		return nil, nil, nil, &stoppedBeforeReading{err}
	}
	defer src.Close()

	w, err := report.Create(resultsPath)
	if err != nil {
		return nil, nil, nil, &stoppedBeforeReading{fmt.Errorf("results file: %w", err)}
	}
	sum := &summary.Summary{Mode: "validate", Start: time.Now(), Settings: in.settings(name, resultsPath)}
	stampBuild(sum)

	for n := 0; ; n++ {
		if n%ctxCheckEvery == 0 {
			if ctx.Err() != nil {
				sum.Interrupted = true
				err = ctx.Err()
				break
			}
			budget.update(src.IndexMemory())
		}
		it, rerr := src.Next(ctx)
		if errors.Is(rerr, io.EOF) {
			break
		}
		if ctx.Err() != nil {
			sum.Interrupted = true
			err = ctx.Err()
			break
		}
		if rerr != nil {
			err = rerr
			break
		}
		if werr := w.Write(it.Row); werr != nil {
			err = fmt.Errorf("write results file %s: %w", resultsPath, werr)
			break
		}
		sum.RowsRead++
		sum.Count(it.Row)
	}
	if cerr := w.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("write results file %s: %w", resultsPath, cerr)
	}
	if cerr := src.Close(); cerr != nil && err == nil {
		err = cerr
	}
	sum.End = time.Now()
	sum.InputSHA256 = src.InputSHA256()
	sum.InputBytes, sum.InputGrewBytes = src.InputBytes(), src.Grew()
	setColumns(sum, src.Provided(), src.Unknown())
	log.Info("results written", "path", resultsPath)
	return sum, src.Provided(), src.Unknown(), err
}

// stoppedBeforeReading is validateFile's error for a run that stopped after
// its outputs were proven and before it read a row (an input that cannot be
// opened or has no usable header; a results file that cannot be created):
// --summary-json is then written, saying why.
type stoppedBeforeReading struct{ err error }

func (e *stoppedBeforeReading) Error() string { return e.err.Error() }
func (e *stoppedBeforeReading) Unwrap() error { return e.err }

// settings records the options that shaped a run, for --summary-json:
// camelCase keys, typed values.
func (o *InputOptions) settings(input, results string) map[string]any {
	return map[string]any{
		"input":     input,
		"format":    o.Format,
		"delimiter": o.Delimiter,
		"encoding":  o.Encoding,
		"dateOrder": o.DateOrder,
		"mapping":   o.Mapping,
		"results":   results,
		"rejects":   o.Rejects,
	}
}

// corruptInput reports whether err says the input's bytes are corrupt (a
// gzip stream whose checksum or header is wrong, or that ends early) rather
// than that reading them failed.
func corruptInput(err error) bool {
	var flateErr flate.CorruptInputError
	return errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.As(err, &flateErr) || errors.Is(err, io.ErrUnexpectedEOF)
}
