package reader

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/bulkload/bulkload/lead"
)

// benchHeader is a realistic partner header: synonyms, a trailing empty
// column and two columns the service does not know.
const benchHeader = "First Name,Last Name,DOB,Email,Phone,Mobile,Address,Address 2,City,State,Zip,Loan Amount,Lead ID,SSN,Annual Income,TCPA Consent,TrustedForm Cert URL,utm_source,Notes,"

// genLeadRows returns n realistic CSV lead rows after benchHeader, generated
// from a fixed seed.
func genLeadRows(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	first := []string{"Ann", "Bob", "Carlos", "Dana", "Émile", "Fatima", "George", "Hana"}
	last := []string{"Lee", "O'Neil", "Smith", "Garcia", "Nguyen", "Müller", "Johnson", "Brown"}
	streets := []string{"Main St", "Oak Ave", "Elm St, Apt 4", "Pine Rd", "Maple Dr"}
	cities := []string{"Austin", "Dallas", "Springfield", "Portland", "Miami"}
	states := []string{"TX", "CA", "NY", "FL", "OR"}
	var b bytes.Buffer
	b.WriteString(benchHeader + "\r\n")
	w := csv.NewWriter(&b)
	w.UseCRLF = true
	for i := range n {
		fn, ln := first[rng.IntN(len(first))], last[rng.IntN(len(last))]
		rec := []string{
			fn, ln,
			fmt.Sprintf("19%02d-%02d-%02d", 40+rng.IntN(60), 1+rng.IntN(12), 1+rng.IntN(28)),
			fmt.Sprintf("%s.%s%d@example.com", fn, ln, i),
			fmt.Sprintf("(%03d) %03d-%04d", 200+rng.IntN(800), rng.IntN(1000), rng.IntN(10000)),
			"",
			fmt.Sprintf("%d %s", 1+rng.IntN(9999), streets[rng.IntN(len(streets))]),
			"",
			cities[rng.IntN(len(cities))], states[rng.IntN(len(states))],
			fmt.Sprintf("%05d", rng.IntN(100000)),
			fmt.Sprintf("%d", 1000*(1+rng.IntN(50))),
			fmt.Sprintf("P-%08d", i),
			fmt.Sprintf("%09d", rng.IntN(1000000000)),
			fmt.Sprintf("%d", 20000+rng.IntN(150000)),
			"Yes",
			fmt.Sprintf("https://cert.trustedform.com/%016x", rng.Uint64()),
			"fb",
			"",
			"",
		}
		if i%10 == 0 {
			rec[5] = fmt.Sprintf("%010d", rng.IntN(1e10))
			rec[18] = "called twice,\nno answer"
		}
		_ = w.Write(rec)
	}
	w.Flush()
	return b.Bytes()
}

