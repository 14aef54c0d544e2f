package mapper

import (
	"encoding/binary"
	"hash/maphash"
	"runtime"
	"unsafe"
)

// The duplicate-leadId index remembers, for each distinct leadId, a 64-bit
// keyed hash of it and the row it was first seen on, in about 9.4 bytes a
// leadId however many there are up to 16.7M rows, 10.4 beyond (the old
// open-addressed table took 15 to 23 and, being on the Go heap, was doubled
// again by the collector's headroom).
//
// Two parts:
//   - recent: an open-addressed table of the ids added since the last merge,
//     12 bytes a slot (the whole hash and the row), sized to a 32nd of
//     the merged ids and merged into the store when three quarters full;
//   - store: 256 shards by the hash's top 8 bits, each a sorted array of
//     entries (the hash's low 48 bits and the row) with a directory of 256
//     buckets by the next 8 bits. Those 16 bits are implied by where an
//     entry sits, so 6 bytes keep the whole 64-bit hash. The row takes 3
//     bytes while every row number fits (below 2^24), and the store widens
//     to 4 the first time one does not: 9-byte entries, 10 beyond. Merging
//     sorts the recent ids and merges them into each shard from the back, in
//     place. A lookup guesses an entry's place in its bucket from its hash
//     (the hashes are uniform) and steps from there: one or two cache lines
//     where a binary search took four or more.
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
	recent *recentTable // its own object, for its cleanup
	store  *idStore     // nil until the first merge
	sink   uint32       // what prefetch read, unused
}

const (
	// recentMin is the smallest recent table, in slots.
	recentMin = 1024
	// hashBytes is the hash an entry keeps; the row's bytes follow.
	hashBytes = 6
	// recentShare is the recent table's size as a share of the store: 1/32.
	recentShare = 32
	// remMask keeps the hash bits an entry stores.
	remMask = 1<<48 - 1
)

func newIDIndex() *idIndex {
	x := &idIndex{seed: maphash.MakeSeed(), recent: new(recentTable)}
	x.recent.reset(recentMin)
	// The recent table's memory, outside the Go heap too, is returned when
	// the index is collected.
	runtime.AddCleanup(x, func(t *recentTable) { t.free() }, x.recent)
	return x
}

// key returns id's 64-bit keyed hash, which stands for id in the index:
// never 0, which marks an empty slot of the recent table. It reads only
// the seed, so any goroutine may call it.
func (x *idIndex) key(id string) IDKey {
	return IDKey(max(maphash.String(x.seed, id), 1))
}

// prefetch reads, for each key, the first memory a lookup of it will read:
// its slot of the recent table and the store entry its bucket's
// interpolation guesses. These loads do not depend on one another, so the
// processor has many of their cache misses in flight at once, where
// lookups made one after another wait for each miss in turn (the store is
// tens of MiB, far beyond the caches). A lookup right after finds its
// memory in cache. It changes nothing the lookups see.
func (x *idIndex) prefetch(keys []IDKey) {
	var sum uint32
	for _, k := range keys {
		h := uint64(k)
		if h == 0 {
			continue
		}
		sum += x.recent.slots[x.recent.home(h)].lo
		if x.store == nil {
			continue
		}
		sh, lo, hi, rem := x.store.bucket(h)
		if i := guess(lo, hi, rem); i < hi {
			sum += uint32(sh.data[i*sh.size])
		}
	}
	x.sink += sum // a result kept, so the compiler keeps the loads
}

// firstRow returns the row that first had the id whose key is h, after
// registering row for it when it is new (then first is row and dup false).
func (x *idIndex) firstRow(k IDKey, row uint32) (first uint32, dup bool) {
	h := uint64(k)
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
// a 32nd of the store.
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
	if x.store.rowBytes < 4 {
		for _, sl := range add {
			if sl.row >= 1<<24 {
				x.store.widen(4) // a row number past 3 bytes
				break
			}
		}
	}
	sortSlots(add, 56)
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
	x.recent.reset(max(recentMin, x.store.n/recentShare))
}

