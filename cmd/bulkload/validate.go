package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/report"
)

// ctxCheckEvery is how many rows validate reads between looks at the
// context: often enough to stop within milliseconds, rare enough to cost
// nothing per row.
const ctxCheckEvery = 1024

// registerValidateOverwrite registers validate's --overwrite.
func registerValidateOverwrite(overwrite *bool) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		fs.BoolVar(overwrite, "overwrite", false, "write the results although the file holds an upload's outcomes (its lead ids and bids are lost)")
	}
}

func runValidate(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet("validate", "validate [flags] FILE", e.stderr)
	var (
		in        = inputOptions{outputSuffix: ".validation.csv"}
		logs      logOptions
		overwrite bool
		checks    checkOptions
	)
	in.register(fs)
	registerValidateOverwrite(&overwrite)(fs)
	checks.register(fs, false)
	logs.register(fs)
	pos, _, err := parseSettings(fs, args, e, "validate", 1)
	if err != nil {
		return exitFor(e.stderr, err)
	}
	if err := errors.Join(in.check(), checks.check()); err != nil {
		return exitFor(e.stderr, err)
	}
	if err := in.expand(pos[0], time.Now()); err != nil {
		return exitFor(e.stderr, err)
	}
	log, err := e.logger(&logs)
	if err != nil {
		return exitFor(e.stderr, err)
	}

	// The duplicate-leadId index is the one thing that grows with the file
	// (about 21 bytes a row). It holds no pointers, so marking it is nearly
	// free, but the default GC headroom (GOGC=100) doubles it in RSS. At 50,
	// a 1M-row file peaks at ~47 MiB instead of ~58 MiB for ~2% more CPU
	// (bench/validate.sh). A GOGC the user set wins.
	if e.getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(50))
	}
	sum, provided, unknown, err := validateFile(ctx, pos[0], e, &in, overwrite, log)
	if sum != nil {
		if werr := writeSummary(e, log, sum, in.summaryJSON); werr != nil && err == nil {
			err = werr
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case err != nil:
		return exitFor(e.stderr, err)
	}
	if sum.RowsRead > 0 {
		// Validate reads on to the end so that every row is reported, then
		// refuses the file as upload would.
		if err := checks.missingRequired(pos[0], provided, unknown); err != nil {
			return exitFor(e.stderr, err)
		}
	}
	if code, ok := checks.noRows(e.stderr, pos[0], sum); ok {
		return code
	}
	return rowsStatus(sum)
}

// rowsStatus is the exit status of a run that went through its input: 0
// only when the accounting holds and every row ended valid, processed or
// submitted.
func rowsStatus(sum *report.Summary) int {
	if sum.Check() != nil {
		return exitRowsFailed
	}
	if sum.Invalid+sum.Failed+sum.SubmitFailed+sum.Unverified+sum.Created+sum.Unknown > 0 {
		return exitRowsFailed
	}
	return exitOK
}

// validateFile reads, maps and records every row of the input. It returns
// the summary even when it stops early, so that what was done is reported.
// It also returns the fields the input's columns provide and its unknown
// columns.
func validateFile(ctx context.Context, name string, e *env, in *inputOptions, overwrite bool, log *slog.Logger) (*report.Summary, []lead.Field, []string, error) {
	resultsPath := in.resultsPath(name)
	lock, err := lockResults(resultsPath, "validate")
	if err != nil {
		return nil, nil, nil, err
	}
	defer lock.Unlock()
	if err := in.checkOutputs(name, resultsPath, false, overwrite, "choose another path, or pass --overwrite to replace it and lose its lead ids and bids"); err != nil {
		return nil, nil, nil, err
	}
	src, err := in.open(ctx, name, e.stdin, log, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	defer src.Close()

	w, err := report.Create(resultsPath)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("results file: %w", err)
	}
	sum := &report.Summary{Mode: "validate", Start: time.Now(), Settings: in.settings(name, resultsPath)}
	stampBuild(sum)

	for n := 0; ; n++ {
		if n%ctxCheckEvery == 0 && ctx.Err() != nil {
			sum.Interrupted = true
			err = ctx.Err()
			break
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

// settings records the options that shaped a run, for --summary-json:
// camelCase keys, typed values.
func (o *inputOptions) settings(input, results string) map[string]any {
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
func stampBuild(sum *report.Summary) {
	sum.Build = report.Build(readBuildInfo())
	sum.Version = sum.Build.Version
}

// writeSummary prints the summary on stderr (with --log-format json, as one
// JSON log record, the same object as --summary-json) and, when asked,
// writes it as JSON.
func writeSummary(e *env, log *slog.Logger, sum *report.Summary, jsonPath string) error {
	if _, ok := e.stderr.(*jsonLines); ok {
		log.Info("summary", "summary", sum.JSON())
	} else if err := sum.WriteText(e.stderr); err != nil {
		return err
	}
	if jsonPath != "" {
		if err := sum.WriteJSON(jsonPath); err != nil {
			return fmt.Errorf("--summary-json: %w", err)
		}
	}
	return nil
}
