package reader

import (
	"fmt"

	"github.com/gocarina/gocsv"
)

// Batch is a run of consecutive records read by ReadBatch. Their raw text is
// copied into one arena, so they stay valid after the Reader moves on, and a
// CSV record's values are not decoded yet: a Decoder does that, in any
// goroutine, which is how decoding spreads over the cores while the input is
// read once, in order. A Batch is reused from read to read; it is not safe
// for concurrent use.
type Batch struct {
	// Records are the batch's records in input order. Until Decode, a
	// well-formed CSV record has no Values (and no "no known column has a
	// value" error); after it, each is what Reader.Next would have returned.
	Records []Record

	arena   []byte
	spans   []int    // Records[i].Raw is arena[spans[i]:spans[i+1]]
	fields  []string // the undecoded fields, record after record
	fieldAt []int    // per record: its first field in fields, -1 if decoded
	nfields []int    // per record: its number of fields
	decoded bool
}

// Len returns the number of records.
func (b *Batch) Len() int { return len(b.Records) }

// ReadBatch reads up to max records into b, replacing what it held, without
// decoding CSV values (see Decoder). It returns nil when b is full, and
// otherwise the error that ended the input, io.EOF or what Next would have
// returned, after the records read before it. The Reader is not safe for
// concurrent use; b must not be in use elsewhere.
func (r *Reader) ReadBatch(b *Batch, max int) error {
	b.Records, b.arena, b.spans = b.Records[:0], b.arena[:0], b.spans[:0]
	b.fields, b.fieldAt, b.nfields, b.decoded = b.fields[:0], b.fieldAt[:0], b.nfields[:0], false
	var err error
	for len(b.Records) < max {
		var (
			rec    Record
			fields []string
		)
		rec, fields, err = r.src.nextRaw()
		if err != nil {
			break
		}
		b.spans = append(b.spans, len(b.arena))
		b.arena = append(b.arena, rec.Raw...)
		rec.Raw = nil
		at := -1
		if fields != nil {
			at = len(b.fields)
			b.fields = append(b.fields, fields...) // fields is reused by the next read
		}
		b.fieldAt = append(b.fieldAt, at)
		b.nfields = append(b.nfields, len(fields))
		b.Records = append(b.Records, rec)
	}
	b.spans = append(b.spans, len(b.arena))
	for i := range b.Records {
		b.Records[i].Raw = b.arena[b.spans[i]:b.spans[i+1]:b.spans[i+1]]
	}
	return err
}

// Decoder fills the values of the records ReadBatch left undecoded, with a
// gocsv decoder of its own over each batch: gocsv's reflection, the
// costliest step of reading, then runs in as many goroutines as there are
// Decoders. (gocsv's streaming Unmarshaller, which Next uses, reads from a
// csv.Reader of its own and so cannot take records already split.) A
// Decoder is not safe for concurrent use: one per goroutine.
type Decoder struct {
	header []string // the CSV header as renamed to csvRow's tags
	rows   [][]string
	out    []csvRow
}

// NewDecoder returns a Decoder for the batches of r. It may be called from
// any goroutine once NewReader has returned.
func (r *Reader) NewDecoder() *Decoder {
	d := &Decoder{}
	if s, ok := r.src.(*csvSource); ok {
		d.header = s.renamed
	}
	return d
}

// Decode fills the Values of b's undecoded records as Next would have, and
// flags those with no value in any known column. A second call does nothing.
func (d *Decoder) Decode(b *Batch) error {
	if b.decoded {
		return nil
	}
	b.decoded = true
	d.rows = append(d.rows[:0], d.header)
	for i, at := range b.fieldAt {
		if at >= 0 {
			d.rows = append(d.rows, b.fields[at:at+b.nfields[i]:at+b.nfields[i]])
		}
	}
	if len(d.rows) == 1 {
		return nil
	}
	n := len(d.rows) - 1
	if cap(d.out) < n {
		d.out = make([]csvRow, n)
	}
	d.out = d.out[:n]
	if err := gocsv.UnmarshalDecoder(batchRows(d.rows), &d.out); err != nil {
		return fmt.Errorf("decode rows %d-%d: %w", b.Records[0].Row, b.Records[len(b.Records)-1].Row, err)
	}
	k := 0
	for i, at := range b.fieldAt {
		if at < 0 {
			continue
		}
		rec := &b.Records[i]
		rec.Values = d.out[k].values()
		checkValues(rec)
		k++
	}
	return nil
}

// batchRows hands gocsv a header and a batch's records.
type batchRows [][]string

func (r batchRows) GetCSVRows() ([][]string, error) { return r, nil }
