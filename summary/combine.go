package summary

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/report"
)

// Combine reads the results files at paths (the shards of one sharded
// upload, or a night's runs of several partners) and returns one Summary
// of them all, for "what happened?" without a spreadsheet. Each file's
// rows are counted by their last line. Files whose meta files name the same
// input (by SHA-256) are taken as parts of one run: that input's row count
// is read once, and its rows that no file holds are counted as not sent
// (a shard that never ran, or stopped before them), while a row held by two
// files is counted twice, so the accounting check shows both. A file
// without a meta file stands alone, its rows read being the rows it holds.
func Combine(paths []string) (*Summary, error) {
	sum := &Summary{Mode: "summary"}
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
		side, serr := Read(path)
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
func shardOf(path string, side *Summary) (k, n int, ok bool) {
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
