package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/summary"
)

// part is one results file read back by bulkload summary or bulkload
// report: its path, the summary beside it when it is fresh, and its meta
// file (nil when it has none).
type part struct {
	results string
	// summary is the summary beside the results file (summary.Path), nil
	// when there is none or it is older than the results file: a run on
	// the file after it was killed before it wrote one, and it describes
	// an earlier run.
	summary *summary.Summary
	meta    *outfile.Meta
}

// readParts reads the summary and meta file beside each results file at
// paths. A file there that is not one bulkload writes is an error
// (summary.Read, outfile.ReadMeta); a missing one is not.
func readParts(paths []string) ([]part, error) {
	var parts []part
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("results file: %w", err)
		}
		s, err := summary.Read(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w (delete it to have the results file's rows read instead)", err)
		}
		if s != nil {
			if side, err := os.Stat(summary.Path(p)); err != nil || st.ModTime().After(side.ModTime()) {
				s = nil
			}
		}
		m, err := outfile.ReadMeta(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		parts = append(parts, part{results: p, summary: s, meta: m})
	}
	return parts, nil
}

// combinedVerdict is the one verdict on results files read together, which
// bulkload summary exits with and bulkload report's page states: nil (exit
// 0) only when the accounting holds, every row of every input is settled
// (rowsStatus; invalid rows only with strict), none was only validated,
// none is in no file, and the last run on each file (its fresh summary)
// ended with exit 0; else an exit 1, with the reasons beyond the rows'
// counts, one sentence each, for the operator.
func combinedVerdict(sum *summary.Summary, parts []part, strict bool) (error, []string) {
	err := rowsStatus(sum, strict)
	var reasons []string
	if msg, ok := sum.Accounting(); !ok {
		reasons = append(reasons, "the accounting does not add up ("+msg+"): a row held by more than one results file is counted once per file, bids included; give each input's rows once")
	}
	if sum.Valid > 0 {
		// A validated row was never uploaded: not settled.
		reasons = append(reasons, fmt.Sprintf("%d rows were only validated (status valid), never uploaded", sum.Valid))
	}
	if sum.NotSent > 0 {
		reasons = append(reasons, fmt.Sprintf("%d rows are in no results file: a shard did not run or stopped early; run it (again) with --resume", sum.NotSent))
	}
	for _, p := range parts {
		if s := p.summary; s != nil && s.ExitCode != nil && *s.ExitCode != ExitOK {
			why := ""
			if s.Stopped != "" {
				why = ": " + s.Stopped
			}
			reasons = append(reasons, fmt.Sprintf("the last run on %s ended with exit %d%s; see its log, and run it again with --resume", p.results, *s.ExitCode, why))
		}
	}
	if len(reasons) > 0 {
		err = errRowsLeft
	}
	return err, reasons
}
