package app

import (
	"compress/flate"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/metrics"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/report"
	"github.com/bulkload/bulkload/runreport"
	"github.com/bulkload/bulkload/source"
	"github.com/bulkload/bulkload/summary"
)

// ctxCheckEvery is how many rows validate reads between looks at the
// context: often enough to stop within milliseconds, rare enough to cost
// nothing per row.
const ctxCheckEvery = 1024

// RegisterValidateOverwrite registers validate's --overwrite.
func RegisterValidateOverwrite(overwrite *bool) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		fs.BoolVar(overwrite, "overwrite", false, "write the results although the file holds an upload's outcomes (its lead ids and bids are lost)")
	}
}

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
	budget := newMemoryBudget(e.Getenv)
	defer budget.restore()
	start := time.Now()
	sum, provided, unknown, err := validateFile(ctx, input, e, in, j.Overwrite, log, budget, j.Metrics.outputs()...)
	rec := j.Metrics.recorder(input, "")
	if sum == nil { // stopped before reading: no summary to print
		if errors.Is(err, context.Canceled) {
			err = &ExitError{Code: ExitInterrupted, Msg: "interrupted", Quiet: true}
		}
		var stop *stoppedBeforeReading
		if errors.As(err, &stop) && (in.summaryJSON != "" || in.report != "") {
			// The outputs were proven: say why in --summary-json and the
			// report, so that a fixed path does not keep an earlier run's
			// figures.
			stub := stoppedSummary("validate", start, err, strings.TrimPrefix(stop.err.Error(), "usage: "), in.settings(input, in.resultsPath(input)))
			if in.summaryJSON != "" {
				err = writeSummaryJSON(e, stub, in.summaryJSON, err)
			}
			err = writeReport(e, stub, in.report, err)
			finishValidateMetrics(ctx, log, rec, nil, StatusOf(err))
		}
		return nil, err
	}
	// A closed stderr (piped to head -1) loses the printed summary, not
	// the run: its results and --summary-json are still written.
	_ = printSummary(e, sum)
	err = validateStatus(j.Checks, input, sum, provided, unknown, err)
	err = writeSidecar(e, sum, in.resultsPath(input), in.summaryJSON, err)
	if in.summaryJSON != "" {
		err = writeSummaryJSON(e, sum, in.summaryJSON, err)
	}
	err = writeReport(e, sum, in.report, err)
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

// rowsStatus is the error of a run that went through its input: nil only
// when the accounting holds and every row ended valid, processed or
// submitted, or, unless invalidFails, invalid; else errRowsLeft (exit 1,
// the summary says which). An upload's invalid rows
// (within --max-invalid: more stop it before the first call) are the
// partner's to fix, not the operator's: they are reported (summary,
// metrics, --rejects) and do not fail the run without --strict; validate
// fails on any, finding them is its job.
func rowsStatus(sum *summary.Summary, invalidFails bool) error {
	if sum.Check() != nil {
		return errRowsLeft
	}
	bad := sum.Total(func(i lead.StatusInfo) bool {
		return i.Action == lead.OperatorAction || invalidFails && i.Action == lead.PartnerAction
	}) + sum.Unknown + sum.NotSent + sum.NotReached
	if bad > 0 {
		return errRowsLeft
	}
	return nil
}

// errRowsLeft is the error of a run that went through its input but left
// rows for the operator (exit 1); the summary, printed already, says
// which, so there is nothing more to print.
var errRowsLeft error = &ExitError{Code: ExitRowsFailed, Msg: "some rows are not settled; see the summary", Quiet: true}

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
		"format":    o.format,
		"delimiter": o.delimiter,
		"encoding":  o.encoding,
		"dateOrder": o.dateOrder,
		"mapping":   o.mapping,
		"results":   results,
		"rejects":   o.rejects,
	}
}

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
	if path == "" {
		return err
	}
	code := StatusOf(err)
	sum.ExitCode = &code
	if werr := runreport.Write(path, &runreport.Report{Summary: sum, Generated: time.Now()}); werr != nil {
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

// memoryBudget keeps validate's whole process near validateMemory. The
// duplicate-leadId index, the one thing that grows with the file, lives
// outside the Go heap (mapper.Mapper.IndexMemory), so the heap itself stays a
// few MiB, and GOGC's headroom, a percentage of that, would run the collector
// every couple of thousand rows, costing more CPU than the work itself.
// Instead the collector is off until the Go runtime's memory reaches its
// limit (GOMEMLIMIT): maxGoMemory, less as the index grows, never below
// minGoMemory, each plus perWorkerMemory for each of the source's workers
// (each holds batches and makes garbage: without that share, many workers
// kept the collector running all the time). The figures behind these
// bounds are in bench/README.md. A GOGC or
// GOMEMLIMIT the user set wins. These are the runtime's process-wide
// settings: set here, for validate only, and restored when it returns.
type memoryBudget struct {
	on        bool
	min, max  int64 // the Go runtime's bounds, the workers counted in
	gcPercent int
	limit     int64
	last      int64
}

const (
	// validateMemory is what index and Go runtime may hold together: the
	// aim is a peak RSS of 64 MiB, and the program's own pages (binary
	// text and data) come on top. 55 was chosen by measuring its
	// neighbours at 5M rows (bench/README.md): less costs CPU, more
	// passes the aim.
	validateMemory = 55 << 20
	// maxGoMemory is the most the Go runtime gets: more makes collections
	// rarer but no cheaper in total beyond this.
	maxGoMemory = 22 << 20
	// minGoMemory is the least the Go runtime gets, heap and stacks: room
	// for the batches in flight and the results file's buffers.
	minGoMemory = 8 << 20
	// perWorkerMemory is added to both bounds for each of the source's
	// workers (source.DefaultWorkers).
	perWorkerMemory = 1 << 20
)

func newMemoryBudget(getenv func(string) string) *memoryBudget {
	b := &memoryBudget{}
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return b
	}
	b.on = true
	workers := int64(source.DefaultWorkers())
	b.min, b.max = minGoMemory+workers*perWorkerMemory, maxGoMemory+workers*perWorkerMemory
	b.limit = debug.SetMemoryLimit(b.max)
	b.gcPercent = debug.SetGCPercent(-1)
	b.last = b.max
	return b
}

// update gives the Go runtime what the index leaves of the budget.
func (b *memoryBudget) update(indexBytes int) {
	if !b.on {
		return
	}
	limit := min(b.max, max(b.min, validateMemory-int64(indexBytes)))
	if limit < b.last-1<<20 || limit > b.last+1<<20 {
		debug.SetMemoryLimit(limit)
		b.last = limit
	}
}

func (b *memoryBudget) restore() {
	if b.on {
		debug.SetGCPercent(b.gcPercent)
		debug.SetMemoryLimit(b.limit)
	}
}

// corruptInput reports whether err says the input's bytes are corrupt (a
// gzip stream whose checksum or header is wrong, or that ends early) rather
// than that reading them failed.
func corruptInput(err error) bool {
	var flateErr flate.CorruptInputError
	return errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.As(err, &flateErr) || errors.Is(err, io.ErrUnexpectedEOF)
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
