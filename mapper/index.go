package mapper

import (
	"cmp"
	"encoding/binary"
	"hash/maphash"
	"runtime"
	"slices"
	"unsafe"
)

// The duplicate-leadId index remembers, for each distinct leadId, a 64-bit
// keyed hash of it and the row it was first seen on, in about 10.8 bytes a
// leadId however many there are (the old open-addressed table took 15 to 23
// and, being on the Go heap, was doubled again by the collector's headroom).
//
// Two parts:
//   - recent: an open-addressed table of the ids added since the last merge,
//     12 bytes a slot (the whole hash and the row), sized to a sixteenth of
//     the merged ids and merged into the store when three quarters full;
//   - store: 256 shards by the hash's top 8 bits, each a sorted array of
//     10-byte entries (the hash's low 48 bits and the row) with a directory of
//     256 buckets by the next 8 bits. Those 16 bits are implied by where an
//     entry sits, so 6 bytes keep the whole 64-bit hash. Merging sorts the
//     recent ids and merges them into each shard from the back, in place.
//
// The store's arrays live outside the Go heap where the platform allows
// (mmap, as VictoriaMetrics' fastcache does for its chunks): the collector
// neither scans them nor lets the heap grow by GOGC percent of them, so a
// process's memory is the store plus a heap that does not grow with the file.
//
// Two different leadIds are taken for the same one only if their 64-bit
// hashes are equal: a chance of about n²/2⁶⁵ in a file of n distinct ids
// (3e-8 at 1M, 7e-7 at 5M, 3e-6 at 10M). The seed is random per Mapper, so a
// rerun does not repeat a collision.
type idIndex struct {
	seed   maphash.Seed
	recent recentTable
	store  *idStore // nil until the first merge
}

const (
	// recentMin is the smallest recent table, in slots.
	recentMin = 1024
	// entrySize is a store entry: 6 bytes of hash, 4 of row.
	entrySize = 10
	// remMask keeps the hash bits an entry stores.
	remMask = 1<<48 - 1
)

func newIDIndex() *idIndex {
	x := &idIndex{seed: maphash.MakeSeed()}
	x.recent.reset(recentMin)
	return x
}

// firstRow returns the row that first had id, after registering row for it
// when id is new (then first is row and dup false).
func (x *idIndex) firstRow(id string, row uint32) (first uint32, dup bool) {
	h := maphash.String(x.seed, id)
	if h == 0 {
		h = 1 // 0 marks an empty slot of the recent table
	}
	if x.store != nil {
		if r, ok := x.store.find(h); ok {
			return r, true
		}
	}
	if r, ok := x.recent.findOrAdd(h, row); ok {
		return r, true
	}
	if x.recent.n >= len(x.recent.slots)*3/4 {
		x.merge()
	}
	return row, false
}

// merge moves the recent ids into the store and sizes the recent table to
// a sixteenth of the store.
func (x *idIndex) merge() {
	if x.store == nil {
		x.store = newIDStore()
		// The store's memory is returned when the index is collected.
		runtime.AddCleanup(x, func(s *idStore) { s.free() }, x.store)
	}
	add := x.recent.slots
	n := 0
	for _, sl := range add {
		if sl.hash() != 0 {
			add[n] = sl
			n++
		}
	}
	add = add[:n]
	slices.SortFunc(add, func(a, b recentSlot) int { return cmp.Compare(a.hash(), b.hash()) })
	for len(add) > 0 {
		s := add[0].hash() >> 56
		k := 1
		for k < len(add) && add[k].hash()>>56 == s {
			k++
		}
		x.store.shards[s].merge(add[:k])
		add = add[k:]
	}
	x.store.n += n
	x.recent.reset(max(recentMin, x.store.n/16))
}

// offHeapBytes returns the memory of the store that lives outside the Go
// heap (0 where it is on the heap).
func (x *idIndex) offHeapBytes() int {
	if !offHeap || x.store == nil {
		return 0
	}
	n := 0
	for i := range x.store.shards {
		n += len(x.store.shards[i].data)
	}
	return n
}

// bytes returns the memory the index holds, for tests and benchmarks.
func (x *idIndex) bytes() int {
	n := len(x.recent.slots) * int(unsafe.Sizeof(recentSlot{}))
	if x.store != nil {
		n += int(unsafe.Sizeof(*x.store))
		for i := range x.store.shards {
			n += len(x.store.shards[i].data)
		}
	}
	return n
}

// recentTable is open addressing with linear probing over 12-byte slots.
type recentTable struct {
	slots []recentSlot
	n     int
}

