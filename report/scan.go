package report

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bulkload/bulkload/lead"
)

// ErrCorrupt is wrapped by the error for a results file line that is neither
// a valid row nor a half-written last line.
var ErrCorrupt = errors.New("corrupt results file")

// maxPartial bounds the half-written last line scan will consider: a longer
// unterminated tail is reported as corrupt rather than ignored.
const maxPartial = 1 << 20

// scanned is one complete line of a results file: the row and the byte span
// [start, end) of its line, newline included. A CSV span may begin with blank
// lines, which csv.Reader skips.
type scanned struct {
	row        lead.Row
	start, end int64
}

// scanResult is what a whole-file scan found.
type scanResult struct {
	validEnd int64 // offset just past the last complete line (0: empty, or a partial header only)
	partial  int   // half-written last lines ignored (0 or 1)
	lines    int   // complete row lines
}

// scan reads the results file in r (size bytes) and calls fn for each
// complete row line in file order. A half-written last line is not passed to
// fn: it is counted in partial, and validEnd stops before it. Any other
// malformed line is an error wrapping ErrCorrupt that names the line (its
// content is not quoted: it is partner data).
func scan(r io.ReaderAt, size int64, f Format, name string, fn func(*scanned) error) (scanResult, error) {
	if f == FormatJSONL {
		return scanJSONL(r, size, name, fn)
	}
	return scanCSV(r, size, name, fn)
}

func readTail(r io.ReaderAt, start, size int64) ([]byte, bool) {
	if size-start > maxPartial {
		return nil, false
	}
	b := make([]byte, size-start)
	if _, err := r.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
		return nil, false
	}
	return b, true
}

func scanCSV(r io.ReaderAt, size int64, name string, fn func(*scanned) error) (scanResult, error) {
	var res scanResult
	if size == 0 {
		return res, nil
	}
	head, _ := readTail(r, 0, min(size, int64(len(Header)+1)))
	if size <= int64(len(Header)) && strings.HasPrefix(Header, string(head)) {
		// Killed while writing the header: there is no row yet.
		res.partial = 1
		return res, nil
	}
	if !bytes.Equal(head, []byte(Header+"\n")) {
		return res, fmt.Errorf("%w: %s line 1: the header is not %q: not a bulkload results file", ErrCorrupt, name, Header)
	}

	cr := csv.NewReader(io.NewSectionReader(r, 0, size))
	cr.FieldsPerRecord = int(numColumns) // a short or long record is caught
	cr.ReuseRecord = true
	if _, err := cr.Read(); err != nil { // the header, checked above
		return res, fmt.Errorf("%w: %s line 1: %w", ErrCorrupt, name, err)
	}
	res.validEnd = cr.InputOffset()
	lastNL := func(end int64) bool {
		var b [1]byte
		_, err := r.ReadAt(b[:], end-1)
		return err == nil && b[0] == '\n'
	}
	for {
		start := cr.InputOffset()
		rec, err := cr.Read()
		end := cr.InputOffset()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil || (end == size && !lastNL(end)) {
			if tail, ok := readTail(r, start, size); ok && partialCSV(tail) {
				res.partial = 1
				return res, nil
			}
			var line int
			var pe *csv.ParseError
			switch {
			case errors.As(err, &pe):
				line, err = pe.StartLine, pe.Err
			case err == nil:
				line, _ = cr.FieldPos(0)
				err = errors.New("line is not terminated")
			default:
				line = lineOf(r, start)
			}
			return res, fmt.Errorf("%w: %s line %d: %w", ErrCorrupt, name, line, err)
		}
		row, err := decodeCSV(rec)
		if err != nil {
			line, _ := cr.FieldPos(0)
			return res, fmt.Errorf("%w: %s line %d: %w", ErrCorrupt, name, line, err)
		}
		res.lines++
		res.validEnd = end
		if err := fn(&scanned{row: row, start: start, end: end}); err != nil {
			return res, err
		}
	}
}

