package reader

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// maxRecord bounds one record: a JSONL line, or a CSV record however many
// lines it spans. A longer record is a malformed row and reading goes on:
// after a JSONL line's end, or after the CSV record's first line (as for a
// quote left open, the lines after it are read as rows of their own).
const maxRecord = 1 << 20

// bufSize is the size of the read buffers between the stages.
const bufSize = 64 << 10

// errRecordTooLong is returned by the tee when csv.Reader pulls more than
// maxRecord bytes for one record.
var errRecordTooLong = errors.New("record too long")

// counter counts the bytes read from the file, for BytesRead. The count is
// atomic because a progress display reads it from another goroutine.
type counter struct {
	r io.Reader
	n atomic.Int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// tee keeps the bytes csv.Reader has pulled so that each record's original
// text can be cut out by csv.Reader.InputOffset. Bytes before the current
// record are dropped as reading goes on, so memory stays bounded; a record
// longer than maxRecord makes Read fail instead of buffering the file.
type tee struct {
	src      io.Reader
	buf      []byte // pulled bytes; buf[0] is at input offset base
	base     int64
	recStart int64 // offset where the current record starts; bytes before it may be dropped
	// blankLines counts the empty lines skipBlank moved recStart past since
	// the owner last reset it: csv.Reader skips them, they are no record.
	blankLines int
}

func (t *tee) Read(p []byte) (int, error) {
	if t.base+int64(len(t.buf))-t.recStart > maxRecord+bufSize && !t.skipBlank() {
		return 0, errRecordTooLong
	}
	n, err := t.src.Read(p)
	if n > 0 {
		t.compact()
		t.buf = append(t.buf, p[:n]...)
	}
	return n, err
}

// skipBlank moves recStart past the empty lines at its start, which
// csv.Reader skips, so that a long run of them is not taken for a record
// over the limit. It reports whether the record is within the limit now.
func (t *tee) skipBlank() bool {
	k := int(t.recStart - t.base)
	end := -1
	for i := k; i < len(t.buf) && (t.buf[i] == '\n' || t.buf[i] == '\r'); i++ {
		if t.buf[i] == '\n' {
			end = i + 1
			t.blankLines++
		}
	}
	if end < 0 {
		return false
	}
	t.recStart = t.base + int64(end)
	return t.base+int64(len(t.buf))-t.recStart <= maxRecord+bufSize
}

// compact drops the bytes before recStart once they are at least half of the
// buffer, so the copying stays proportional to the input.
func (t *tee) compact() {
	k := int(t.recStart - t.base)
	if k <= 0 || k < len(t.buf)/2 {
		return
	}
	n := copy(t.buf, t.buf[k:])
	t.buf = t.buf[:n]
	t.base = t.recStart
}

// span returns the pulled bytes between two input offsets. The slice is
// valid until the next Read.
func (t *tee) span(from, to int64) []byte {
	lo, hi := from-t.base, to-t.base
	if lo < 0 || hi > int64(len(t.buf)) || lo > hi {
		return nil
	}
	return t.buf[lo:hi]
}

// parseEncoding maps --encoding to a decoder; nil means UTF-8.
func parseEncoding(name string) (encoding.Encoding, error) {
	switch strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(strings.TrimSpace(name))) {
	case "", "utf8":
		return nil, nil
	case "latin1", "iso88591", "l1":
		return charmap.ISO8859_1, nil
	case "windows1252", "cp1252", "win1252":
		return charmap.Windows1252, nil
	}
	return nil, fmt.Errorf("unknown encoding %q: use utf-8 (the default), latin1 (iso-8859-1) or windows-1252 (cp1252)", name)
}

// peekPrefix returns up to n leading bytes without consuming them.
func peekPrefix(br *bufio.Reader, n int) []byte {
	b, _ := br.Peek(n)
	return b
}