// recentSlot holds a hash, split in two halves to keep the slot at 12
// bytes, and the row it was first seen on. A zero hash marks an empty slot.
type recentSlot struct {
	lo, hi, row uint32
}

func (s recentSlot) hash() uint64 { return uint64(s.hi)<<32 | uint64(s.lo) }

func (t *recentTable) reset(size int) {
	if len(t.slots) == size {
		clear(t.slots)
	} else {
		t.slots = make([]recentSlot, size)
	}
	t.n = 0
}

// findOrAdd returns the row of h when the table holds it, or adds h with
// row. The caller keeps the table below full.
func (t *recentTable) findOrAdd(h uint64, row uint32) (uint32, bool) {
	// The low 32 bits scaled to the table size: sizes need not be powers
	// of two.
	i := (h & (1<<32 - 1)) * uint64(len(t.slots)) >> 32
	for {
		switch sl := t.slots[i]; sl.hash() {
		case h:
			return sl.row, true
		case 0:
			t.slots[i] = recentSlot{lo: uint32(h), hi: uint32(h >> 32), row: row}
			t.n++
			return 0, false
		}
		if i++; i == uint64(len(t.slots)) {
			i = 0
		}
	}
}

// idStore is the merged ids, in 256 shards by the hash's top byte.
type idStore struct {
	shards [256]idShard
	n      int
}

func newIDStore() *idStore { return new(idStore) }

// free returns the shards' memory; the store is unusable after.
func (s *idStore) free() {
	for i := range s.shards {
		freeEntries(s.shards[i].data)
		s.shards[i].data = nil
	}
}

// idShard is one shard: entries sorted by the hash's bits 0-55, bucket b
// (bits 48-55) holding the entries dir[b] to dir[b+1]-1.
type idShard struct {
	data []byte // len is entries * entrySize; off the Go heap where possible
	dir  [257]uint32
}

func (s *idStore) find(h uint64) (uint32, bool) {
	sh := &s.shards[h>>56]
	b := (h >> 48) & 0xff
	lo, hi := int(sh.dir[b]), int(sh.dir[b+1])
	rem := h & remMask
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch r := sh.rem(mid); {
		case r < rem:
			lo = mid + 1
		case r > rem:
			hi = mid
		default:
			return sh.row(mid), true
		}
	}
	return 0, false
}

func (sh *idShard) rem(i int) uint64 {
	return binary.LittleEndian.Uint64(sh.data[i*entrySize:]) & remMask
}

func (sh *idShard) row(i int) uint32 {
	return binary.LittleEndian.Uint32(sh.data[i*entrySize+6:])
}

func (sh *idShard) put(i int, rem uint64, row uint32) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], rem)
	e := sh.data[i*entrySize : (i+1)*entrySize]
	copy(e, b[:6])
	binary.LittleEndian.PutUint32(e[6:], row)
}

// merge adds ids that the shard does not hold, sorted by hash. It works
// from the back: each new entry's place is found by binary search in its
// bucket, the old entries after it move up in one copy, so no entry needs a
// second copy of the shard.
func (sh *idShard) merge(add []recentSlot) {
	old := int(sh.dir[256])
	total := old + len(add)
	if need := total * entrySize; need > cap(sh.data) {
		// Start at 64 KiB and grow fourfold: the pages past len are not
		// touched until used, so spare capacity costs address space, not
		// memory, and few moves mean few unmaps, which are slow.
		nd := allocEntries(max(need, 4*cap(sh.data), 64<<10))[:len(sh.data)]
		copy(nd, sh.data)
		freeEntries(sh.data)
		sh.data = nd
	}
	sh.data = sh.data[:total*entrySize]
	var added [256]uint32 // new entries per bucket
	end := old            // old entries from end on have moved up already
	for j := len(add) - 1; j >= 0; j-- {
		h := add[j].hash()
		b := (h >> 48) & 0xff
		added[b]++
		rem := h & remMask
		// The first old entry of bucket b above rem: everything from it
		// to end moves up j+1 places.
		lo, hi := int(sh.dir[b]), min(int(sh.dir[b+1]), end)
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if sh.rem(mid) < rem {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		if lo < end {
			copy(sh.data[(lo+j+1)*entrySize:(end+j+1)*entrySize], sh.data[lo*entrySize:end*entrySize])
		}
		sh.put(lo+j, rem, add[j].row)
		end = lo
	}
	sum := uint32(0)
	for b := range 256 {
		sh.dir[b] += sum
		sum += added[b]
	}
	sh.dir[256] = uint32(total)
}