// genLeadJSONL returns the rows of genLeadRows as JSONL objects.
func genLeadJSONL(n int) []byte {
	cr := csv.NewReader(bytes.NewReader(genLeadRows(n)))
	cr.FieldsPerRecord = -1
	header, _ := cr.Read()
	var b bytes.Buffer
	for {
		rec, err := cr.Read()
		if err != nil {
			break
		}
		obj := make(map[string]string, len(rec))
		for i, v := range rec {
			if header[i] != "" {
				obj[header[i]] = v
			}
		}
		line, _ := json.Marshal(obj)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

const benchRows = 50_000

// benchNext calls Next b.N times, each op one row, starting over at the
// end of the data; ns/op and allocs/op are per row.
func benchNext(b *testing.B, data []byte, name string) {
	b.SetBytes(int64(len(data) / benchRows))
	b.ReportAllocs()
	r, err := NewReader(bytes.NewReader(data), name, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		rec, err := r.next()
		if errors.Is(err, io.EOF) {
			r, _ = NewReader(bytes.NewReader(data), name, Options{})
			rec, err = r.next()
		}
		if err != nil || rec.Err != nil {
			b.Fatalf("Next() = %v, %v", rec.Err, err)
		}
	}
}

// BenchmarkReaderCSV measures this package's CSV path per row.
func BenchmarkReaderCSV(b *testing.B) { benchNext(b, genLeadRows(benchRows), "leads.csv") }

// BenchmarkReaderJSONL measures this package's JSONL path per row.
func BenchmarkReaderJSONL(b *testing.B) { benchNext(b, genLeadJSONL(benchRows), "leads.jsonl") }

// BenchmarkEncodingCSV is the baseline: a bare encoding/csv loop over the
// same bytes, one Read per op.
func BenchmarkEncodingCSV(b *testing.B) {
	data := genLeadRows(benchRows)
	b.SetBytes(int64(len(data) / benchRows))
	b.ReportAllocs()
	for _, reuse := range []bool{false, true} {
		b.Run(fmt.Sprintf("reuse=%v", reuse), func(b *testing.B) {
			b.ReportAllocs()
			newReader := func() *csv.Reader {
				cr := csv.NewReader(bytes.NewReader(data))
				cr.FieldsPerRecord = -1
				cr.ReuseRecord = reuse
				_, _ = cr.Read()
				return cr
			}
			cr := newReader()
			b.ResetTimer()
			for range b.N {
				_, err := cr.Read()
				if errors.Is(err, io.EOF) {
					cr = newReader()
					_, err = cr.Read()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStream1M reads a million generated rows from a stream that is
// never held in memory whole, for a peak-memory check of the whole path
// (run it alone with -benchtime=1x and look at the process's peak RSS).
func BenchmarkStream1M(b *testing.B) {
	chunk := genLeadRows(10_000)
	_, body, _ := bytes.Cut(chunk, []byte("\r\n"))
	for range b.N {
		rs := make([]io.Reader, 0, 101)
		rs = append(rs, bytes.NewReader([]byte(benchHeader+"\r\n")))
		for range 100 {
			rs = append(rs, bytes.NewReader(body))
		}
		r, err := NewReader(io.MultiReader(rs...), "leads.csv", Options{})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			rec, err := r.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil || rec.Err != nil {
				b.Fatalf("Next() = %v, %v", rec.Err, err)
			}
			n++
		}
		if n != 1_000_000 {
			b.Fatalf("read %d rows, want 1000000", n)
		}
	}
}

// BenchmarkDirectCSV is what Next's CSV path would cost without gocsv,
// assigning cells to fields by column index from csv.Reader's record (tee
// and field scan kept), for comparison with BenchmarkReaderCSV; the batch
// path (BenchmarkReadBatch) does much this.
func BenchmarkDirectCSV(b *testing.B) {
	data := genLeadRows(benchRows)
	b.SetBytes(int64(len(data) / benchRows))
	b.ReportAllocs()
	res, err := newResolver(nil)
	if err != nil {
		b.Fatal(err)
	}
	type direct struct {
		cr   *csv.Reader
		t    *tee
		cols []colRes
	}
	open := func() direct {
		t := &tee{src: bytes.NewReader(data)}
		cr := csv.NewReader(t)
		cr.FieldsPerRecord = -1
		cr.ReuseRecord = true
		header, _ := cr.Read()
		d := direct{cr: cr, t: t}
		for _, h := range header {
			d.cols = append(d.cols, res.resolve(h))
		}
		return d
	}
	d := open()
	b.ResetTimer()
	for range b.N {
		before := d.cr.InputOffset()
		d.t.recStart = before
		rec, err := d.cr.Read()
		if errors.Is(err, io.EOF) {
			d = open()
			before = 0
			rec, err = d.cr.Read()
		}
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := trimRaw(d.t.span(before, d.cr.InputOffset()))
		_ = scanFields(raw, ',', len(d.cols)-1)
		var v lead.Values
		for i, cell := range rec {
			if i < len(d.cols) && d.cols[i].kind == colField {
				v[d.cols[i].field] = cell
			}
		}
		if v == (lead.Values{}) {
			b.Fatal("no values")
		}
	}
}

// BenchmarkReadBatch is the reading stage of validate and upload alone:
// ReadBatch, in batches of 128, without decoding (the workers' part). It
// runs in one goroutine, so its ns/row bounds the whole pipeline's wall
// time per row on any number of cores; compare it with
// BenchmarkEncodingCSV/reuse=true, the floor, in the same run:
//
//	go test ./reader -run - -bench 'ReadBatch|EncodingCSV/reuse=true' -count 5
func BenchmarkReadBatch(b *testing.B) {
	data := genLeadRows(benchRows)
	b.SetBytes(int64(len(data) / benchRows * 128))
	b.ReportAllocs()
	var batch Batch
	r, err := NewReader(bytes.NewReader(data), "leads.csv", Options{})
	if err != nil {
		b.Fatal(err)
	}
	rows := 0
	for b.Loop() {
		err := r.ReadBatch(&batch, 128)
		rows += batch.Len()
		if errors.Is(err, io.EOF) {
			if r, err = NewReader(bytes.NewReader(data), "leads.csv", Options{}); err != nil {
				b.Fatal(err)
			}
		} else if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
}
