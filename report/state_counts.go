package report

// Counts returns how many rows have each status as their last line, without
// reading the file again.
func (s *State) Counts() map[Status]int {
	c := make(map[Status]int)
	for _, r := range s.refs {
		c[r.status()]++
	}
	return c
}
