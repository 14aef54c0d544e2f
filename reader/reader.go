// Package reader is the parser, the first stage of the bulkload pipeline:
// it turns the bytes of one partner lead export (CSV or JSONL, optionally
// gzipped, from any stream) into records of raw cell text by LeadInput
// field, and writes failed rows back out in the export's own format (the
// rejects file, Rejects). It knows formats, not runs: a run's input (which
// file or standard input), reading it ahead, hashing it and running the
// reader beside the mapper's workers are package source's job, which drives
// a Reader through ReadBatch and Batch.Decode.
//
// It streams in constant memory whatever the file's size, copes with what
// real exports contain (byte-order marks, CRLF, quoted newlines, ; | or tab
// delimiters, Latin-1 and Windows-1252 text, blank lines, trailing empty
// columns, loosely named headers) and turns a malformed row into a Record
// with an Err instead of stopping: only an unreadable input stops the run.
// Validating and converting the values is the mapper's job.
//
// CSV is read with encoding/csv and gocsv, the project's chosen decoder,
// layered around rather than used whole: gocsv reads the header and binds
// the (renamed) columns to csvRow by its tags, refusing a header it binds
// otherwise, and decodes each record of the reference path (next). Its
// per-record decoding is reflection and allocates, so the batch path that
// validate and upload use (ReadBatch, then Decode in the workers) copies the fields by that
// binding itself, which saves much of validate's CPU and garbage (figures:
// bench/README.md). FuzzReadBatchSameAsNext and
// TestReadBatchDecodeSameAsNext hold the batch path to next's gocsv answer.
package reader

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync/atomic"

	"golang.org/x/text/encoding"

	"github.com/bulkload/bulkload/lead"
)

// Format is the input's syntax.
type Format int

// The formats. FormatAuto picks the format from the file name.
const (
	FormatAuto Format = iota
	FormatCSV
	FormatJSONL
)

