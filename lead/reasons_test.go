package lead

import (
	"reflect"
	"testing"
)

// TestReasonsAddRow: a row's Error is one reason and each Invalid error's
// Reason another, without its positions; texts are never split; Top sorts
// by count, then text.
func TestReasonsAddRow(t *testing.T) {
	var r Reasons
	for _, row := range []Row{
		{Row: 1, Status: StatusInvalid, Invalid: RowErrors{{Row: 1, Field: ZipCode, Rule: "must be 5 digits"}, {Row: 1, StartLine: 2, Column: 5, Field: NoField, Rule: "a quote; double it"}}},
		{Row: 2, Status: StatusInvalid, Invalid: RowErrors{{Row: 2, Field: ZipCode, Rule: "must be 5 digits"}}},
		{Row: 3, Status: StatusFailed, Error: "createLead: HTTP 503; 5 attempts"},
		{Row: 4, Status: StatusProcessed},
	} {
		r.AddRow(&row)
	}
	want := []ReasonCount{
		{Reason: "zipCode: must be 5 digits", Count: 2},
		{Reason: "createLead: HTTP 503; 5 attempts", Count: 1},
		{Reason: "malformed record: a quote; double it", Count: 1},
	}
	if got := r.Top(10); !reflect.DeepEqual(got, want) {
		t.Errorf("Top(10) = %v, want %v", got, want)
	}
	if got := r.Top(1); !reflect.DeepEqual(got, want[:1]) {
		t.Errorf("Top(1) = %v, want %v", got, want[:1])
	}
	var none Reasons
	if got := none.Top(3); len(got) != 0 {
		t.Errorf("Top of no reasons = %v, want none", got)
	}
}
