package app

import (
	"context"
	"fmt"

	"github.com/bulkload/bulkload/summary"
)

// SummaryOptions are the flags of "bulkload summary".
type SummaryOptions struct {
	JSONPath string
	Strict   bool
	// Run is --run: the summary of a run the ledger recorded.
	Run    int64
	Ledger LedgerOptions
}

// Summarize prints the combined summary of results files (the shards of a
// backfill, a night's runs), writes it to --summary-json, and returns it
// with the error an upload of them all would end with: nil only when every
// row of every input is settled.
func Summarize(ctx context.Context, e *Env, o *SummaryOptions, paths []string) (*summary.Summary, error) {
	jsonPath := o.JSONPath
	switch {
	case o.Run != 0 && len(paths) > 0:
		return nil, UsageErrorf("summary: give --run ID or results files, not both")
	case o.Run != 0:
		return ledgerSummary(ctx, e, o)
	case len(paths) == 0:
		return nil, UsageErrorf("summary: give results files, or --run ID (bulkload history lists the runs)")
	}
	if jsonPath != "" && jsonPath != "-" {
		if err := checkReadOnly("--summary-json", jsonPath, paths); err != nil {
			return nil, err
		}
	}
	parts, err := readParts(paths)
	if err != nil {
		return nil, UsageErrorf("%v", err)
	}
	sum, err := combine(paths)
	if err != nil {
		return nil, UsageErrorf("%v", err)
	}
	if err := ledgerCalls(ctx, e, &o.Ledger, sum, paths); err != nil {
		return nil, err
	}
	stampBuild(sum)
	sum.Settings = map[string]any{"results": paths}
	if err := printSummary(e, sum); err != nil {
		return nil, err
	}
	err, reasons := combinedVerdict(sum, parts, o.Strict)
	for _, r := range reasons {
		fmt.Fprintf(e.Stderr, "bulkload: %s\n", r)
	}
	if jsonPath != "" {
		// Written once the exit status is known, with it.
		code := StatusOf(err)
		sum.ExitCode = &code
		if werr := writeSummaryTo(e, sum, jsonPath); werr != nil {
			err = fmt.Errorf("--summary-json: %w", werr)
		}
	}
	return sum, err
}

// ledgerSummary prints the summary of run --run as the ledger recorded
// it, and returns the error that run ended with.
func ledgerSummary(ctx context.Context, e *Env, o *SummaryOptions) (*summary.Summary, error) {
	l, err := readLedger(ctx, e, &o.Ledger)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	r, err := l.Run(ctx, o.Run)
	if err != nil {
		return nil, UsageErrorf("--run %d: %v", o.Run, err)
	}
	sum, err := summaryOf(r)
	if err != nil {
		return nil, UsageErrorf("--run %d: %v", o.Run, err)
	}
	if err := printSummary(e, sum); err != nil {
		return nil, err
	}
	code := ExitOK
	if sum.ExitCode != nil {
		code = *sum.ExitCode
	}
	if o.JSONPath != "" {
		if werr := writeSummaryTo(e, sum, o.JSONPath); werr != nil {
			return sum, fmt.Errorf("--summary-json: %w", werr)
		}
	}
	if code != ExitOK {
		// summary exits 0 or 1 (2 for its own usage): a run that did not
		// settle every row, whatever stopped it, is 1.
		return sum, &ExitError{Code: ExitRowsFailed, Msg: fmt.Sprintf("run %d exited %d: see its summary above", r.ID, code)}
	}
	return sum, nil
}