// sortSlots sorts slots by hash, whose bits above shift+8 they share: an
// in-place radix sort on the byte at shift (American flag sort), then each
// run of one byte value by the next byte down; runs of 16 or fewer are
// insertion-sorted. The hashes are uniform, so two passes leave runs of a
// few slots at most: a fraction of a comparison sort's cost on the
// hundreds of thousands of slots a merge sorts.
func sortSlots(a []recentSlot, shift uint) {
	if len(a) <= 16 {
		for i := 1; i < len(a); i++ {
			for j := i; j > 0 && a[j].hash() < a[j-1].hash(); j-- {
				a[j], a[j-1] = a[j-1], a[j]
			}
		}
		return
	}
	digit := func(sl recentSlot) int { return int(sl.hash() >> shift & 0xff) }
	var start, next [257]int
	for _, sl := range a {
		start[digit(sl)+1]++
	}
	for d := range 256 {
		start[d+1] += start[d]
	}
	next = start
	for d := range 256 {
		for next[d] < start[d+1] {
			v := a[next[d]]
			for k := digit(v); k != d; k = digit(v) {
				a[next[k]], v = v, a[next[k]]
				next[k]++
			}
			a[next[d]] = v
			next[d]++
		}
	}
	if shift == 0 {
		return
	}
	for d := range 256 {
		sortSlots(a[start[d]:start[d+1]], shift-8)
	}
}

// offHeapBytes returns the memory of the index that lives outside the Go
// heap (0 where it is on the heap).
func (x *idIndex) offHeapBytes() int {
	if !offHeap {
		return 0
	}
	n := cap(x.recent.mem)
	if x.store == nil {
		return n
	}
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

// recentTable is open addressing with linear probing over 12-byte slots,
// in memory from allocEntries (outside the Go heap where the platform
// allows: the table is rebuilt at every merge, and on the heap its old
// copies were garbage of a few MiB each that the collector had to make room
// for).
type recentTable struct {
	slots []recentSlot // over mem
	mem   []byte
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
		t.free()
		t.mem = allocEntries(size * int(unsafe.Sizeof(recentSlot{})))
		t.mem = t.mem[:cap(t.mem)] // zeroed
		t.slots = unsafe.Slice((*recentSlot)(unsafe.Pointer(unsafe.SliceData(t.mem))), size)
	}
	t.n = 0
}

// free returns the table's memory; reset makes it usable again.
func (t *recentTable) free() {
	freeEntries(t.mem)
	t.mem, t.slots = nil, nil
}

// findOrAdd returns the row of h when the table holds it, or adds h with
// row. The caller keeps the table below full.
func (t *recentTable) findOrAdd(h uint64, row uint32) (uint32, bool) {
	i := t.home(h)
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

// home is the slot where a probe for h starts: the low 32 bits scaled to
// the table size (sizes need not be powers of two).
func (t *recentTable) home(h uint64) uint64 {
	return (h & (1<<32 - 1)) * uint64(len(t.slots)) >> 32
}

// idStore is the merged ids, in 256 shards by the hash's top byte.
type idStore struct {
	shards   [256]idShard
	n        int
	rowBytes int // 3 or 4: the bytes of an entry's row
}

func newIDStore() *idStore {
	s := &idStore{rowBytes: 3}
	for i := range s.shards {
		s.shards[i].size = hashBytes + s.rowBytes
	}
	return s
}

// widen re-encodes every entry with rowBytes bytes of row, a shard at a
// time (the memory of one shard twice at most).
func (s *idStore) widen(rowBytes int) {
	for i := range s.shards {
		sh := &s.shards[i]
		n, size := int(sh.dir[256]), hashBytes+rowBytes
		nd := allocEntries(max(n*size, 64<<10))[:n*size]
		for k := range n {
			copy(nd[k*size:], sh.data[k*sh.size:k*sh.size+hashBytes])
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], sh.row(k))
			copy(nd[k*size+hashBytes:(k+1)*size], b[:])
		}
		freeEntries(sh.data)
		sh.data, sh.size = nd, size
	}
	s.rowBytes = rowBytes
}

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
	data []byte // len is entries * size; off the Go heap where possible
	dir  [257]uint32
	size int // bytes an entry: hashBytes and the store's rowBytes
}