// lineOf returns the line number of offset off: one more than the newlines
// before it. It reads the file again, so it is for error messages only.
func lineOf(r io.ReaderAt, off int64) int {
	br := bufio.NewReader(io.NewSectionReader(r, 0, off))
	n := 1
	for {
		b, err := br.ReadSlice('\n')
		if len(b) > 0 && b[len(b)-1] == '\n' {
			n++
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return n
		}
	}
}

// partialCSV reports whether tail, the unterminated rest of a results CSV, is
// a prefix of one record: closed with a newline (and a quote, if it was cut
// inside a quoted field) it parses as a single record of at most ten fields.
func partialCSV(tail []byte) bool {
	tail = bytes.TrimLeft(tail, "\r\n")
	if len(tail) == 0 {
		return true
	}
	if swallowsRecords(tail) {
		return false
	}
	suffixes := []string{"\n", "\"\n"}
	if tail[len(tail)-1] == '\n' {
		// A terminated line is whole; only a newline inside a quoted field
		// that was cut short can end a partial record.
		suffixes = suffixes[1:]
	}
	for _, suffix := range suffixes {
		cr := csv.NewReader(io.MultiReader(bytes.NewReader(tail), strings.NewReader(suffix)))
		cr.FieldsPerRecord = -1
		rec, err := cr.Read()
		if err != nil || len(rec) > int(numColumns) {
			continue
		}
		if _, err := cr.Read(); errors.Is(err, io.EOF) {
			return true
		}
	}
	return false
}

// swallowsRecords reports whether a line inside tail (after a newline,
// ended by one) is a whole results record on its own. A stray quote earlier
// in the file makes the rest of it look like one long quoted field; if that
// passed for a half-written last line, resume would cut those rows off.
func swallowsRecords(tail []byte) bool {
	lines := bytes.Split(tail, []byte("\n"))
	if len(lines) < 3 {
		return false
	}
	for _, l := range lines[1 : len(lines)-1] {
		cr := csv.NewReader(bytes.NewReader(l))
		cr.FieldsPerRecord = int(numColumns)
		rec, err := cr.Read()
		if err != nil {
			continue
		}
		if _, err := strconv.Atoi(rec[colRow]); err == nil && lead.Status(rec[colStatus]).Known() {
			return true
		}
	}
	return false
}

func scanJSONL(r io.ReaderAt, size int64, name string, fn func(*scanned) error) (scanResult, error) {
	var res scanResult
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10)
	var (
		off  int64
		line []byte
		long []byte
	)
	for n := 1; ; n++ {
		var err error
		line, err = br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		start := off
		off += int64(len(line))
		if err != nil && !errors.Is(err, io.EOF) {
			return res, fmt.Errorf("read %s: %w", name, err)
		}
		if len(line) == 0 || line[len(line)-1] != '\n' {
			// Unterminated: the end of the file.
			if len(bytes.TrimSpace(line)) == 0 {
				return res, nil
			}
			if partialJSON(line) {
				res.partial = 1
				return res, nil
			}
			return res, fmt.Errorf("%w: %s line %d: unterminated line is not a JSON object", ErrCorrupt, name, n)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			res.validEnd = off
			continue
		}
		row, err := decodeJSON(line)
		if err != nil {
			return res, fmt.Errorf("%w: %s line %d: %w", ErrCorrupt, name, n, err)
		}
		res.lines++
		res.validEnd = off
		if err := fn(&scanned{row: row, start: start, end: off}); err != nil {
			return res, err
		}
	}
}

// partialJSON reports whether tail, an unterminated last line, is a prefix of
// a JSON object: a whole object, or one cut short.
func partialJSON(tail []byte) bool {
	tail = bytes.TrimSpace(tail)
	if len(tail) == 0 || tail[0] != '{' {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(tail))
	for {
		_, err := dec.Token()
		if err == nil {
			continue
		}
		return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	}
}
