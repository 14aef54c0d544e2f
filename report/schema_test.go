package report

import (
	"reflect"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/lead"
)

// TestSchema: Header names every column once, in the constants' order, and
// setCell is cell's inverse for every column.
func TestSchema(t *testing.T) {
	names := strings.Split(Header, ",")
	if len(names) != int(numColumns) {
		t.Fatalf("Header has %d names, want %d (numColumns)", len(names), numColumns)
	}
	seen := map[string]bool{}
	for c := range numColumns {
		if got := c.name(); got != names[c] || seen[got] {
			t.Errorf("column %d: name() = %q, want %q, once", c, got, names[c])
		}
		seen[c.name()] = true
	}
	r := lead.Row{Row: 7, LeadID: "L7", Ref: "ref", Status: lead.StatusSubmitFailed, ID: "id-7", ResultCode: 1013,
		Note: "note", Ambiguous: true, BidValue: "$1.00", Attempts: 3, Error: "submitLead: HTTP 503"}
	var back lead.Row
	for c := range numColumns {
		text, n := cell(&r, c)
		setCell(&back, c, text, n)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("setCell(cell) over every column = %+v, want %+v", back, r)
	}
}

// TestJSONLineIsTheSchema: jsonLine, the JSONL decoder's struct, has one
// field per column in the columns' order, tagged with its name, a pointer
// to an int for a number column and a string for the others.
func TestJSONLineIsTheSchema(t *testing.T) {
	typ := reflect.TypeFor[jsonLine]()
	if typ.NumField() != int(numColumns) {
		t.Fatalf("jsonLine has %d fields, want %d", typ.NumField(), numColumns)
	}
	for c := range numColumns {
		f := typ.Field(int(c))
		want := reflect.TypeFor[string]()
		if k := c.kind(); k == kindNumber || k == kindCount {
			want = reflect.TypeFor[*int]()
		}
		if tag := f.Tag.Get("json"); tag != c.name() || f.Type != want {
			t.Errorf("jsonLine field %d is %s %v `json:%q`, want %v `json:%q`", c, f.Name, f.Type, tag, want, c.name())
		}
	}
}