// decode drops a UTF-8 byte-order mark and decodes the input to UTF-8. A
// UTF-16 byte-order mark (Excel's "Unicode text" export) switches to a UTF-16
// decoder when no encoding was asked for. It reports whether the text was
// decoded, i.e. is valid UTF-8 by construction.
func decode(br *bufio.Reader, enc encoding.Encoding) (io.Reader, bool) {
	p := peekPrefix(br, 3)
	switch {
	case bytes.HasPrefix(p, []byte{0xEF, 0xBB, 0xBF}):
		_, _ = br.Discard(3)
	case enc == nil && (bytes.HasPrefix(p, []byte{0xFF, 0xFE}) || bytes.HasPrefix(p, []byte{0xFE, 0xFF})):
		return unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder().Reader(br), true
	}
	if enc == nil {
		return br, false
	}
	return enc.NewDecoder().Reader(br), true
}

// sniffDelimiter picks the delimiter of the header line: the candidate that
// occurs most often outside quotes; ties go to the earlier one in ", ; tab |"
// and a header with none of them is one column, read with ",".
func sniffDelimiter(br *bufio.Reader) rune {
	line := peekLine(br)
	candidates := [...]byte{',', ';', '\t', '|'}
	var counts [len(candidates)]int
	inQuote := false
	for _, c := range line {
		if c == '"' {
			inQuote = !inQuote
			continue
		}
		if inQuote {
			continue
		}
		if c == '\n' {
			break
		}
		for i, d := range candidates {
			if c == d {
				counts[i]++
			}
		}
	}
	best := 0
	for i := range candidates {
		if counts[i] > counts[best] {
			best = i
		}
	}
	return rune(candidates[best])
}

// peekLine returns the first line (up to the buffer size) without consuming
// it, waiting for more input only until a newline has arrived: it asks for
// one byte more than is buffered each time, so a slow stream (a pipe fed a
// row at a time) is not held up waiting for a full buffer.
func peekLine(br *bufio.Reader) []byte {
	for {
		b, _ := br.Peek(br.Buffered()) // what has arrived: never blocks
		if bytes.IndexByte(b, '\n') >= 0 || len(b) >= br.Size() {
			return b
		}
		if _, err := br.Peek(len(b) + 1); err != nil {
			b, _ = br.Peek(br.Buffered())
			return b
		}
	}
}

// trimRaw cuts a record's original text out of the bytes csv.Reader consumed
// for it: the empty lines csv.Reader skipped before it and the line end after
// it. It returns the text and the number of line ends skipped before it.
func trimRaw(b []byte) ([]byte, int) {
	skipped := 0
	for {
		switch {
		case len(b) > 0 && b[0] == '\n':
			b = b[1:]
		case len(b) > 1 && b[0] == '\r' && b[1] == '\n':
			b = b[2:]
		default:
			return trimLineEnd(b), skipped
		}
		skipped++
	}
}

// trimLineEnd drops one trailing "\n" or "\r\n", or a final "\r".
func trimLineEnd(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// fieldScan is what a quote-aware pass over a CSV record's original text
// finds out.
type fieldScan struct {
	fields   int  // number of fields
	blank    bool // every field is empty or spaces: a row of delimiters, not a lead
	extraSet bool // a field beyond the first n (see scanFields) is not empty
}

// scanFields counts the fields of one record's original text the way
// csv.Reader splits it (no lazy quotes, no leading-space trimming), and
// checks whether the fields after the first n are empty, which is how
// trailing empty columns look.
func scanFields(raw []byte, comma rune, n int) fieldScan {
	if comma < 0x80 && bytes.IndexByte(raw, '"') < 0 {
		return scanUnquoted(raw, byte(comma), n)
	}
	return scanQuoted(raw, comma, n)
}

// scanQuoted is scanFields for any record, byte by byte.
func scanQuoted(raw []byte, comma rune, n int) fieldScan {
	s := fieldScan{fields: 1, blank: true}
	var delim []byte
	if comma < 0x80 {
		delim = []byte{byte(comma)}
	} else {
		delim = []byte(string(comma))
	}
	atStart, inQuote := true, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inQuote {
			if c == '"' {
				if i+1 < len(raw) && raw[i+1] == '"' {
					s.setNonBlank(n)
					i++
					continue
				}
				inQuote = false
				continue
			}
			if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				s.setNonBlank(n)
			}
			continue
		}
		if c == delim[0] && bytes.HasPrefix(raw[i:], delim) {
			s.fields++
			i += len(delim) - 1
			atStart = true
			continue
		}
		if c == '"' && atStart {
			inQuote = true
			atStart = false
			continue
		}
		atStart = false
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			s.setNonBlank(n)
		}
	}
	return s
}

