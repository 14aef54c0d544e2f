package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/mapper"
	"github.com/bulkload/bulkload/reader"
)

// TestGeneratedFilesThroughPipeline generates files with run, reads them
// with bulkload's own reader and mapper, and checks: every row parses,
// leadIds never repeat, and the invalid fraction asked for is what the
// mapper finds (each flawed row fails, every other row passes).
func TestGeneratedFilesThroughPipeline(t *testing.T) {
	const n = 4000
	tests := []struct {
		name    string
		args    []string
		ext     string
		invalid float64
	}{
		{"csv mixed 10% invalid", []string{"-invalid", "0.1"}, ".csv", 0.1},
		{"csv clean none invalid", []string{"-invalid", "0", "-style", "clean"}, ".csv", 0},
		{"jsonl mixed 5% invalid", []string{"-invalid", "0.05", "-format", "jsonl"}, ".jsonl", 0.05},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "leads"+tc.ext)
			var stdout, stderr bytes.Buffer
			args := append([]string{"-n", "4000", "-seed", "9", "-o", path}, tc.args...)
			if code := run(args, &stdout, &stderr); code != 0 {
				t.Fatalf("run(%q) = %d, stderr %s", args, code, stderr.String())
			}
			in, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			r, err := reader.NewReader(in, path, reader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var recs []reader.Record
			for len(recs) <= n {
				b := new(reader.Batch) // a new one each time: its records stay valid
				err := r.ReadBatch(b, 256)
				b.Decode()
				recs = append(recs, b.Records...)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if u := r.Unknown(); len(u) > 0 {
				t.Errorf("unknown columns %v, want none", u)
			}
			m := mapper.New(mapper.Options{})
			ids := map[string]bool{}
			rows, invalid := 0, 0
			for _, rec := range recs {
				rows++
				if rec.Err != nil {
					t.Fatalf("row %d malformed: %v", rec.Row, rec.Err)
				}
				id := rec.Values[lead.LeadID]
				if ids[id] {
					t.Fatalf("row %d: leadId %s repeats", rec.Row, id)
				}
				ids[id] = true
				if _, errs := mapRow(m, rec.Row, &rec.Values); len(errs) > 0 {
					invalid++
					if strings.Count(errs.Error(), "; ") > 0 {
						t.Errorf("row %d: %d errors (%v), want one", rec.Row, len(errs), errs)
					}
				}
			}
			if rows != n {
				t.Fatalf("rows = %d, want %d", rows, n)
			}
			if !strings.Contains(stderr.String(), "invalid="+itoa(invalid)+" ") {
				t.Errorf("gen reported %q, mapper found %d invalid rows", stderr.String(), invalid)
			}
			f := float64(invalid) / n
			if f < tc.invalid*0.7 || f > tc.invalid*1.3 {
				t.Errorf("invalid fraction = %.4f, want about %.2f", f, tc.invalid)
			}
		})
	}
}

func itoa(n int) string {
	var b []byte
	if n == 0 {
		return "0"
	}
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"bad format", []string{"-format", "xml"}},
		{"bad style", []string{"-style", "odd"}},
		{"negative n", []string{"-n", "-1"}},
		{"too many rows for unique SSNs", []string{"-n", "80000000"}},
		{"positional argument", []string{"file.csv"}},
		{"bad fraction", []string{"-invalid", "2", "-n", "1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(tc.args, &out, &errb); code == 0 {
				t.Errorf("run(%q) = 0, want failure", tc.args)
			}
		})
	}
}

// mapRow maps one row as source does: MapFields, IDKey, then CheckDuplicate
// (from one goroutine, in input order).
func mapRow(m *mapper.Mapper, row int, v *lead.Values) (lead.Input, mapper.Errors) {
	in, errs, idShown := m.MapFields(row, v)
	return in, m.CheckDuplicate(row, m.IDKey(in.LeadID), idShown, errs)
}
