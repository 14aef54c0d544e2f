package reader

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// readAllNext reads every record with Next, Raw copied.
func readAllNext(t *testing.T, path string, opts Options) []Record {
	t.Helper()
	r, err := openInput(path, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []Record
	for {
		rec, err := r.next()
		if errors.Is(err, io.EOF) {
			return recs
		}
		if err != nil {
			t.Fatal(err)
		}
		rec.Raw = append([]byte(nil), rec.Raw...)
		recs = append(recs, rec)
	}
}

// readAllBatches reads every record with ReadBatch and decodes the batches
// in workers goroutines, out of order.
func readAllBatches(t *testing.T, path string, opts Options, size, workers int) []Record {
	t.Helper()
	r, err := openInput(path, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var batches []*Batch
	for {
		b := new(Batch)
		err := r.ReadBatch(b, size)
		batches = append(batches, b)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := len(batches) - 1 - w; i >= 0; i -= workers {
				batches[i].Decode()
			}
		})
	}
	wg.Wait()
	var recs []Record
	for _, b := range batches {
		recs = append(recs, b.Records...)
	}
	return recs
}

func sameRecords(a, b Record) bool {
	return a.Row == b.Row && a.Line == b.Line && a.Values == b.Values && string(a.Raw) == string(b.Raw) &&
		fmt.Sprint(a.Err) == fmt.Sprint(b.Err)
}

// TestReadBatchDecodeSameAsNext reads the golden inputs, the messy samples
// and a file with a quote left open, rows with too few or too many fields and
// rows with no known value, with Next and with ReadBatch plus Decode in
// parallel, at several batch sizes, and wants the same records in the same
// order.
func TestReadBatchDecodeSameAsNext(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	if err != nil {
		t.Fatal(err)
	}
	inputs = append(inputs, filepath.Join("..", "samples", "messy.csv"), filepath.Join("..", "samples", "messy-latin1.csv"),
		filepath.Join("..", "samples", "partner-acme.csv"))
	odd := filepath.Join(t.TempDir(), "odd.csv")
	text := "leadId,firstName,notes,\n" +
		"L-1,Ann,x,\n" +
		",,,\n" + // blank: not a row
		"L-2,\"Bob\n" + // a quote not closed on its line
		"L-3,Cy,z,\n" +
		"L-4,Di\n" + // too few fields
		"L-5,Ed,y,,extra\n" + // too many, not empty
		",,kept,\n" + // no known value
		"L-6,\"Fay \"\"F\"\"\",w,\n" +
		"L-7,G\xffil,v,\n" // not UTF-8
	if err := os.WriteFile(odd, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	inputs = append(inputs, odd)
	opts := goldenOptions()
	opts["messy-latin1.csv"] = Options{Encoding: "latin1"}
	checked := 0
	for _, path := range inputs {
		if strings.HasSuffix(path, ".golden") {
			continue
		}
		o := opts[filepath.Base(path)]
		want := readAllNext(t, path, o)
		for _, size := range []int{1, 3, 256} {
			got := readAllBatches(t, path, o, size, 3)
			if len(got) != len(want) {
				t.Fatalf("%s, batches of %d: %d records, want %d", path, size, len(got), len(want))
			}
			for i := range want {
				if !sameRecords(got[i], want[i]) {
					t.Fatalf("%s, batches of %d: record %d = %+v\nwant %+v", path, size, i, got[i], want[i])
				}
			}
		}
		checked++
	}
	if checked < 8 {
		t.Fatalf("checked %d inputs, want the golden ones, the samples and the odd file", checked)
	}
}

// TestCSVRowFieldCount keeps csvFields, the record width ReadBatch lays
// out for gocsv, equal to csvRow's fields.
func TestCSVRowFieldCount(t *testing.T) {
	if n := reflect.TypeFor[csvRow]().NumField(); n != csvFields {
		t.Errorf("csvRow has %d fields, csvFields is %d", n, csvFields)
	}
}

// FuzzReadBatchSameAsNext holds the batch path (ReadBatch, which counts
// fields from csv.Reader's split and lays them out without gocsv, and
// Decode) to Next, which scans each record's text and decodes it
// with gocsv's Unmarshaller: the same records, values, errors and lines for
// any input, delimiter and batch size.
func FuzzReadBatchSameAsNext(f *testing.F) {
	f.Add([]byte("leadId,firstName,notes,\nL-1,Ann,x,\n,,,\nL-2,\"Bob\nL-3,Cy,z,\n"), uint8(0), uint8(1))
	f.Add([]byte("fname;zip\r\n\"a;b\"\"c\";1\r\n\r\n \t;\" \"\r\nx;2;;\" \"\r\n"), uint8(2), uint8(3))
	f.Add([]byte("a,b,,\n1,2,,,\n\"\n"), uint8(1), uint8(2))
	addGoldenSeeds(f, ".csv", func(b []byte) { f.Add(b, uint8(0), uint8(7)) })
	f.Fuzz(func(t *testing.T, data []byte, delim, size uint8) {
		delims := [...]rune{0, ',', ';', '\t', '|'} // 0 sniffs
		opts := Options{Delimiter: delims[int(delim)%len(delims)]}
		open := func() *Reader {
			r, err := NewReader(bytes.NewReader(data), "fuzz.csv", opts)
			if err != nil {
				return nil
			}
			return r
		}
		r := open()
		if r == nil {
			return
		}
		defer r.Close()
		var want []Record
		for {
			rec, err := r.next()
			if err != nil {
				break // io.EOF, or the read error the batch path must end on too
			}
			rec.Raw = append([]byte(nil), rec.Raw...)
			want = append(want, rec)
		}
		rb := open()
		defer rb.Close()
		var got []Record
		for {
			b := new(Batch)
			err := rb.ReadBatch(b, 1+int(size)%9)
			b.Decode()
			got = append(got, b.Records...)
			if err != nil {
				break
			}
		}
		if len(got) != len(want) {
			t.Fatalf("ReadBatch read %d records, Next %d", len(got), len(want))
		}
		for i := range want {
			if !sameRecords(got[i], want[i]) {
				t.Fatalf("record %d: ReadBatch %+v\nNext %+v", i, got[i], want[i])
			}
		}
	})
}
