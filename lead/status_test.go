package lead

import (
	"encoding/json"
	"testing"
)

// TestStatusTable checks the table against itself: each status once, its
// Key the JSON key of the Counts field it counts in, Info and Known
// agreeing, and only created not final.
func TestStatusTable(t *testing.T) {
	seen := map[Status]bool{}
	for _, i := range Statuses() {
		t.Run(string(i.Status), func(t *testing.T) {
			if seen[i.Status] {
				t.Fatalf("status %q twice in the table", i.Status)
			}
			seen[i.Status] = true
			got, ok := i.Status.Info()
			if !ok || got.Status != i.Status || got.Key != i.Key {
				t.Errorf("Info(%q) = %+v, %v, want its line", i.Status, got, ok)
			}
			var c Counts
			if !c.Count(i.Status) {
				t.Fatalf("Count(%q) = false, want true", i.Status)
			}
			if c.Of(i) != 1 || c.Total(nil) != 1 {
				t.Errorf("after Count(%q): Of = %d, Total = %d, want 1, 1", i.Status, c.Of(i), c.Total(nil))
			}
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]int
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if m[i.Key] != 1 {
				t.Errorf("Counts JSON after Count(%q) = %s, want %q: 1", i.Status, b, i.Key)
			}
			if want := i.Status != StatusCreated; i.Status.Final() != want {
				t.Errorf("%q.Final() = %v, want %v", i.Status, !want, want)
			}
			if i.Lead && !i.Answered || i.Answered && !i.Sent {
				t.Errorf("%q: Lead %v, Answered %v, Sent %v: a lead needs an answer, an answer a call", i.Status, i.Lead, i.Answered, i.Sent)
			}
		})
	}
	if len(seen) != NumStatuses {
		t.Errorf("%d statuses in the table, want NumStatuses = %d", len(seen), NumStatuses)
	}
}

func TestUnknownStatus(t *testing.T) {
	for _, s := range []Status{"", "Valid", "not_sent", "unknown"} {
		if s.Known() {
			t.Errorf("%q.Known() = true, want false", s)
		}
		if !s.Final() {
			t.Errorf("%q.Final() = false, want true (only created is not final)", s)
		}
		var c Counts
		if c.Count(s) || c.Total(nil) != 0 {
			t.Errorf("Count(%q) counted it: %+v", s, c)
		}
	}
}

func TestCounts(t *testing.T) {
	a := Counts{Valid: 1, Invalid: 2, Failed: 3, Created: 4}
	a.Add(Counts{Invalid: 1, Submitted: 5, Created: 1})
	want := Counts{Valid: 1, Invalid: 3, Submitted: 5, Failed: 3, Created: 5}
	if a != want {
		t.Fatalf("Add = %+v, want %+v", a, want)
	}
	tests := []struct {
		name string
		want func(StatusInfo) bool
		n    int
	}{
		{"all", nil, 17},
		{"operator's", func(i StatusInfo) bool { return i.Action == OperatorAction }, 8},
		{"failures", StatusInfo.Failure, 3},
		{"partner's", func(i StatusInfo) bool { return i.Action == PartnerAction }, 3},
		{"settled", func(i StatusInfo) bool { return i.Action == NoAction }, 6},
	}
	for _, tc := range tests {
		if got := a.Total(tc.want); got != tc.n {
			t.Errorf("Total(%s) = %d, want %d", tc.name, got, tc.n)
		}
	}
}
