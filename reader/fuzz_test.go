package reader

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bulkload/bulkload/lead"
)

// addGoldenSeeds adds the golden inputs with the given extension as seeds,
// on top of the corpus under testdata/fuzz.
func addGoldenSeeds(f *testing.F, ext string, add func([]byte)) {
	paths, err := filepath.Glob(filepath.Join("testdata", "golden", "*"+ext))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		add(b)
	}
}

// skipsReference says whether an input takes a path the reference counts in
// the fuzz tests do not model: gzip or UTF-16.
func skipsReference(data []byte) bool {
	return bytes.HasPrefix(data, []byte{0x1f, 0x8b}) || bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff})
}

// checkRecords asserts what holds for every input: rows are 1..n without
// gaps, lines never go back, and every record has values or an error.
func checkRecords(t *testing.T, recs []Record) {
	t.Helper()
	line := 0
	for i, rec := range recs {
		if rec.Row != i+1 {
			t.Fatalf("record %d has Row %d, want %d", i, rec.Row, i+1)
		}
		if rec.Line <= line {
			t.Fatalf("record %d has Line %d after line %d", i, rec.Line, line)
		}
		line = rec.Line
		if (rec.Err == nil) == (rec.Values == lead.Values{}) {
			t.Fatalf("record %d: Err = %v with Values %q: want exactly one of them", i, rec.Err, rec.Values)
		}
	}
}

func FuzzCSV(f *testing.F) {
	f.Add([]byte("fname,lname\nAnn,Lee\n"), uint8(0))
	f.Add([]byte("\ufefffname;zip\r\n\"a;b\"\"c\";1\r\n\r\nx\"y;2\r\n"), uint8(2))
	f.Add([]byte("a,b,,\n1,2,,,\n\"\n"), uint8(1))
	addGoldenSeeds(f, ".csv", func(b []byte) { f.Add(b, uint8(0)) })
	addGoldenSeeds(f, ".tsv", func(b []byte) { f.Add(b, uint8(3)) })
	f.Fuzz(func(t *testing.T, data []byte, delim uint8) {
		delims := [...]rune{0, ',', ';', '\t', '|'} // 0 sniffs
		opts := Options{Delimiter: delims[int(delim)%len(delims)]}
		r, err := NewReader(bytes.NewReader(data), "fuzz.csv", opts)
		if err != nil {
			return // no header line: nothing to account for
		}
		defer r.Close()
		var recs []Record
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatalf("more records than input bytes")
			}
			rec, err := r.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("Next() error = %v on a small input", err)
			}
			if rec.Err == nil {
				checkRawParses(t, rec.Raw, r.comma)
			}
			rec.Raw = nil
			recs = append(recs, rec)
		}
		checkRecords(t, recs)
		if n := len(r.Unknown()); n > maxUnknown+1 {
			t.Fatalf("Unknown() has %d names, want at most %d", n, maxUnknown+1)
		}
		if skipsReference(data) {
			return
		}
		if want := referenceCSVRows(t, data, r.comma); len(recs) != want {
			t.Fatalf("read %d rows, reference encoding/csv loop counts %d", len(recs), want)
		}
	})
}

// checkRawParses asserts that a good record's Raw is exactly one CSV record
// and that the quote-aware field count agrees with csv.Reader's.
func checkRawParses(t *testing.T, raw []byte, comma rune) {
	t.Helper()
	cr := csv.NewReader(bytes.NewReader(raw))
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	fields, err := cr.Read()
	if err != nil {
		t.Fatalf("Raw %q does not parse: %v", raw, err)
	}
	if _, err := cr.Read(); !errors.Is(err, io.EOF) {
		t.Fatalf("Raw %q holds more than one record", raw)
	}
	if got := scanFields(raw, comma, 0).fields; got != len(fields) {
		t.Fatalf("scanFields(%q) = %d fields, csv.Reader finds %d", raw, got, len(fields))
	}
	for n := 0; n <= len(fields)+1; n++ {
		got := scanFields(raw, comma, n)
		want := fieldScan{fields: len(fields), blank: allBlank(fields), extraSet: n < len(fields) && !allBlank(fields[n:])}
		if got != want {
			t.Fatalf("scanFields(%q, %d) = %+v, csv.Reader's fields give %+v", raw, n, got, want)
		}
	}
}

