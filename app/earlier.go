package app

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/upload"
)

// earlierRun is a results file that an earlier upload of this input left
// in the folder of this run's results file, under another name (another
// {date}, {sha} or shard).
type earlierRun struct {
	path string // the results file
	meta *outfile.Meta
}

// describe names the earlier run for a message.
func (r earlierRun) describe() string {
	shard := ""
	if r.meta.Shard != "" {
		shard = ", shard " + r.meta.Shard
	}
	return fmt.Sprintf("%s (written for %s, sha256 %s, %d rows%s, %s)", r.path, r.meta.Input, short(r.meta.InputSHA256), r.meta.Rows, shard, r.meta.Written.Local().Format(time.DateTime))
}

// findEarlier looks in the folder of resultsPath for the results files of
// earlier uploads of input: a results file beside whose meta file names the
// same bytes (the same SHA-256 over the same size) or the first bytes of
// input (rows appended since: their hash at the size recorded). A results
// file of a stream, or whose meta file cannot be read, is not one. The
// newest comes first. It reads input once, and only when a meta file of a
// size that fits is there.
func findEarlier(ctx context.Context, resultsPath, input string) ([]earlierRun, error) {
	st, err := os.Stat(input)
	if err != nil || !st.Mode().IsRegular() {
		return nil, nil // the check before the first call says what is wrong
	}
	dir := filepath.Dir(resultsPath)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("look for an earlier run's results beside %s: %w", resultsPath, err)
	}
	self := filepath.Clean(resultsPath)
	var cands []earlierRun
	for _, e := range entries {
		results, ok := strings.CutSuffix(e.Name(), ".meta")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		switch strings.ToLower(filepath.Ext(results)) {
		case ".csv", ".jsonl":
		default:
			continue
		}
		path := filepath.Join(dir, results)
		if path == self || strings.HasSuffix(results, ".simulated.results.csv") {
			continue // this run's own, or the built-in simulator's (upload --simulate)
		}
		if rs, err := os.Lstat(path); err != nil || !rs.Mode().IsRegular() {
			continue // no results file: that run sent nothing
		}
		m, err := outfile.ReadMeta(path)
		if err != nil || m.Streamed || m.InputBytes <= 0 || m.InputBytes > st.Size() || strings.HasPrefix(m.InputSHA256, "partial:") {
			continue
		}
		cands = append(cands, earlierRun{path: path, meta: m})
	}
	if len(cands) == 0 {
		return nil, nil
	}
	offsets := make([]int64, 0, len(cands))
	for _, c := range cands {
		offsets = append(offsets, c.meta.InputBytes)
	}
	sums, err := prefixSHA256(ctx, input, offsets)
	if err != nil {
		return nil, fmt.Errorf("look for an earlier run's results of %s: %w", input, err)
	}
	var out []earlierRun
	for _, c := range cands {
		if sums[c.meta.InputBytes] == c.meta.InputSHA256 {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b earlierRun) int {
		return cmp.Or(b.meta.Written.Compare(a.meta.Written), strings.Compare(a.path, b.path))
	})
	return out, nil
}

// prefixSHA256 hashes the file at path once, and returns the SHA-256 of
// its first n bytes for each n of offsets that the file reaches.
func prefixSHA256(ctx context.Context, path string, offsets []int64) (map[int64]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	offsets = slices.Clone(offsets)
	slices.Sort(offsets)
	offsets = slices.Compact(offsets)
	out := make(map[int64]string, len(offsets))
	h := sha256.New()
	var n int64
	buf := make([]byte, 256<<10)
	for _, at := range offsets {
		for n < at {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			k, err := f.Read(buf[:min(int64(len(buf)), at-n)])
			h.Write(buf[:k])
			n += int64(k)
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			if err != nil {
				return nil, err
			}
		}
		out[at] = hex.EncodeToString(h.Sum(nil))
	}
	return out, nil
}

// shareRelation says how the rows two runs of one input take relate.
type shareRelation int

const (
	sameShare shareRelation = iota // the same rows: one run continues the other
	otherRows                      // no row in common (another shard of the same count)
	overlap                        // some rows in common, not all (another shard count)
)

