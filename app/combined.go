package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/report"
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

// combine reads the results files at paths (the shards of one sharded
// upload, or a night's runs of several partners) and returns one Summary
// of them all, for "what happened?" without a spreadsheet. Each file's
// rows are counted by their last line. Files whose meta files name the same
// input (by SHA-256) are taken as parts of one run: that input's row count
// is read once, and its rows that no file holds are counted as not sent
// (a shard that never ran, or stopped before them), while a row held by two
// files is counted twice, so the accounting check shows both. A file
// without a meta file stands alone, its rows read being the rows it holds.
func combine(paths []string) (*summary.Summary, error) {
	sum := &summary.Summary{Mode: "summary"}
	type input struct {
		rows   int          // the input's row count, from its meta file
		seen   map[int]int  // rows held, by row number: how many files hold it
		name   string       // the input as its meta file names it
		shards int          // N of the shards seen (0: not sharded)
		have   map[int]bool // the shard indexes (K) that have a results file
	}
	noSide := 0
	inputs := map[string]*input{}
	var order []string
	for _, path := range paths {
		st, err := report.LoadState(path)
		if err != nil {
			return nil, fmt.Errorf("summary of %s: %w", path, err)
		}
		meta, merr := outfile.ReadMeta(path)
		var in *input
		switch {
		case merr == nil && meta.InputSHA256 != "":
			if in = inputs[meta.InputSHA256]; in == nil {
				in = &input{rows: meta.Rows, seen: map[int]int{}, name: meta.Input, have: map[int]bool{}}
				inputs[meta.InputSHA256] = in
				order = append(order, meta.InputSHA256)
				sum.RowsRead += meta.Rows
			}
		case merr != nil && !errors.Is(merr, fs.ErrNotExist):
			st.Close()
			return nil, fmt.Errorf("summary of %s: %w", path, merr)
		default:
			sum.RowsRead += st.Len()
		}
		// The calls and tokens are in the summary the last run wrote
		// beside the results file; so is its shard.
		side, serr := summary.Read(path)
		switch {
		case serr == nil:
			sum.APICalls += side.APICalls
			sum.Retries += side.Retries
			sum.TokensFetched += side.TokensFetched
		case errors.Is(serr, fs.ErrNotExist):
			noSide++
		default:
			// Damaged or edited: counting it would add what no run did.
			st.Close()
			return nil, fmt.Errorf("summary of %s: %w (delete it to count the results file's rows without it)", path, serr)
		}
		if k, n, ok := shardOf(path, side); ok && in != nil {
			in.shards = max(in.shards, n)
			in.have[k] = true
		}
		for row := range st.All() {
			sum.Count(row)
			if in != nil {
				in.seen[row.Row]++
			}
		}
		st.Close()
	}
	for _, sha := range order {
		in := inputs[sha]
		held := 0
		for _, n := range in.seen {
			if n > 0 {
				held++
			}
		}
		if missing := in.rows - held; missing > 0 {
			sum.NotSent += missing
		}
		for k := range in.shards {
			if !in.have[k] {
				sum.Notes = append(sum.Notes, fmt.Sprintf("shard %d of %d (--shard %d/%d) of %s has no results file here: it did not run, or its file was not given; run it with --resume", k, in.shards, k, in.shards, in.name))
			}
		}
	}
	if noSide > 0 {
		sum.Notes = append(sum.Notes, fmt.Sprintf("API calls and tokens fetched: %d of %d results files have no summary beside them (written before bulkload kept one, or by a run that stopped before its end): their calls are not counted", noSide, len(paths)))
	}
	return sum, nil
}

// shardOf returns the shard K of N a results file was written for: from
// the settings of the summary beside it, else from its name.
func shardOf(path string, side *summary.Summary) (k, n int, ok bool) {
	if side != nil {
		if v, _ := side.Settings["shard"].(string); v != "" {
			if _, err := fmt.Sscanf(v, "%d/%d", &k, &n); err == nil && n > 0 {
				return k, n, true
			}
		}
	}
	// A default results file name carries it: backfill.shard-2-of-4.results.csv.
	if m := regexp.MustCompile(`\.shard-(\d+)-of-(\d+)\.`).FindStringSubmatch(filepath.Base(path)); m != nil {
		k, _ = strconv.Atoi(m[1])
		n, _ = strconv.Atoi(m[2])
		return k, n, n > 0
	}
	return 0, 0, false
}
