package mapper

import (
	"reflect"
	"sync"
	"testing"

	"github.com/bulkload/bulkload/lead"
)

// TestMapFieldsInParallelThenCheckDuplicate maps rows concurrently with
// MapFields, checks duplicates in input order with CheckDuplicate, and
// wants exactly what Map gives row by row: the same Inputs and the same
// errors in field order, the duplicate between a zipCode and a
// termsConsent error, and the first row of a leadId winning even when its
// row is invalid or a later row is mapped first.
func TestMapFieldsInParallelThenCheckDuplicate(t *testing.T) {
	var rows []lead.Values
	for i := range 400 {
		v := validRow()
		v[lead.LeadID] = " L-" + string(rune('A'+i%37)) + " " // 37 ids, most rows repeat one
		switch i % 5 {
		case 1:
			v[lead.ZipCode], v[lead.TermsConsent] = "123", "no"
		case 2:
			v[lead.LeadID] = ""
		case 3:
			v[lead.LeadID] = "L-\xff" // not UTF-8: an error, nothing registered
		}
		rows = append(rows, v)
	}
	serial := newTestMapper(nil)
	type mapped struct {
		in   lead.Input
		errs Errors
	}
	want := make([]mapped, len(rows))
	for i := range rows {
		in, errs := mapRow(serial, i+1, &rows[i])
		want[i] = mapped{in, errs}
	}

	par := newTestMapper(nil)
	got := make([]mapped, len(rows))
	cells := make([]string, len(rows))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := len(rows) - 1 - w; i >= 0; i -= 4 { // later rows first
				in, errs, cell := par.MapFields(i+1, &rows[i])
				got[i], cells[i] = mapped{in, errs}, cell
			}
		})
	}
	wg.Wait()
	dups := 0
	for i := range got {
		got[i].errs = par.CheckDuplicate(i+1, par.IDKey(got[i].in.LeadID), cells[i], got[i].errs)
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("row %d: MapFields+CheckDuplicate = %+v, %v; Map = %+v, %v", i+1, got[i].in, got[i].errs, want[i].in, want[i].errs)
		}
		for _, e := range got[i].errs {
			if e.Field == lead.LeadID && e.Rule != ruleNotUTF8 {
				dups++
			}
		}
	}
	if dups == 0 {
		t.Fatal("no row was a duplicate: the test checks nothing")
	}
	if e := want[1+5*37].errs; len(e) != 3 || e[1].Field != lead.LeadID {
		t.Errorf("row %d errors = %v, want zipCode, the duplicate, termsConsent", 2+5*37, e)
	}
}
