package reader

import (
	"reflect"

	"github.com/bulkload/bulkload/lead"
)

// Batch is a run of consecutive records read by ReadBatch. Their raw text is
// copied into one arena, so they stay valid after the Reader moves on, and a
// CSV record's values are not decoded yet: Decode does that, in any
// goroutine, which is how decoding spreads over the cores while the input is
// read once, in order. A Batch is reused from read to read; it is not safe
// for concurrent use.
type Batch struct {
	// Records are the batch's records in input order. Until Decode, a
	// well-formed CSV record's Values are its fields in csvRow's order,
	// unchecked (no "no known column has a value" error yet); after it,
	// each record is what the reference path (Reader.next) would have
	// returned.
	Records []Record

	arena   []byte
	spans   []int  // Records[i].Raw is arena[spans[i]:spans[i+1]]
	pending []bool // per record: its Values await Decode's check
	decoded bool
}

// Len returns the number of records.
func (b *Batch) Len() int { return len(b.Records) }

// ReadBatch reads up to max records into b, replacing what it held, without
// decoding CSV values (see Decode). It returns nil when b is full, and
// otherwise the error that ended the input after the records read before
// it: io.EOF after the last record, or an error meaning the input cannot be
// read on (an I/O error, a corrupt gzip stream, a CSV record over 1 MiB),
// which must stop the run. A malformed row is not an error here but a
// Record with Err set. The Reader is not safe for
// concurrent use; b must not be in use elsewhere.
func (r *Reader) ReadBatch(b *Batch, max int) error {
	b.Records, b.arena, b.spans = b.Records[:0], b.arena[:0], b.spans[:0]
	b.pending, b.decoded = b.pending[:0], false
	var (
		pos     []int
		escaped bool
	)
	if s, ok := r.src.(*csvSource); ok {
		pos, escaped = s.fieldPos, s.escaped
	}
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
		if fields != nil {
			// fields is reused by the next read: copy, in field order.
			for i, f := range fields[:min(len(fields), len(pos))] {
				if p := pos[i]; p >= 0 {
					if escaped {
						f = lead.UnescapeCell(f)
					}
					rec.Values[p] = f
				}
			}
		}
		b.pending = append(b.pending, fields != nil)
		b.Records = append(b.Records, rec)
	}
	b.spans = append(b.spans, len(b.arena))
	for i := range b.Records {
		b.Records[i].Raw = b.arena[b.spans[i]:b.spans[i+1]:b.spans[i+1]]
	}
	return err
}

// Decode finishes the records ReadBatch left undecoded. gocsv matched the
// header to csvRow when the Reader opened (NewReader refuses a header gocsv
// binds differently), and ReadBatch has laid each record's fields out in
// lead.Values, which csvRow is laid out as (see csvRow.values), by that
// match. What gocsv would do per record from there is copy each string into
// its field through reflection, allocating per field, most of what
// validate allocated and of its collector's work (figures: bench/README.md);
// so the batch path does not call it, and Reader.next, which decodes through
// gocsv's Unmarshaller, stays the reference: TestReadBatchDecodeSameAsNext
// and FuzzReadBatchSameAsNext hold the two to the same records. What is left
// is the check for a row with no known value, which the workers run, off the
// reading goroutine. A second call does nothing; b must not be in use
// elsewhere.
func (b *Batch) Decode() {
	if b.decoded {
		return
	}
	b.decoded = true
	for i, pending := range b.pending {
		if pending {
			checkValues(&b.Records[i])
		}
	}
}

// csvFields is the number of csvRow's fields.
const csvFields = int(lead.NumFields)

// csvRowPositions returns, per header column, the position in csvRow of the
// field whose tag the renamed column carries, or -1.
func csvRowPositions(renamed []string) []int {
	t := reflect.TypeFor[csvRow]()
	byTag := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		byTag[t.Field(i).Tag.Get("csv")] = i
	}
	pos := make([]int, len(renamed))
	for i, name := range renamed {
		pos[i] = -1
		if p, ok := byTag[name]; ok && name != "" {
			pos[i] = p
		}
	}
	return pos
}
