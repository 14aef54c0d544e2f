package report

import (
	"fmt"
	"io"
	"os"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/outfile"
)

// Writer writes a results file sequentially, rows in the order given: the
// results of `bulkload validate`. Its owner calls Close; it is not safe for
// concurrent use.
type Writer struct {
	enc  *encoder
	file *outfile.File // set when Create opened it
	path string
}

// Create starts the results file at path as a new file of mode 0600, in
// the format FormatFor(path) gives, and writes the CSV header. It is
// written under a temporary name (outfile.Create) and renamed to path
// by Close, whole: a process killed before leaves no results file cut in
// a row at path. The caller closes the Writer.
func Create(path string) (*Writer, error) {
	f, err := outfile.Create(path, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create results file: %w", err)
	}
	w := NewWriter(f, FormatFor(path))
	w.file, w.path = f, path
	return w, nil
}

// createPrivate creates the results file at path as a new file of mode 0600
// (outfile.Replace): what was at path, a planted link or another user's
// file, is replaced, never written to.
func createPrivate(path string) (*os.File, error) {
	f, err := outfile.Replace(path, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create results file: %w", err)
	}
	return f, nil
}

// NewWriter returns a Writer that writes rows to w in format f (the CSV
// header first). Close flushes it; closing w is the caller's job.
func NewWriter(w io.Writer, f Format) *Writer {
	e := newEncoder(w, f)
	_ = e.writeHeader() // into the buffer: an error shows at the first flush
	return &Writer{enc: e}
}

// Write adds one row. It is buffered: Close flushes it. It fails for a row
// with a negative row number or an unknown status.
func (w *Writer) Write(r lead.Row) error {
	return w.enc.write(&r)
}

// Close flushes the buffered rows and, if Create opened the file, renames
// it to its path (outfile.File.Commit); when the flush fails, the file is
// removed and what was at its path stays.
func (w *Writer) Close() error {
	err := w.enc.flush()
	if w.file != nil {
		if err != nil {
			w.file.Abort()
		} else {
			err = w.file.Commit()
		}
		w.file = nil
	}
	if err != nil && w.path != "" {
		return fmt.Errorf("write results file %s: %w", w.path, err)
	}
	return err
}
