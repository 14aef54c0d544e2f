package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/bulkload/bulkload/report"
)

// ctxCheckEvery is how many rows validate reads between looks at the
// context: often enough to stop within milliseconds, rare enough to cost
// nothing per row.
const ctxCheckEvery = 1024

func runValidate(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet("validate", "validate [flags] FILE", e.stderr)
	var (
		in   inputOptions
		logs logOptions
	)
	in.register(fs)
	logs.register(fs)
	pos, _, err := parseSettings(fs, args, e.getenv, "validate", 1)
	if err != nil {
		return exitFor(e.stderr, err)
	}
	log, err := logs.logger(e.stderr)
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
	sum, err := validateFile(ctx, pos[0], e, &in, log)
	if sum != nil {
		if werr := writeSummary(e.stderr, sum, in.summaryJSON); werr != nil && err == nil {
			err = werr
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case err != nil:
		return exitFor(e.stderr, err)
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
	if sum.Invalid+sum.Failed+sum.SubmitFailed+sum.Created+sum.Unknown > 0 {
		return exitRowsFailed
	}
	return exitOK
}

// validateFile reads, maps and records every row of the input. It returns
// the summary even when it stops early, so that what was done is reported.
func validateFile(ctx context.Context, name string, e *env, in *inputOptions, log *slog.Logger) (*report.Summary, error) {
	resultsPath := in.resultsPath(name)
	if err := checkOutputs(name, map[string]string{"--results": resultsPath, "--rejects": in.rejects, "--summary-json": in.summaryJSON}); err != nil {
		return nil, err
	}
	src, err := in.open(ctx, name, e.stdin, log)
	if err != nil {
		return nil, err
	}
	defer src.Close()

	w, err := report.Create(resultsPath)
	if err != nil {
		return nil, fmt.Errorf("results file: %w", err)
	}
	sum := &report.Summary{Mode: "validate", Version: version, Start: time.Now(), Settings: in.settings(name, resultsPath)}

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
		sum.Count(it.SummaryRow())
	}
	if cerr := w.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("write results file %s: %w", resultsPath, cerr)
	}
	if cerr := src.Close(); cerr != nil && err == nil {
		err = cerr
	}
	sum.End = time.Now()
	sum.InputSHA256 = src.InputSHA256()
	log.Info("results written", "path", resultsPath)
	return sum, err
}

// settings records the options that shaped a run, for --summary-json.
func (o *inputOptions) settings(input, results string) map[string]string {
	return map[string]string{
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

// writeSummary prints the summary and, when asked, writes it as JSON.
func writeSummary(stderr io.Writer, sum *report.Summary, jsonPath string) error {
	if err := sum.WriteText(stderr); err != nil {
		return err
	}
	if jsonPath != "" {
		if err := sum.WriteJSON(jsonPath); err != nil {
			return fmt.Errorf("--summary-json: %w", err)
		}
	}
	return nil
}
