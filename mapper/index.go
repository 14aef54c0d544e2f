package mapper

import (
	"hash/maphash"
	"unsafe"
)

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
	slots []idSlot
	n     int
}

// idSlot holds a hash, split in two halves to keep the slot at 12 bytes, and
// the row it was first seen on. A zero hash marks an empty slot. Hash and row
// share a slot, so a lookup touches one cache line.
type idSlot struct {
	lo, hi, row uint32
}

func (s idSlot) hash() uint64 { return uint64(s.hi)<<32 | uint64(s.lo) }

func newIDIndex() *idIndex { return &idIndex{seed: maphash.MakeSeed()} }

// firstRow returns the row that first had id, after registering row for it
// when id is new (then first is row and dup false).
func (x *idIndex) firstRow(id string, row uint32) (first uint32, dup bool) {
	h := maphash.String(x.seed, id)
	if h == 0 {
		h = 1
	}
	s := &x.shards[h>>56]
	if s.n+1 > len(s.slots)*4/5 {
		s.grow()
	}
	for i := s.home(h); ; {
		switch sl := s.slots[i]; sl.hash() {
		case h:
			return sl.row, true
		case 0:
			s.slots[i] = idSlot{lo: uint32(h), hi: uint32(h >> 32), row: row}
			s.n++
			return row, false
		}
		if i++; i == uint64(len(s.slots)) {
			i = 0
		}
	}
}

// home maps h to a slot: the low 32 bits scaled to the table size, so that
// sizes need not be powers of two.
func (s *idShard) home(h uint64) uint64 {
	return (h & (1<<32 - 1)) * uint64(len(s.slots)) >> 32
}

// grow makes the table 1.5 times as large (16 slots at first).
func (s *idShard) grow() {
	size := len(s.slots) * 3 / 2
	if size < 16 {
		size = 16
	}
	old := s.slots
	s.slots = make([]idSlot, size)
	for _, sl := range old {
		if sl.hash() == 0 {
			continue
		}
		i := s.home(sl.hash())
		for s.slots[i].hash() != 0 {
			if i++; i == uint64(size) {
				i = 0
			}
		}
		s.slots[i] = sl
	}
}

// bytes returns the memory the tables hold, for tests and benchmarks.
func (x *idIndex) bytes() int {
	n := 0
	for i := range x.shards {
		n += len(x.shards[i].slots) * int(unsafe.Sizeof(idSlot{}))
	}
	return n
}
