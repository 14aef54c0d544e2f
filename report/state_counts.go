package report

import (
	"iter"

	"github.com/bulkload/bulkload/lead"
)

// Counts returns how many rows have each status as their last line, without
// reading the file again.
func (s *State) Counts() map[lead.Status]int {
	c := make(map[lead.Status]int)
	for _, r := range s.refs {
		c[r.status()]++
	}
	return c
}

// MaxRow returns the highest row number the file has a line for; 0 for none.
func (s *State) MaxRow() int {
	if len(s.refs) == 0 {
		return 0
	}
	return int(s.refs[len(s.refs)-1].row)
}

// All yields the last line of each row the file has one for, in row order,
// read back as Get reads it. The State must stay open while it runs.
func (s *State) All() iter.Seq[lead.Row] {
	return func(yield func(lead.Row) bool) {
		for _, ref := range s.refs {
			if row, ok := s.Get(int(ref.row)); ok && !yield(row) {
				return
			}
		}
	}
}
