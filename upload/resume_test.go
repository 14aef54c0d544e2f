package upload

import (
	"errors"
	"testing"

	"github.com/bulkload/bulkload/lead"
)

// rows is a Prior over a map of row number to last line.
type rows map[int]lead.Row

func (p rows) Get(n int) (lead.Row, bool) {
	r, ok := p[n]
	return r, ok
}

// TestMatchPrior is the resume policy's table: the check before the first
// call (files and streams) and the engine all apply it.
func TestMatchPrior(t *testing.T) {
	prior := rows{
		1: {Row: 1, LeadID: "a", Status: lead.StatusSubmitted, ID: "L1"},
		2: {Row: 2, LeadID: "b", Status: lead.StatusFailed},
		3: {Row: 3, LeadID: "c", Status: lead.StatusCreated, ID: "L3"},
		4: {Row: 4, LeadID: "", Status: lead.StatusInvalid},
		5: {Row: 5, LeadID: "e", Status: lead.StatusFailed, Ambiguous: true},
		6: {Row: 6, LeadID: "f", Status: lead.StatusUnverified},
		7: {Row: 7, LeadID: "g", Status: lead.StatusUnverified, ID: "L7", Note: "Duplicate of lead L0"},
		8: {Row: 8, LeadID: "h", Status: lead.StatusProcessed, ID: "L8"},
		9: {Row: 9, LeadID: "i", Status: lead.StatusSubmitFailed, ID: "L9"},
	}
	cases := []struct {
		name    string
		prior   Prior
		row     lead.Row
		has     bool
		kept    bool
		foreign bool
	}{
		{"not resuming", nil, lead.Row{Row: 1, LeadID: "a"}, false, false, false},
		{"no line yet", prior, lead.Row{Row: 99, LeadID: "z"}, false, false, false},
		{"same leadId", prior, lead.Row{Row: 1, LeadID: "a", Status: lead.StatusValid}, true, false, false},
		{"another leadId", prior, lead.Row{Row: 1, LeadID: "x"}, false, false, true},
		{"leadId gone", prior, lead.Row{Row: 2, LeadID: ""}, false, false, true},
		{"invalid now, lead made earlier", prior, lead.Row{Row: 3, LeadID: "c", Status: lead.StatusInvalid}, true, true, false},
		{"invalid now, submitted earlier", prior, lead.Row{Row: 1, LeadID: "a", Status: lead.StatusInvalid}, true, true, false},
		{"invalid now, failed earlier: no lead", prior, lead.Row{Row: 2, LeadID: "b", Status: lead.StatusInvalid}, true, false, false},
		{"invalid then and now", prior, lead.Row{Row: 4, Status: lead.StatusInvalid}, true, false, false},
		{"invalid now, processed earlier", prior, lead.Row{Row: 8, LeadID: "h", Status: lead.StatusInvalid}, true, true, false},
		{"invalid now, submit_failed earlier", prior, lead.Row{Row: 9, LeadID: "i", Status: lead.StatusInvalid}, true, true, false},
		{"invalid now, ambiguous failed earlier: its lead may exist", prior, lead.Row{Row: 5, LeadID: "e", Status: lead.StatusInvalid}, true, true, false},
		{"invalid now, unverified earlier without an id: its lead may exist", prior, lead.Row{Row: 6, LeadID: "f", Status: lead.StatusInvalid}, true, true, false},
		{"invalid now, unverified earlier with an id", prior, lead.Row{Row: 7, LeadID: "g", Status: lead.StatusInvalid}, true, true, false},
		{"valid now, ambiguous failed earlier: sent again, not kept", prior, lead.Row{Row: 5, LeadID: "e", Status: lead.StatusValid}, true, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := MatchPrior(tc.prior, tc.row)
			var fe *ForeignRowError
			if got := errors.As(err, &fe); got != tc.foreign {
				t.Fatalf("MatchPrior: err %v, want foreign %v", err, tc.foreign)
			}
			if tc.foreign {
				if !errors.Is(err, ErrForeignJournal) || fe.Row != tc.row.Row || fe.Here != tc.row.LeadID {
					t.Errorf("foreign error %#v (%v): want row %d, here %q, wrapping ErrForeignJournal", fe, err, tc.row.Row, tc.row.LeadID)
				}
				return
			}
			if r.Has != tc.has || r.Kept != tc.kept {
				t.Errorf("MatchPrior = has %v kept %v, want has %v kept %v", r.Has, r.Kept, tc.has, tc.kept)
			}
		})
	}
}

// TestCheck: the check before the first call decides each row it reads
// once (MatchPrior) and hands the engine what it decided: the last row
// decided and the rows kept; nothing once a row was another input's, or
// when not resuming.
func TestCheck(t *testing.T) {
	prior := rows{
		1: {Row: 1, LeadID: "a", Status: lead.StatusSubmitted, ID: "L1"},
		2: {Row: 2, LeadID: "b", Status: lead.StatusCreated, ID: "L2"},
	}
	c := NewCheck(prior)
	for _, r := range []lead.Row{
		{Row: 1, LeadID: "a", Status: lead.StatusValid},
		{Row: 2, LeadID: "b", Status: lead.StatusInvalid},
		{Row: 3, LeadID: "c", Status: lead.StatusValid},
	} {
		if _, err := c.Match(r); err != nil {
			t.Fatalf("Match(row %d): %v", r.Row, err)
		}
	}
	d := c.Decided()
	if c.Kept() != 1 || d == nil || d.Through != 3 || len(d.Kept) != 1 || !d.Kept[2] {
		t.Fatalf("Kept() = %d, Decided() = %+v; want 1, through 3 with row 2 kept", c.Kept(), d)
	}
	if _, err := c.Match(lead.Row{Row: 1, LeadID: "x"}); !errors.Is(err, ErrForeignJournal) {
		t.Fatalf("Match(another leadId) = %v, want ErrForeignJournal", err)
	}
	if d := c.Decided(); d != nil {
		t.Errorf("Decided() after a foreign row = %+v, want nil: the engine decides every row", d)
	}
	n := NewCheck(nil)
	if _, err := n.Match(lead.Row{Row: 1, LeadID: "a"}); err != nil {
		t.Fatal(err)
	}
	if d := n.Decided(); d != nil {
		t.Errorf("Decided() not resuming = %+v, want nil", d)
	}
}