// String returns the name --format accepts.
func (f Format) String() string {
	switch f {
	case FormatAuto:
		return "auto"
	case FormatCSV:
		return "csv"
	case FormatJSONL:
		return "jsonl"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ParseFormat reads the value of --format: "csv" (also "tsv"), "jsonl" (also
// "ndjson"), or "" / "auto" for FormatAuto.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return FormatAuto, nil
	case "csv", "tsv":
		return FormatCSV, nil
	case "jsonl", "ndjson":
		return FormatJSONL, nil
	}
	return FormatAuto, fmt.Errorf("unknown format %q: use csv or jsonl", s)
}

// Options are the reader's settings, resolved from flags and the partner's
// mapping file by the caller. The zero value reads a UTF-8 file whose format
// comes from its name and whose delimiter is sniffed.
type Options struct {
	// Format is FormatAuto to pick it from the file name (.csv, .tsv, .jsonl,
	// .ndjson, each optionally .gz). Standard input needs an explicit format.
	Format Format
	// Delimiter separates CSV fields; 0 sniffs it from the header line
	// (',', ';', '|' or tab).
	Delimiter rune
	// Encoding is "" or "utf-8" (the default), "latin1"/"iso-8859-1" or
	// "windows-1252"/"cp1252". Spreadsheet exports called "Latin-1" are
	// usually Windows-1252 (curly quotes at 0x91-0x94): prefer it.
	Encoding string
	// Columns renames partner headers to LeadInput field names (partner
	// header -> lead.Field.String()), from the partner's mapping file. Keys
	// match loosely like any header and win over the built-in names and
	// synonyms; the target "-" drops the column without reporting it.
	Columns map[string]string
	// EncodingHint names the setting that reads a file in another text
	// encoding, as the caller's interface words it (the command line's
	// "--encoding windows-1252"), for the error of a row that is not UTF-8;
	// "" names none.
	EncodingHint string
}

// source is one format's record reader.
type source interface {
	next() (Record, error)
	// nextRaw is next without decoding what Batch.Decode can decode in
	// another goroutine: it returns those fields, valid until the next
	// read, and Values are left empty. A nil slice means the record is
	// complete.
	nextRaw() (Record, []string, error)
}

// Reader reads the records of one input. It is not safe for concurrent use,
// except BytesRead and Size, which a progress display may call from another
// goroutine. The caller closes it.
type Reader struct {
	name    string
	format  Format
	enc     encoding.Encoding // --encoding, for the rejects file; nil is UTF-8
	count   *counter
	size    int64
	closers []io.Closer
	src     source
	unknown unknownSet
	// headers holds the partner's name of each field's column (CSV) or
	// first key (JSONL), for Header. It is replaced, never changed, when a
	// JSONL key names a field for the first time, because Header may be
	// called from another goroutine than the reading one.
	headers atomic.Pointer[[lead.NumFields]string]

	// CSV only, for the rejects file.
	comma     rune
	headerRaw string // the header line as it was, decoded, without its line end

	compressed bool // the input is gzip

	notUTF8 string // the rule of a row that is not UTF-8 (Options.EncodingHint)
}

// Record is one data row of the input. A malformed row is a Record with Err
// set, never a read error, so the run goes on with the next row.
type Record struct {
	// Row is the 1-based data row number, consecutive over every record
	// read, malformed ones included; the header and blank lines are
	// not rows.
	Row int
	// Line is the input line where the record starts (1-based; a CSV record
	// may span several lines).
	Line int
	// Values holds the raw text of each known column; "" when absent. It is
	// empty when Err is set.
	Values lead.Values
	// Raw is the row's original text, decoded to UTF-8, without its line
	// end, for the rejects file. ReadBatch keeps it in the Batch until the
	// Batch's next read: copy it (bytes.Clone) to keep it longer.
	Raw []byte
	// Err is set when the row is malformed: what is wrong (its Field is
	// lead.NoField), with the row, line and, for a syntax error, the column.
	// It never quotes cell contents.
	Err *lead.RowError
}

// NewReader reads an input from any stream; name is the file name ("-" for
// stdin), used to pick the format and in error messages. It reads the CSV
// header before returning. Closing the Reader does not close in.
func NewReader(in io.Reader, name string, opts Options) (*Reader, error) {
	format := opts.Format
	if format == FormatAuto {
		var err error
		if format, err = formatFromName(name); err != nil {
			return nil, err
		}
	}
	enc, err := parseEncoding(opts.Encoding)
	if err != nil {
		return nil, err
	}
	if d := opts.Delimiter; d != 0 && (d == '"' || d == '\r' || d == '\n' || d == 0xFFFD || d < 0) {
		return nil, fmt.Errorf("invalid delimiter %q: use , ; | or tab", d)
	}
	res, err := newResolver(opts.Columns)
	if err != nil {
		return nil, err
	}
	r := &Reader{name: displayName(name), format: format, count: &counter{r: in}, size: -1, notUTF8: ruleNotUTF8}
	if opts.EncodingHint != "" {
		r.notUTF8 = ruleNotUTF8Spreadsheet + ", pass " + opts.EncodingHint
	}
	if st, ok := in.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() {
			r.size = fi.Size()
		}
	}

	br := bufio.NewReaderSize(r.count, bufSize)
	if strings.HasSuffix(strings.ToLower(name), ".gz") || isGzip(peekPrefix(br, 2)) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("read %s: not a readable gzip file: %w", r.name, err)
		}
		r.closers = append(r.closers, zr)
		r.compressed = true
		br = bufio.NewReaderSize(zr, bufSize)
	}
	decoded, isDecoded := decode(br, enc)
	r.enc = enc

	switch format {
	case FormatCSV:
		r.src, err = newCSVSource(r, decoded, opts.Delimiter, res, !isDecoded)
	case FormatJSONL:
		r.src = newJSONLSource(r, decoded, res, !isDecoded)
	default:
		err = fmt.Errorf("unknown format %v: use csv or jsonl", format)
	}
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	return r, nil
}

func isGzip(p []byte) bool { return len(p) >= 2 && p[0] == 0x1f && p[1] == 0x8b }

func displayName(name string) string {
	if name == "-" {
		return "standard input"
	}
	return name
}

