package samples

import (
	"encoding/csv"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/mapper"
	"github.com/bulkload/bulkload/reader"
)

// rowResult is what reading and mapping one record gave.
type rowResult struct {
	leadID string
	valid  bool
	errs   string
	fields []lead.Field // the fields of the errors; lead.NoField for a malformed record
}

// readAndMap runs the reader and the mapper over a sample, as bulkload
// validate does, and returns every row's outcome in order.
func readAndMap(t *testing.T, name string, ropts reader.Options, mapping *mapper.Mapping) []rowResult {
	t.Helper()
	m := mapper.New(mapper.Options{Mapping: mapping})
	var out []rowResult
	for _, rec := range readRecords(t, name, ropts) {
		if rec.Row != len(out)+1 {
			t.Fatalf("%s: record Row = %d, want %d", name, rec.Row, len(out)+1)
		}
		if rec.Err != nil {
			out = append(out, rowResult{errs: rec.Err.Error(), fields: []lead.Field{rec.Err.Field}})
			continue
		}
		in, errs := mapRow(m, rec.Row, &rec.Values)
		res := rowResult{leadID: rec.Values[lead.LeadID], valid: len(errs) == 0}
		if !res.valid {
			res.errs = errs.Error()
			for _, e := range errs {
				res.fields = append(res.fields, e.Field)
			}
		} else {
			res.leadID = in.LeadID
		}
		out = append(out, res)
	}
	return out
}

// readRecords reads every record of the named sample as bulkload does
// (NewReader, then ReadBatch and Decode), failing the test on a read error
// or on more than 10000 records.
func readRecords(t *testing.T, name string, ropts reader.Options) []reader.Record {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := reader.NewReader(f, name, ropts)
	if err != nil {
		t.Fatalf("reader.NewReader(%s): %v", name, err)
	}
	defer r.Close()
	var recs []reader.Record
	for {
		b := new(reader.Batch) // a new one each time: its records stay valid
		err := r.ReadBatch(b, 256)
		b.Decode()
		recs = append(recs, b.Records...)
		if len(recs) > 10_000 {
			t.Fatalf("%s: more than 10000 records", name)
		}
		if errors.Is(err, io.EOF) {
			return recs
		}
		if err != nil {
			t.Fatalf("%s: ReadBatch: %v", name, err)
		}
	}
}

func readExpected(t *testing.T, name string) [][]string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return recs[1:]
}

// TestMessyThroughPipeline checks that the reader and mapper judge every row
// of messy.csv as messy.expected.csv (and README.md) says, each failing row
// for the reason given.
func TestMessyThroughPipeline(t *testing.T) {
	got := readAndMap(t, "messy.csv", reader.Options{}, nil)
	want := readExpected(t, "messy.expected.csv")
	if len(got) != len(want) {
		t.Fatalf("messy.csv: %d rows read, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		t.Run("row "+w[0], func(t *testing.T) {
			wantValid := w[2] == "valid"
			if g.valid != wantValid {
				t.Fatalf("row %s (%s): valid = %v (%s), want %v", w[0], w[1], g.valid, g.errs, wantValid)
			}
			if wantValid {
				return
			}
			if w[3] == "" { // malformed: one reader error, no field errors
				if len(g.fields) != 1 || g.fields[0] != lead.NoField {
					t.Errorf("row %s: error %q, want a malformed-record error", w[0], g.errs)
				}
				return
			}
			if len(g.fields) != 1 || g.fields[0].String() != w[3] {
				t.Errorf("row %s: errors %q, want exactly one, about %s", w[0], g.errs, w[3])
			}
		})
	}
}

func TestCleanAndPartnerThroughPipeline(t *testing.T) {
	mapping, err := mapper.LoadMapping("mapping.yaml")
	if err != nil {
		t.Fatalf("mapping.yaml: %v", err)
	}
	tests := []struct {
		name      string
		file      string
		opts      reader.Options
		mapping   *mapper.Mapping
		rows      int
		invalidAt []int // 1-based rows that must fail
	}{
		{"clean csv", "leads.csv", reader.Options{}, nil, cleanRows, nil},
		{"clean jsonl", "leads.jsonl", reader.Options{}, nil, cleanRows, nil},
		{"latin1", "messy-latin1.csv", reader.Options{Encoding: "windows-1252"}, nil, 10, nil},
		{"partner with mapping", "partner-acme.csv", reader.Options{Columns: mapping.Columns}, mapping, 8, []int{6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := readAndMap(t, tc.file, tc.opts, tc.mapping)
			if len(got) != tc.rows {
				t.Fatalf("%s: %d rows, want %d", tc.file, len(got), tc.rows)
			}
			bad := map[int]bool{}
			for _, r := range tc.invalidAt {
				bad[r] = true
			}
			for i, g := range got {
				if g.valid == bad[i+1] {
					t.Errorf("%s row %d: valid = %v (%s), want %v", tc.file, i+1, g.valid, g.errs, !bad[i+1])
				}
			}
		})
	}
}

// TestLatin1NeedsEncoding shows why the README says --encoding
// windows-1252: read as UTF-8, the accented names are not valid text.
func TestLatin1NeedsEncoding(t *testing.T) {
	got := readAndMap(t, "messy-latin1.csv", reader.Options{}, nil)
	invalid := 0
	for _, g := range got {
		if !g.valid {
			invalid++
		}
	}
	if invalid == 0 {
		t.Errorf("messy-latin1.csv read as UTF-8: every row valid, want the non-UTF-8 names rejected")
	}
}

// mapRow maps one row as source does: MapFields, IDKey, then CheckDuplicate
// (from one goroutine, in input order).
func mapRow(m *mapper.Mapper, row int, v *lead.Values) (lead.Input, mapper.Errors) {
	in, errs, idShown := m.MapFields(row, v)
	return in, m.CheckDuplicate(row, m.IDKey(in.LeadID), idShown, errs)
}