// shareOf compares a run's shard with an earlier run's, as recorded in its
// meta file ("K/N", "" for all rows).
func shareOf(run upload.Shard, earlier string) shareRelation {
	was := upload.Shard{}
	if earlier != "" {
		var err error
		if was, err = upload.ParseShard(earlier, func(string) string { return "" }); err != nil {
			return overlap
		}
	}
	whole := func(s upload.Shard) bool { return s.N <= 1 }
	switch {
	case whole(run) && whole(was), run == was:
		return sameShare
	case !whole(run) && !whole(was) && run.N == was.N:
		return otherRows
	}
	return overlap
}

// earlierResults decides, for an upload of a file whose results file does
// not exist, what an earlier run of the same input that left its results
// under another name (another {date} after midnight, another {sha} after
// rows were appended, another --shard) means for this one. It returns the
// results file to use: resultsPath, or, with --resume, the earlier run's of
// the same rows and endpoint, which this run continues. It refuses (exit 2,
// nothing sent) an earlier run of the same rows without --resume, one of an
// overlapping share of rows (another --shard count: the rows this run
// takes may have been sent there), and one that did not record its
// endpoint; --overwrite sends every lead again into resultsPath. An
// earlier run against another endpoint (a sandbox) is not this one's.
func (u *uploader) earlierResults(ctx context.Context, resultsPath string) (string, error) {
	if streamed(u.input) {
		return resultsPath, nil
	}
	if _, err := os.Lstat(resultsPath); !errors.Is(err, fs.ErrNotExist) {
		return resultsPath, nil
	}
	runs, err := findEarlier(ctx, resultsPath, u.input)
	if err != nil || len(runs) == 0 {
		return resultsPath, err
	}
	// A run the ledger recorded needs no results file to be resumed: the
	// ledger knows its leads (this run acts as its resume, writing its own
	// results file). Only the runs it does not know are this check's.
	runs = slices.DeleteFunc(runs, func(r earlierRun) bool { return u.ledgerKnows(ctx, r.path) })
	if len(runs) == 0 {
		return resultsPath, nil
	}
	endpoint := redact.URL(u.creds.Endpoint)
	var same, other []earlierRun
	for _, r := range runs {
		switch {
		case r.meta.Endpoint != "" && r.meta.Endpoint != endpoint:
		case shareOf(u.up.shardOf, r.meta.Shard) == otherRows:
		case r.meta.Endpoint == "" || shareOf(u.up.shardOf, r.meta.Shard) == overlap:
			other = append(other, r)
		default:
			same = append(same, r)
		}
	}
	names := func(rs []earlierRun) string {
		d := make([]string, len(rs))
		for i, r := range rs {
			d[i] = r.describe()
		}
		return strings.Join(d, "; ")
	}
	switch {
	case len(same)+len(other) == 0:
		return resultsPath, nil
	case u.up.Overwrite:
		u.log.Warn("--overwrite: an earlier upload of this input left its results under another name; "+u.overwriteSends(), "results", resultsPath, "earlier", names(append(same, other...)))
		return resultsPath, nil
	case len(other) > 0:
		why := "rows this run takes may have been sent there (another --shard count: each shard takes other rows)"
		if other[0].meta.Endpoint == "" {
			why = "it does not record the endpoint it was sent to"
		}
		return "", foreignErrorf("the results file %s does not exist, but an earlier upload of this input left results in %s: %s. Nothing was sent. Continue the earlier run with its own settings (--results of that file, or its --shard count, and --resume), or pass --overwrite to start over (%s)",
			resultsPath, names(other), why, u.overwriteSends())
	case !u.up.Resume:
		return "", foreignErrorf("the results file %s does not exist, but an earlier upload of this input left its results in %s. Nothing was sent. Pass --resume to continue that run (its results file is written), or --overwrite to start over (%s)",
			resultsPath, names(same[:1]), u.overwriteSends())
	}
	u.log.Info("--resume: no results file under this name; continuing the earlier run of this input", "results", resultsPath, "earlier", same[0].path, "written", same[0].meta.Written)
	return same[0].path, nil
}