// bucket returns the shard and the bucket (entries lo to hi-1) where h
// belongs, and the hash bits an entry of it keeps.
func (s *idStore) bucket(h uint64) (sh *idShard, lo, hi int, rem uint64) {
	sh = &s.shards[h>>56]
	b := (h >> 48) & 0xff
	return sh, int(sh.dir[b]), int(sh.dir[b+1]), h & remMask
}

func (s *idStore) find(h uint64) (uint32, bool) {
	sh, lo, hi, rem := s.bucket(h)
	i := sh.search(lo, hi, hi, rem)
	if i < hi && sh.rem(i) == rem {
		return sh.row(i), true
	}
	return 0, false
}

// search returns the first entry from lo to end-1 whose hash bits are not
// below rem, or end. The entries from lo to hi-1 are a bucket (end <= hi),
// uniformly spread over the 48 bits: search starts where rem would sit in
// it and steps from there.
func (sh *idShard) search(lo, hi, end int, rem uint64) int {
	i := min(guess(lo, hi, rem), end)
	for i > lo && sh.rem(i-1) >= rem {
		i--
	}
	for i < end && sh.rem(i) < rem {
		i++
	}
	return i
}

// guess is where an entry with hash bits rem would sit in the bucket of
// entries lo to hi-1 if their hashes were spread evenly, as they nearly
// are: rem's top 32 of the 48 bits scaled to the bucket.
func guess(lo, hi int, rem uint64) int {
	return lo + int((rem>>16)*uint64(hi-lo)>>32)
}

func (sh *idShard) rem(i int) uint64 {
	// 8 bytes from the entry's start stay inside it: entries are 9 or 10.
	return binary.LittleEndian.Uint64(sh.data[i*sh.size:]) & remMask
}

func (sh *idShard) row(i int) uint32 {
	e := sh.data[i*sh.size+hashBytes : (i+1)*sh.size]
	if len(e) == 3 {
		return uint32(e[0]) | uint32(e[1])<<8 | uint32(e[2])<<16
	}
	return binary.LittleEndian.Uint32(e)
}

func (sh *idShard) put(i int, rem uint64, row uint32) {
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:], rem)
	binary.LittleEndian.PutUint32(b[hashBytes:], row)
	copy(sh.data[i*sh.size:(i+1)*sh.size], b[:sh.size])
}

// merge adds ids that the shard does not hold, sorted by hash. It works
// from the back: each new entry's place is found by binary search in its
// bucket, the old entries after it move up in one copy, so no entry needs a
// second copy of the shard.
func (sh *idShard) merge(add []recentSlot) {
	old := int(sh.dir[256])
	total := old + len(add)
	size := sh.size
	if need := total * size; need > cap(sh.data) {
		// Start at 64 KiB and grow fourfold: the pages past len are not
		// touched until used, so spare capacity costs address space, not
		// memory, and few moves mean few unmaps, which are slow.
		nd := allocEntries(max(need, 4*cap(sh.data), 64<<10))[:len(sh.data)]
		copy(nd, sh.data)
		freeEntries(sh.data)
		sh.data = nd
	}
	sh.data = sh.data[:total*size]
	var added [256]uint32 // new entries per bucket
	end := old            // old entries from end on have moved up already
	for j := len(add) - 1; j >= 0; j-- {
		h := add[j].hash()
		b := (h >> 48) & 0xff
		added[b]++
		rem := h & remMask
		// The first old entry of bucket b above rem: everything from it
		// to end moves up j+1 places.
		lo := sh.search(int(sh.dir[b]), int(sh.dir[b+1]), max(int(sh.dir[b]), min(int(sh.dir[b+1]), end)), rem)
		if lo < end {
			copy(sh.data[(lo+j+1)*size:(end+j+1)*size], sh.data[lo*size:end*size])
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
