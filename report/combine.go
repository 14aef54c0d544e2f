package report

import (
	"errors"
	"fmt"
	"io/fs"
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
		rows int         // the input's row count, from its meta file
		seen map[int]int // rows held, by row number: how many files hold it
	}
	inputs := map[string]*input{}
	var order []string
	for _, path := range paths {
		st, err := LoadState(path)
		if err != nil {
			return nil, fmt.Errorf("summary of %s: %w", path, err)
		}
		meta, merr := ReadMeta(path)
		var in *input
		switch {
		case merr == nil && meta.InputSHA256 != "":
			if in = inputs[meta.InputSHA256]; in == nil {
				in = &input{rows: meta.Rows, seen: map[int]int{}}
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
		for _, ref := range st.refs {
			row, ok := st.Get(int(ref.row))
			if !ok {
				continue
			}
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
	}
	return sum, nil
}
