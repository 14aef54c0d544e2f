package report

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/outfile"
)

// Journal is the results file of an upload, appended to as rows complete, in
// completion order; a reader takes the last line of each row. At the end of
// the run Compact rewrites it as one line per row in row order.
//
// A Journal is not safe for concurrent use: one goroutine owns it (the one
// that owns the results file) and closes it, with Compact or Close.
type Journal struct {
	path   string
	format Format
	f      *os.File
	enc    *encoder
	// rename replaces the journal with its compacted copy; tests inject a
	// failing one to show that the journal survives.
	rename func(oldpath, newpath string) error
}

// OpenJournal opens the results file at path for an upload, in the format
// FormatFor(path) gives, with mode 0600. It deletes what a crash during an
// earlier Compact left behind (hidden files named .NAME.compact-*). With resume false it creates or
// truncates the file. With resume true it appends to the existing file (or
// creates it if there is none), after cutting off a half-written last line; a
// corrupt line elsewhere is an error wrapping ErrCorrupt and the file is left
// as it is.
func OpenJournal(path string, resume bool) (*Journal, error) {
	j := &Journal{path: path, format: FormatFor(path), rename: os.Rename}
	removeStaleCompactions(path)
	if !resume {
		f, err := createPrivate(path)
		if err != nil {
			return nil, err
		}
		j.f = f
		j.enc = newEncoder(f, j.format)
		if err := errors.Join(j.enc.writeHeader(), j.enc.flush()); err != nil {
			f.Close()
			return nil, fmt.Errorf("write results file %s: %w", path, err)
		}
		return j, nil
	}

	// Continued in place: only a regular file of ours, never through a
	// link, its mode narrowed to 0600.
	f, err := outfile.OpenOwned(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open results file to resume: %w", err)
	}
	fail := func(err error) (*Journal, error) {
		f.Close()
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return fail(fmt.Errorf("open results file to resume: %w", err))
	}
	res, err := scan(f, st.Size(), j.format, path, func(*scanned) error { return nil })
	if err != nil {
		return fail(fmt.Errorf("%w (repair or delete that line, or start over without resuming)", err))
	}
	if res.validEnd < st.Size() {
		if err := f.Truncate(res.validEnd); err != nil {
			return fail(fmt.Errorf("results file %s: cut off the half-written last line: %w", path, err))
		}
	}
	if _, err := f.Seek(res.validEnd, io.SeekStart); err != nil {
		return fail(fmt.Errorf("results file %s: %w", path, err))
	}
	j.f = f
	j.enc = newEncoder(f, j.format)
	if res.validEnd == 0 {
		if err := errors.Join(j.enc.writeHeader(), j.enc.flush()); err != nil {
			return fail(fmt.Errorf("write results file %s: %w", path, err))
		}
	}
	return j, nil
}

// AppendDurable adds a row's line and writes it through to the OS before
// returning, so that it survives the process being killed (not a power cut:
// a line is not fsynced, which would cost milliseconds each; the file
// Compact writes is). Every line is written this way: a `created` line must
// be on disk before submitLead is called, and the engine journals each line
// as it comes.
func (j *Journal) AppendDurable(r lead.Row) error {
	if j.f == nil {
		return fmt.Errorf("append to results file %s: journal is closed", j.path)
	}
	if err := j.enc.write(&r); err != nil {
		return fmt.Errorf("append row %d to results file %s: %w", r.Row, j.path, err)
	}
	return j.flush()
}

func (j *Journal) flush() error {
	if err := j.enc.flush(); err != nil {
		return fmt.Errorf("write results file %s: %w", j.path, err)
	}
	return nil
}

// Close flushes the buffer and closes the file without compacting it: the
// file stays a journal, which LoadState reads as well.
func (j *Journal) Close() error {
	if j.f == nil {
		return nil
	}
	err := j.flush()
	if cerr := j.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close results file %s: %w", j.path, cerr)
	}
	j.f = nil
	return err
}

// lineRef locates the line of one row in a results file, in 16 bytes: its
// offset, its length and status code packed in meta, and its row number.
type lineRef struct {
	off  int64
	meta uint32 // length<<4 | statusCode
	row  int32
}

// maxLine bounds a line's length so that it fits lineRef.meta.
const maxLine = 1<<28 - 1

