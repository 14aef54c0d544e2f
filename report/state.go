package report

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/bulkload/bulkload/lead"
)

// State is what a previous run left in a results file, for --resume: the
// last line of each row, journal or compacted file alike.
//
// It keeps 16 bytes per row in memory (the offset, length and status of the
// row's last line) and reads the rest of a row from the file when Get asks
// for it, so it holds the file open: the caller closes the State. It is not
// safe for concurrent use.
type State struct {
	path    string
	format  Format
	f       *os.File
	refs    []lineRef // sorted by row, one per row
	partial int
	lines   int

	block    []byte // a cached block of the file, for Gets in file order
	blockOff int64
	feed     *strings.Reader
	cr       *csv.Reader
}

// LoadState reads the results file at path. A half-written last line (the
// process was killed while writing it) is ignored and counted in
// IgnoredPartialLines; any other malformed line is an error wrapping
// ErrCorrupt that names the line. A missing file is an error wrapping
// fs.ErrNotExist.
func LoadState(path string) (*State, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read results file to resume: %w", err)
	}
	s := &State{path: path, format: FormatFor(path), f: f}
	refs, res, err := readRefs(f, path, s.format)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w (repair or delete that line, or start over without resuming)", err)
	}
	if len(refs) < cap(refs)*3/4 {
		refs = slices.Clip(slices.Clone(refs))
	}
	s.refs, s.partial, s.lines = refs, res.partial, res.lines
	return s, nil
}

func (s *State) find(row int) (lineRef, bool) {
	if row < 0 || row > maxRow {
		return lineRef{}, false
	}
	i, ok := slices.BinarySearchFunc(s.refs, int32(row), func(r lineRef, row int32) int {
		return int(r.row) - int(row)
	})
	if !ok {
		return lineRef{}, false
	}
	return s.refs[i], true
}

// Status returns the status of the row's last line without reading the file;
// false if the file has no line for the row.
func (s *State) Status(row int) (lead.Status, bool) {
	r, ok := s.find(row)
	if !ok {
		return "", false
	}
	return r.status(), true
}

// Get returns the row's last line, read back from the file; false if the
// file has no line for the row. It panics if the State is closed. The
// resume rules: skip invalid, processed and submitted rows; submit created
// and submit_failed rows by their ID without creating them again; send
// failed and missing rows again.
func (s *State) Get(row int) (lead.Row, bool) {
	r, ok := s.find(row)
	if !ok {
		return lead.Row{}, false
	}
	got, err := s.read(r)
	if err != nil {
		// The file changed under us since LoadState: report the status we
		// saw, which is what resume decides on.
		return lead.Row{Row: row, Status: r.status()}, true
	}
	return got, true
}

func (s *State) read(r lineRef) (lead.Row, error) {
	if s.f == nil {
		panic("report: State.Get after Close")
	}
	line, err := s.readLine(r)
	if err != nil {
		return lead.Row{}, err
	}
	if s.format == FormatJSONL {
		return decodeJSON(line)
	}
	if s.cr == nil {
		// One csv.Reader for every Get, reading one record per Get from
		// the feed.
		s.feed = strings.NewReader("")
		s.cr = csv.NewReader(s.feed)
		s.cr.FieldsPerRecord = int(numColumns)
		s.cr.ReuseRecord = true
	}
	// The reader never asks for more than the record it was given, so it
	// never sees the feed's end between Gets.
	s.feed.Reset(string(line))
	rec, err := s.cr.Read()
	if err != nil {
		s.cr = nil // it may be mid-record: start over next time
		return lead.Row{}, err
	}
	return decodeCSV(rec)
}

// blockSize is how much of the file a Get reads at once: Gets in row order
// on a compacted file then cost one read per block, not one per row.
const blockSize = 32 << 10

// readLine returns the line r locates, from the cached block if it holds
// it; a read that continues the last one reads a whole block. The result is valid until the next readLine.
func (s *State) readLine(r lineRef) ([]byte, error) {
	n := int64(r.len())
	if r.off >= s.blockOff && r.off+n <= s.blockOff+int64(len(s.block)) {
		return s.block[r.off-s.blockOff : r.off-s.blockOff+n], nil
	}
	size := n
	if r.off == s.blockOff+int64(len(s.block)) {
		// Reading on from the last read: probably rows in file order.
		size = max(n, blockSize)
	}
	s.block = slices.Grow(s.block[:0], int(size))[:size]
	m, err := s.f.ReadAt(s.block, r.off)
	s.block, s.blockOff = s.block[:m], r.off
	if int64(m) < n {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return s.block[:n], nil
}

// Len returns the number of rows the file has a line for.
func (s *State) Len() int { return len(s.refs) }

// Lines returns the number of complete lines read, superseded ones included.
func (s *State) Lines() int { return s.lines }

// IgnoredPartialLines returns the number of half-written last lines ignored
// (0 or 1): the row of such a line is as its previous line says, or missing.
func (s *State) IgnoredPartialLines() int { return s.partial }

// Close closes the results file the State reads rows from.
func (s *State) Close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// Outcomes counts the rows of the results file at path whose last line is
// an upload's outcome (any status but valid and invalid); 0 for a file that
// is missing or not a results file. outfile.CheckOutputs asks it before an
// output replaces a file. The lines before a corrupt one count:
// a damaged journal still holds lead ids worth keeping.
func Outcomes(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0
	}
	var refs []lineRef
	_, _ = scan(f, st.Size(), FormatFor(path), path, func(s *scanned) error {
		if r, err := newLineRef(s); err == nil {
			refs = append(refs, r)
		}
		return nil
	})
	slices.SortFunc(refs, func(a, b lineRef) int {
		return cmp.Or(cmp.Compare(a.row, b.row), cmp.Compare(a.off, b.off))
	})
	n := 0
	for _, r := range lastPerRow(refs) {
		if i, ok := r.status().Info(); !ok || i.Sent {
			n++
		}
	}
	return n
}
