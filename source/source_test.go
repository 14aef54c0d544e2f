package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/mapper"
	"github.com/bulkload/bulkload/reader"
)

// generated writes n synthetic rows, 10% with an error, where every 7th
// row repeats the leadId of a row about half as far into the file (most
// in an earlier batch, some in the same one), and a few rows are
// malformed: a whole file's worth of what parallel mapping must keep in
// order.
func generated(t *testing.T, n int) string {
	t.Helper()
	opts := synth.Defaults()
	opts.Seed, opts.Invalid = 3, 0.1
	g, err := synth.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := synth.NewCSVWriter(&b)
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	var v lead.Values
	for i := range n {
		g.Row(i, &v)
		if i%7 == 6 {
			v[lead.LeadID] = fmt.Sprintf("GEN-%06d", i/2+1)
		}
		if err := w.Write(&v); err != nil {
			t.Fatal(err)
		}
		if i%501 == 500 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			b.WriteString("GEN-short,row\n")
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "generated.csv")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serialItems is the reference: every record read one at a time (ReadBatch
// of one, then Decode) and mapped with mapRow (MapFields, IDKey,
// CheckDuplicate), one by one, as the Source did before it mapped in
// parallel.
func serialItems(t *testing.T, path string, cfg Config) []Item {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := reader.NewReader(f, path, cfg.Reader)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := mapper.New(mapper.Options{Mapping: cfg.Mapping, DayFirst: cfg.DayFirst})
	var (
		items []Item
		b     reader.Batch
	)
	for {
		err := r.ReadBatch(&b, 1)
		if errors.Is(err, io.EOF) && b.Len() == 0 {
			return items
		}
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		b.Decode()
		rec := &b.Records[0]
		it := Item{Row: lead.Row{Row: rec.Row, LeadID: strings.TrimSpace(rec.Values[lead.LeadID]),
			Ref: strings.TrimSpace(rec.Values[lead.Ref]), Status: lead.StatusValid}}
		if rec.Err != nil {
			it.Row.Status, it.Row.Invalid = lead.StatusInvalid, lead.RowErrors{*rec.Err}
		} else if in, errs := mapRow(m, rec.Row, &rec.Values); len(errs) > 0 {
			for i := range errs {
				errs[i].StartLine, errs[i].Header = rec.Line, r.Header(errs[i].Field)
			}
			it.Row.Status, it.Row.Invalid = lead.StatusInvalid, errs
		} else {
			it.Input = in
		}
		items = append(items, it)
	}
}

// each calls f with every Item src yields until io.EOF, failing on any
// other error, and returns how many there were.
func each(tb testing.TB, src interface {
	Next(context.Context) (Item, error)
}, f func(Item)) int {
	tb.Helper()
	n := 0
	for ; ; n++ {
		it, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			tb.Fatal(err)
		}
		f(it)
	}
}

// sourceItems reads every item through a Source with the given workers and
// returns them and the rejects file.
func sourceItems(t *testing.T, path string, cfg Config, workers int) ([]Item, []byte) {
	t.Helper()
	cfg.Workers = workers
	cfg.Rejects = filepath.Join(t.TempDir(), "rejects.csv")
	s, err := Open(context.Background(), path, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var items []Item
	each(t, s, func(it Item) { items = append(items, it) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rejects, err := os.ReadFile(cfg.Rejects)
	if err != nil {
		t.Fatal(err)
	}
	return items, rejects
}

// TestParallelSameAsSerial reads the messy samples and a generated file
// with duplicates, errors and malformed rows through Sources of 1 and 4
// workers, and wants what reading and mapping row by row gives: the same
// items in input order, each duplicate naming the first row of its leadId,
// and the same rejects file.
func TestParallelSameAsSerial(t *testing.T) {
	mapping, err := mapper.LoadMapping(filepath.Join("..", "samples", "mapping.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		cfg  Config
	}{
		{"messy", filepath.Join("..", "samples", "messy.csv"), Config{}},
		{"messy latin1", filepath.Join("..", "samples", "messy-latin1.csv"), Config{Reader: reader.Options{Encoding: "windows-1252"}}},
		{"partner with mapping", filepath.Join("..", "samples", "partner-acme.csv"), Config{Reader: reader.Options{Columns: mapping.Columns}, Mapping: mapping}},
		{"jsonl", filepath.Join("..", "samples", "leads.jsonl"), Config{}},
		{"generated", generated(t, 3000), Config{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := serialItems(t, tc.path, tc.cfg)
			one, rejects1 := sourceItems(t, tc.path, tc.cfg, 1)
			four, rejects4 := sourceItems(t, tc.path, tc.cfg, 4)
			for _, got := range [][]Item{one, four} {
				if len(got) != len(want) {
					t.Fatalf("%d items, want %d", len(got), len(want))
				}
				for i := range want {
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Fatalf("item %d = %+v\nwant %+v", i, got[i], want[i])
					}
				}
			}
			if !bytes.Equal(rejects1, rejects4) {
				t.Errorf("rejects files differ between 1 and 4 workers")
			}
			if tc.name == "generated" {
				dups := 0
				for _, it := range want {
					if strings.Contains(it.Row.ErrorText(), "duplicate of row") {
						dups++
					}
				}
				if dups < 150 || !bytes.Contains(rejects4, []byte("duplicate of row")) {
					t.Errorf("%d duplicates in the generated file, want over 150 (and in the rejects file)", dups)
				}
			}
		})
	}
}

// TestDefaultWorkers: one worker per CPU the Go scheduler uses, up to
// maxWorkers; more only hold more batches in memory (see maxWorkers).
func TestDefaultWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct{ procs, want int }{
		{1, 1},
		{2, 2},
		{maxWorkers, maxWorkers},
		{16, maxWorkers},
		{128, maxWorkers},
	} {
		runtime.GOMAXPROCS(tc.procs)
		if got := DefaultWorkers(); got != tc.want {
			t.Errorf("GOMAXPROCS %d: DefaultWorkers() = %d, want %d", tc.procs, got, tc.want)
		}
	}
}

// mapRow maps one row as source does: MapFields, IDKey, then CheckDuplicate
// (from one goroutine, in input order).
func mapRow(m *mapper.Mapper, row int, v *lead.Values) (lead.Input, mapper.Errors) {
	in, errs, idShown := m.MapFields(row, v)
	return in, m.CheckDuplicate(row, m.IDKey(in.LeadID), idShown, errs)
}
