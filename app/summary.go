package app

import (
	"flag"
	"fmt"

	"github.com/bulkload/bulkload/summary"
)

// SummaryOptions are the flags of "bulkload summary".
type SummaryOptions struct {
	jsonPath string
	strict   bool
}

// RegisterSummaryFlags registers the flags of "bulkload summary".
func RegisterSummaryFlags(o *SummaryOptions) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		fs.StringVar(&o.jsonPath, "summary-json", "", `file to write the combined summary to as JSON ("-": standard output)`)
		fs.BoolVar(&o.strict, "strict", false, "exit 1 on any invalid row, as upload --strict")
	}
}

// Summarize prints the combined summary of results files (the shards of a
// backfill, a night's runs), writes it to --summary-json, and returns it
// with the error an upload of them all would end with: nil only when every
// row of every input is settled.
func Summarize(e *Env, o *SummaryOptions, paths []string) (*summary.Summary, error) {
	jsonPath := o.jsonPath
	if jsonPath != "" && jsonPath != "-" {
		if err := checkReadOnly("--summary-json", jsonPath, paths); err != nil {
			return nil, err
		}
	}
	sum, err := summary.Combine(paths)
	if err != nil {
		return nil, UsageErrorf("%v", err)
	}
	stampBuild(sum)
	sum.Settings = map[string]any{"results": paths}
	if err := printSummary(e, sum); err != nil {
		return nil, err
	}
	err = rowsStatus(sum, o.strict)
	if sum.Valid > 0 {
		// A validated row was never uploaded: not settled.
		fmt.Fprintf(e.Stderr, "bulkload: %d rows were only validated (status valid), never uploaded\n", sum.Valid)
		err = errRowsLeft
	}
	if sum.NotSent > 0 {
		fmt.Fprintf(e.Stderr, "bulkload: %d rows are in no results file: a shard did not run or stopped early; run it (again) with --resume\n", sum.NotSent)
		err = errRowsLeft
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