// scanRecord is scanFields from the fields csv.Reader split a record into
// (without error) instead of its text: a field is empty when it holds only
// spaces, tabs and line ends, as scanFields sees it through its quotes.
// ReadBatch uses it, the one goroutine that reads, to spare it a second
// pass over the text; FuzzReadBatchSameAsNext holds the two to the same
// answers.
func scanRecord(fields []string, n int) fieldScan {
	s := fieldScan{fields: len(fields), blank: true}
	for _, f := range fields {
		if !blankField(f) {
			s.blank = false
			break
		}
	}
	if !s.blank {
		for _, f := range fields[min(n, len(fields)):] {
			if !blankField(f) {
				s.extraSet = true
				break
			}
		}
	}
	return s
}

// blankField reports whether f holds only spaces, tabs and line ends.
func blankField(f string) bool {
	for i := 0; i < len(f); i++ {
		if c := f[i]; c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// scanUnquoted is scanFields for the common record without quotes. The
// fields after the first n are empty exactly when the trailing run of
// delimiters and spaces holds at least fields-n delimiters.
func scanUnquoted(raw []byte, comma byte, n int) fieldScan {
	s := fieldScan{fields: bytes.Count(raw, []byte{comma}) + 1}
	s.blank = onlyBlank(raw, comma)
	if s.fields > n && !s.blank {
		trailing := 0
		for i := len(raw) - 1; i >= 0; i-- {
			c := raw[i]
			if c == comma {
				trailing++
			} else if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				break
			}
		}
		s.extraSet = s.fields-trailing > n
	}
	return s
}

// onlyBlank reports whether b holds only delimiters and spaces.
func onlyBlank(b []byte, comma byte) bool {
	for _, c := range b {
		if c != comma && c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

func (s *fieldScan) setNonBlank(n int) {
	s.blank = false
	if s.fields > n {
		s.extraSet = true
	}
}

// firstFieldEnd returns the offset just after the first field of a CSV
// record's text and its delimiter, or len(raw) when the record has one field.
func firstFieldEnd(raw []byte, comma rune) int {
	delim := string(comma)
	cell, more := nextCell(raw, delim)
	if !more {
		return len(raw)
	}
	return len(cell) + len(delim)
}

// crLines turns the line ends of a file that uses a lone "\r" (old Mac
// spreadsheet exports) into "\n", which is all csv.Reader knows. It is used
// only when the start of the file has a "\r" and no "\n".
type crLines struct{ r io.Reader }

func (c crLines) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i, b := range p[:n] {
		if b == '\r' {
			p[i] = '\n'
		}
	}
	return n, err
}

// fixCRLines returns in, or in wrapped in crLines when its start shows lone
// "\r" line ends.
func fixCRLines(in io.Reader) io.Reader {
	br := bufio.NewReaderSize(in, bufSize)
	// Lone "\r" line ends (old Mac exports) show as a "\r" and no "\n" in
	// the first 64 KiB. A "\n" settles it at once, so a normal stream is
	// not held up; only a file without one is read that far ahead.
	for {
		head, _ := br.Peek(br.Buffered()) // what has arrived: never blocks
		if bytes.IndexByte(head, '\n') >= 0 {
			return br
		}
		if len(head) >= br.Size() {
			break
		}
		if _, err := br.Peek(len(head) + 1); err != nil {
			break
		}
	}
	if head, _ := br.Peek(br.Buffered()); bytes.IndexByte(head, '\r') >= 0 {
		return crLines{br}
	}
	return br
}