func newLineRef(s *scanned) (lineRef, error) {
	n := s.end - s.start
	if n > maxLine {
		return lineRef{}, fmt.Errorf("%w: row %d: line of %d bytes is longer than %d", ErrCorrupt, s.row.Row, n, maxLine)
	}
	return lineRef{off: s.start, meta: uint32(n)<<4 | uint32(statusCode(s.row.Status)), row: int32(s.row.Row)}, nil
}

func (r lineRef) len() int            { return int(r.meta >> 4) }
func (r lineRef) status() lead.Status { return statusOf(uint8(r.meta & 15)) }

// readRefs scans the results file f and returns the last line of each row,
// sorted by row.
func readRefs(f *os.File, path string, format Format) ([]lineRef, scanResult, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, scanResult{}, fmt.Errorf("read results file %s: %w", path, err)
	}
	var refs []lineRef
	const sample = 1024
	res, err := scan(f, st.Size(), format, path, func(s *scanned) error {
		r, err := newLineRef(s)
		refs = append(refs, r)
		if len(refs) == sample && s.end > 0 {
			// Size the slice once from the lines so far, rather than
			// doubling it (which would hold old and new arrays at once).
			est := int(st.Size() / s.end * sample * 11 / 10)
			refs = slices.Grow(refs, est-len(refs))
		}
		return err
	})
	if err != nil {
		return nil, res, err
	}
	// Offsets grow in file order, so (row, offset) puts each row's last
	// line last among its lines.
	slices.SortFunc(refs, func(a, b lineRef) int {
		return cmp.Or(cmp.Compare(a.row, b.row), cmp.Compare(a.off, b.off))
	})
	return lastPerRow(refs), res, nil
}

// Compact flushes the journal, then rewrites it as one line per row (its
// last line) in row order: it writes a new file in the same directory (mode
// 0600), syncs it and renames it over the journal, so a crash or an error
// during compaction leaves the journal whole. The Journal is closed
// afterwards, whether or not Compact succeeded.
//
// Memory: 16 bytes per journal line (offset, length, status and row of each
// line), never the rows themselves; the lines are copied with ReadAt.
func (j *Journal) Compact() (err error) {
	if j.f == nil {
		return fmt.Errorf("compact results file %s: journal is closed", j.path)
	}
	defer func() {
		if cerr := j.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := j.flush(); err != nil {
		return err
	}
	return compact(j.f, j.path, j.format, j.rename)
}

func compact(f *os.File, path string, format Format, rename func(string, string) error) (err error) {
	refs, res, err := readRefs(f, path, format)
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	if res.partial != 0 {
		return fmt.Errorf("compact results file %s: %w: its last line is half-written", path, ErrCorrupt)
	}

	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, outfile.CompactPattern(base))
	if err != nil {
		return fmt.Errorf("compact results file %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("compact results file %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(tmp, 256<<10)
	if format == FormatCSV {
		if _, err := bw.WriteString(Header + "\n"); err != nil {
			return fmt.Errorf("compact results file %s: %w", path, err)
		}
	}
	var buf []byte
	for _, r := range refs {
		buf = slices.Grow(buf[:0], r.len())[:r.len()]
		if _, err := f.ReadAt(buf, r.off); err != nil {
			return fmt.Errorf("compact results file %s: read row %d: %w", path, r.row, err)
		}
		if _, err := bw.Write(bytes.TrimLeft(buf, "\r\n")); err != nil {
			return fmt.Errorf("compact results file %s: %w", path, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("compact results file %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("compact results file %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("compact results file %s: %w", path, err)
	}
	if err := rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("compact results file %s: replace it with the compacted copy (the journal is intact; a resumed run reads it): %w", path, err)
	}
	syncDir(dir)
	return nil
}

// removeStaleCompactions deletes the temporary files of a compaction that a
// crash interrupted; the journal they were copied from is still there.
func removeStaleCompactions(path string) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	quoted := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`).Replace(base)
	stale, _ := filepath.Glob(filepath.Join(dir, outfile.CompactPattern(quoted)))
	for _, p := range stale {
		_ = os.Remove(p)
	}
}

// lastPerRow keeps the last lineRef of each row of refs sorted by row.
func lastPerRow(refs []lineRef) []lineRef {
	out := refs[:0]
	for i, r := range refs {
		if i+1 < len(refs) && refs[i+1].row == r.row {
			continue
		}
		out = append(out, r)
	}
	return out
}

// syncDir makes a rename in dir durable. It is best effort: some file
// systems cannot sync a directory, and the rename has happened either way.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	d.Close()
}
