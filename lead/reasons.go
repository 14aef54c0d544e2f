package lead

import (
	"cmp"
	"slices"
)

// Reasons counts why rows failed: the error texts, which never carry a
// row's values (e.g. "zipCode: must be 5 digits"). The zero value is ready
// to use.
type Reasons map[string]int

// Add counts one occurrence of reason.
func (r *Reasons) Add(reason string) {
	if *r == nil {
		*r = make(Reasons)
	}
	(*r)[reason]++
}

// AddRow counts the reasons row failed: its Error as one reason, and the
// Reason of each of its Invalid errors, which carries no positions, so the
// same problem on many rows counts as one reason. It never splits a text:
// a reason that contains "; " stays whole.
func (r *Reasons) AddRow(row *Row) {
	if row.Error != "" {
		r.Add(row.Error)
	}
	for _, e := range row.Invalid {
		r.Add(e.Reason())
	}
}

// ReasonCount is one failure reason and how many times it occurred.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// Top returns the n most frequent reasons, most frequent first, ties in
// alphabetical order.
func (r Reasons) Top(n int) []ReasonCount {
	out := make([]ReasonCount, 0, len(r))
	for k, v := range r {
		out = append(out, ReasonCount{k, v})
	}
	slices.SortFunc(out, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Reason, b.Reason))
	})
	return out[:min(n, len(out))]
}
