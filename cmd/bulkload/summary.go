package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/bulkload/bulkload/report"
)

// summaryOptions are the flags of "bulkload summary".
type summaryOptions struct {
	jsonPath string
	strict   bool
}

// registerSummaryFlags registers the flags of "bulkload summary".
func registerSummaryFlags(o *summaryOptions) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		fs.StringVar(&o.jsonPath, "summary-json", "", `file to write the combined summary to as JSON ("-": standard output)`)
		fs.BoolVar(&o.strict, "strict", false, "exit 1 on any invalid row, as upload --strict")
	}
}

// runSummary prints the combined summary of results files (the shards of
// a backfill, a night's runs) and exits as an upload of them all would:
// 0 only when every row of every input is settled.
func runSummary(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet("summary", "summary [flags] RESULTS...", e.stderr)
	var (
		opts summaryOptions
		logs logOptions
	)
	registerSummaryFlags(&opts)(fs)
	logs.register(fs)
	paths, _, err := parseSettings(fs, args, e, "summary", -1)
	if err != nil {
		return exitFor(e.stderr, err)
	}
	jsonPath := opts.jsonPath
	log, err := e.logger(&logs)
	if err != nil {
		return exitFor(e.stderr, err)
	}
	if jsonPath != "" {
		for _, p := range paths {
			if p == jsonPath {
				return exitFor(e.stderr, usageErrorf("--summary-json %s is one of the results files to read", jsonPath))
			}
		}
	}
	sum, err := report.Combine(paths)
	if err != nil {
		return exitFor(e.stderr, usageErrorf("%v", err))
	}
	stampBuild(sum)
	sum.Settings = map[string]any{"results": paths}
	if err := printSummary(e, sum); err != nil {
		return exitFor(e.stderr, err)
	}
	err = rowsStatus(sum, opts.strict)
	if sum.Valid > 0 {
		// A validated row was never uploaded: not settled.
		fmt.Fprintf(e.stderr, "bulkload: %d rows were only validated (status valid), never uploaded\n", sum.Valid)
		err = errRowsLeft
	}
	if sum.NotSent > 0 {
		fmt.Fprintf(e.stderr, "bulkload: %d rows are in no results file: a shard did not run or stopped early; run it (again) with --resume\n", sum.NotSent)
		err = errRowsLeft
	}
	if jsonPath != "" {
		// Written once the exit status is known, with it.
		code := statusOf(err)
		sum.ExitCode = &code
		if werr := writeSummaryTo(e, sum, jsonPath); werr != nil {
			err = fmt.Errorf("--summary-json: %w", werr)
		}
	}
	code := exitFor(e.stderr, err)
	logSummary(e, log, sum, code)
	return code
}
