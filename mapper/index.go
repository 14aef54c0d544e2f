package mapper

import "hash/maphash"

// idShards is the number of independently growing parts of an idIndex. With
// many shards, growing one copies only a small table, so the memory of the
// index rises smoothly instead of doubling in one step.
const idShards = 256

// idIndex remembers the first row of each leadId by a 64-bit hash of it: 12
// bytes a slot, 15 to 23 bytes a distinct leadId, in open-addressed tables
// with linear probing. A Go map[uint64]uint32 takes about 38 bytes an entry.
// Not safe for concurrent use.
type idIndex struct {
	seed   maphash.Seed
	shards [idShards]idShard
}

type idShard struct {
	keys []uint64 // 0 marks an empty slot
	rows []uint32
	n    int
}

func newIDIndex() *idIndex { return &idIndex{seed: maphash.MakeSeed()} }

// firstRow returns the row that first had id, after registering row for it
// when id is new (then first is row and dup false).
func (x *idIndex) firstRow(id string, row uint32) (first uint32, dup bool) {
	h := maphash.String(x.seed, id)
	if h == 0 {
		h = 1
	}
	s := &x.shards[h>>56]
	if s.n+1 > len(s.keys)*4/5 {
		s.grow()
	}
	for i := s.home(h); ; {
		switch s.keys[i] {
		case h:
			return s.rows[i], true
		case 0:
			s.keys[i], s.rows[i] = h, row
			s.n++
			return row, false
		}
		if i++; i == uint64(len(s.keys)) {
			i = 0
		}
	}
}

// home maps h to a slot: the low 32 bits scaled to the table size, so that
// sizes need not be powers of two.
func (s *idShard) home(h uint64) uint64 {
	return (h & (1<<32 - 1)) * uint64(len(s.keys)) >> 32
}

// grow makes the table 1.5 times as large (16 slots at first).
func (s *idShard) grow() {
	size := len(s.keys) * 3 / 2
	if size < 16 {
		size = 16
	}
	old := *s
	*s = idShard{keys: make([]uint64, size), rows: make([]uint32, size), n: old.n}
	for j, h := range old.keys {
		if h == 0 {
			continue
		}
		i := s.home(h)
		for s.keys[i] != 0 {
			if i++; i == uint64(size) {
				i = 0
			}
		}
		s.keys[i], s.rows[i] = h, old.rows[j]
	}
}

// bytes returns the memory the tables hold, for tests and benchmarks.
func (x *idIndex) bytes() int {
	n := 0
	for i := range x.shards {
		n += len(x.shards[i].keys)*8 + len(x.shards[i].rows)*4
	}
	return n
}