// formatFromName picks the format from the file extension.
func formatFromName(name string) (Format, error) {
	if name == "-" {
		return FormatAuto, &FormatError{Name: name}
	}
	base := strings.TrimSuffix(strings.ToLower(name), ".gz")
	switch {
	case strings.HasSuffix(base, ".csv"), strings.HasSuffix(base, ".tsv"):
		return FormatCSV, nil
	case strings.HasSuffix(base, ".jsonl"), strings.HasSuffix(base, ".ndjson"):
		return FormatJSONL, nil
	}
	return FormatAuto, &FormatError{Name: name}
}

// FormatError says that the input's format was not given and cannot be told
// from its name: standard input ("-") has none, a file's name ends in no
// known extension. The caller says how to give the format.
type FormatError struct {
	Name string // the input's name, "-" for standard input
}

func (e *FormatError) Error() string {
	if e.Name == "-" {
		return "reading standard input: its format cannot be told from a name"
	}
	return fmt.Sprintf("cannot tell the format of %s from its name (.csv, .tsv, .jsonl or .ndjson, optionally .gz)", e.Name)
}

// next returns the next record, or io.EOF after the last, decoding a CSV
// record through gocsv's Unmarshaller. It is the reference the batch path
// (ReadBatch, then Decode), which production reads with, is held to by
// TestReadBatchDecodeSameAsNext and FuzzReadBatchSameAsNext; nothing else
// calls it. Its errors are ReadBatch's.
func (r *Reader) next() (Record, error) {
	return r.src.next()
}

// Unknown returns the column names that match no LeadInput field, each once,
// in first-seen order (CSV: from the header; JSONL: keys as they appear so
// far). A column whose field an earlier column already took is listed as a
// duplicate. The rejects "error" column is known and not listed. A name
// that looks like data (4 or more digits, an '@', a date) is listed as
// withheld, never as its text, so the list is safe to log; a CSV header
// that names no known column at all is refused by NewReader as a likely
// missing header line.
func (r *Reader) Unknown() []string { return r.unknown.list() }

// Header returns the partner's name for field f: its CSV column header or
// the first JSONL key that named it, so that a message can name the column
// as the partner's file does; "" when the input has not named f yet. Safe
// to call from another goroutine than the reading one.
func (r *Reader) Header(f lead.Field) string {
	h := r.headers.Load()
	if h == nil || f < 0 || f >= lead.NumFields {
		return ""
	}
	return h[f]
}

// setHeader records name as field f's header unless f has one. It is
// called by the goroutine that reads.
func (r *Reader) setHeader(f lead.Field, name string) {
	var h [lead.NumFields]string
	if old := r.headers.Load(); old != nil {
		if old[f] != "" {
			return
		}
		h = *old
	}
	h[f] = name
	r.headers.Store(&h)
}

// Provided returns the fields some column provides (after --mapping): for
// CSV, the header's; for JSONL, the keys seen so far (all of them after the
// last read). Safe to call from another goroutine than the reading one.
func (r *Reader) Provided() []lead.Field {
	h := r.headers.Load()
	if h == nil {
		return nil
	}
	var out []lead.Field
	for f, name := range h {
		if name != "" {
			out = append(out, lead.Field(f))
		}
	}
	return out
}

// Format returns the input's format, as given or as picked from the name.
func (r *Reader) Format() Format { return r.format }

// BytesRead returns how many bytes have been read from the input so far
// (compressed bytes for gzip), for a progress display. Safe to call from
// another goroutine.
func (r *Reader) BytesRead() int64 { return r.count.n.Load() }

// Size returns the input's size in bytes when it is a regular file, else -1.
// Safe to call from another goroutine.
func (r *Reader) Size() int64 { return r.size }

// Compressed reports whether the input is gzip: its bytes say nothing of
// its lines, and a gzip stream cut short does not read through.
func (r *Reader) Compressed() bool { return r.compressed }

// Close releases the gzip reader and closes the file Open opened. It never
// closes standard input or a stream given to NewReader.
func (r *Reader) Close() error {
	var errs []error
	for i := len(r.closers) - 1; i >= 0; i-- {
		if err := r.closers[i].Close(); err != nil {
			errs = append(errs, err)
		}
	}
	r.closers = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close %s: %w", r.name, err)
	}
	return nil
}