// referenceCSVRows counts the data rows a plain encoding/csv loop sees:
// every record after the header, parse errors included, except records
// whose cells are all blank. Like the reader, it counts a parse error that
// ends on a later line than the record starts (a quote left open) as one
// row and reads on from the line after the record's first line, with a new
// csv.Reader over the rest of the data.
func referenceCSVRows(t *testing.T, data []byte, comma rune) int {
	t.Helper()
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if bytes.IndexByte(data, '\n') < 0 && len(data) <= bufSize { // lone CR line ends
		data = bytes.ReplaceAll(data, []byte{'\r'}, []byte{'\n'})
	}
	newReader := func(b []byte) *csv.Reader {
		cr := csv.NewReader(bytes.NewReader(b))
		cr.Comma = comma
		cr.FieldsPerRecord = -1
		return cr
	}
	cr := newReader(data)
	if _, err := cr.Read(); err != nil {
		t.Fatalf("reference cannot read the header the reader read: %v", err)
	}
	n := 0
	rest := data // what cr reads
	for i := 0; i <= 2*len(data); i++ {
		fields, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return n
		}
		var pe *csv.ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("reference: %v", err)
		}
		if err != nil || !allBlank(fields) {
			n++
		}
		if pe != nil && pe.Line > pe.StartLine {
			off := 0 // offset in rest just after line pe.StartLine
			for range pe.StartLine {
				off += bytes.IndexByte(rest[off:], '\n') + 1
			}
			rest = rest[off:]
			cr = newReader(rest)
		}
	}
	t.Fatalf("reference loop does not end")
	return 0
}

func allBlank(fields []string) bool {
	for _, f := range fields {
		if strings.Trim(f, " \t\r\n") != "" {
			return false
		}
	}
	return true
}

func FuzzJSONL(f *testing.F) {
	f.Add([]byte("{\"fname\":\"Ann\",\"zip\":1}\n"))
	f.Add([]byte("\ufeff{\"a\":[1]}\r\n\r\nnot json\n{\"fname\":null,\"b\":true} x\n{"))
	addGoldenSeeds(f, ".jsonl", func(b []byte) { f.Add(b) })
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), "fuzz.jsonl", Options{})
		if err != nil {
			// Only an input that starts like gzip and is not a readable
			// gzip stream is refused whole: that is a run-level error by
			// design (found by fuzzing: the two magic bytes alone).
			if !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
				t.Fatalf("NewReader() error = %v", err)
			}
			return
		}
		defer r.Close()
		var recs []Record
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatalf("more records than input bytes")
			}
			rec, err := r.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil && bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
				return // a compressed stream that breaks off: run-level, by design
			}
			if err != nil {
				t.Fatalf("Next() error = %v on a small input", err)
			}
			if !skipsReference(data) && utf8.Valid(rec.Raw) {
				want, ok := referenceJSONLValues(t, rec.Raw)
				if ok != (rec.Err == nil) || (ok && want != rec.Values) {
					t.Fatalf("line %q: read %q, %v; reference json.Decoder reads %q, ok %v", rec.Raw, rec.Values, rec.Err, want, ok)
				}
			}
			rec.Raw = nil
			recs = append(recs, rec)
		}
		checkRecords(t, recs)
		if n := len(r.Unknown()); n > maxUnknown+1 {
			t.Fatalf("Unknown() has %d names, want at most %d", n, maxUnknown+1)
		}
		if skipsReference(data) {
			return
		}
		want := 0
		for _, line := range bytes.Split(bytes.TrimPrefix(data, []byte("\ufeff")), []byte("\n")) {
			if len(bytes.TrimSpace(line)) > 0 {
				want++
			}
		}
		if len(recs) != want {
			t.Fatalf("read %d rows, input has %d non-blank lines", len(recs), want)
		}
	})
}

// referenceJSONLValues reads one line with json.Decoder.Token, the plain
// encoding/json way: the first key for a field wins, values as the reader
// documents them, the values of other keys skipped whatever they hold. ok is
// false when the line is not a JSON object, a known key holds an object or
// an array, or no known key has a value.
func referenceJSONLValues(t *testing.T, line []byte) (v lead.Values, ok bool) {
	t.Helper()
	res, err := newResolver(nil)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return v, false
	}
	var set [lead.NumFields]bool
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return v, false
		}
		r := res.resolve(kt.(string))
		if r.kind != colField { // an unknown or ignored key may hold anything
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return v, false
			}
			continue
		}
		vt, err := dec.Token()
		if err != nil {
			return v, false
		}
		var text string
		switch val := vt.(type) {
		case string:
			text = val
		case json.Number:
			text = string(val)
		case bool:
			text = fmt.Sprint(val)
		case nil:
		default:
			return v, false
		}
		if !set[r.field] {
			set[r.field] = true
			v[r.field] = text
		}
	}
	if _, err := dec.Token(); err != nil {
		return v, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return v, false
	}
	return v, v != lead.Values{}
}
