package mapper

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestIDIndexAgainstMap registers ids in a random order with repeats, many
// merges deep, and checks every answer against a Go map.
func TestIDIndexAgainstMap(t *testing.T) {
	x := newIDIndex()
	const rows = 200_000
	checkAgainstMap(t, x, rand.New(rand.NewPCG(1, 2)), 1, rows)
	if x.store == nil || x.store.n == 0 {
		t.Fatalf("no merge happened in %d rows: the store is untested", rows)
	}
}

// checkAgainstMap registers rows from to from+n-1 in x, each with one of n
// ids drawn from r (about one row in five repeats an id seen before), and
// checks every answer against a Go map; then asks for every id again, now
// that most are in the store. Each lookup follows a prefetch (as the
// checking goroutine's batches do) of its key, the zero key and the
// largest key, whose place is the last of the last bucket: it must change
// no answer.
func checkAgainstMap(t *testing.T, x *idIndex, r *rand.Rand, from, n uint32) {
	t.Helper()
	truth := map[string]uint32{}
	for row := from; row < from+n; row++ {
		id := "L-" + strconv.Itoa(r.IntN(int(n)))
		k := x.key(id)
		x.prefetch([]IDKey{k, 0, 1<<64 - 1})
		first, dup := x.firstRow(k, row)
		want, seen := truth[id]
		if !seen {
			truth[id] = row
			want = row
		}
		if first != want || dup != seen {
			t.Fatalf("row %d: firstRow(%q) = %d, %v, want %d, %v", row, id, first, dup, want, seen)
		}
	}
	for id, want := range truth {
		if first, dup := x.firstRow(x.key(id), from+n); !dup || first != want {
			t.Fatalf("firstRow(%q) again = %d, %v, want %d, true", id, first, dup, want)
		}
	}
}

// TestIDIndexBytesPerID is the memory aim: the index grows at most 12 bytes
// for each new leadId (it holds 9 for each in the store, 10 past row 2^24,
// plus the recent table at a 32nd of them).
func TestIDIndexBytesPerID(t *testing.T) {
	x := newIDIndex()
	add := func(from, to int) {
		for i := from; i < to; i++ {
			x.firstRow(x.key("GEN-"+strconv.Itoa(i)), uint32(i))
		}
	}
	const n = 200_000
	add(0, n)
	before := x.bytes()
	add(n, 2*n)
	if perID := float64(x.bytes()-before) / n; perID > 12 {
		t.Errorf("the index grew %.1f bytes a leadId from %d to %d ids, want at most 12", perID, n, 2*n)
	}
	if perID := float64(x.bytes()) / (2 * n); perID > 12 {
		t.Errorf("the index holds %.1f bytes a leadId at %d ids, want at most 12", perID, 2*n)
	}
}

func TestIDIndexSeedsDiffer(t *testing.T) {
	a, b := newIDIndex(), newIDIndex()
	a.firstRow(a.key("L-1"), 1)
	b.firstRow(b.key("L-1"), 1)
	var ha, hb uint64
	for _, sl := range a.recent.slots {
		ha |= sl.hash()
	}
	for _, sl := range b.recent.slots {
		hb |= sl.hash()
	}
	if ha == hb {
		t.Errorf("two indexes hash the same id to %#x: seeds are not random", ha)
	}
}

// BenchmarkIDIndex registers b.N new ids, the common case (every lookup
// misses): ns/op is the index's cost per row, B/id its memory per id.
func BenchmarkIDIndex(b *testing.B) {
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = "GEN-" + strconv.Itoa(i)
	}
	x := newIDIndex()
	b.ResetTimer()
	for i, id := range ids {
		x.firstRow(x.key(id), uint32(i+1))
	}
	b.ReportMetric(float64(x.bytes())/float64(b.N), "B/id")
}

// BenchmarkIDIndexBatches registers b.N new ids as the source's checking
// goroutine does, in batches of 128 keys hashed beforehand, with and
// without PrefetchIDs before each batch: run with -benchtime 5000000x for
// an index of a 5M-row file, far beyond the caches.
func BenchmarkIDIndexBatches(b *testing.B) {
	for _, prefetch := range []bool{false, true} {
		b.Run("prefetch="+strconv.FormatBool(prefetch), func(b *testing.B) {
			m := newTestMapper(nil)
			keys := make([]IDKey, b.N)
			for i := range keys {
				keys[i] = m.IDKey("GEN-" + strconv.Itoa(i))
			}
			b.ResetTimer()
			for at := 0; at < len(keys); at += 128 {
				batch := keys[at:min(at+128, len(keys))]
				if prefetch {
					m.PrefetchIDs(batch)
				}
				for i, k := range batch {
					if m.CheckDuplicate(at+i+1, k, "", nil) != nil {
						b.Fatalf("row %d: a new id taken for a duplicate", at+i+1)
					}
				}
			}
		})
	}
}

// TestSortSlots checks the merge's radix sort against a comparison sort,
// on sizes around its insertion-sort cut and on hashes that share their
// top bytes (the recursion's deeper levels).
func TestSortSlots(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 15, 16, 17, 100, 5000, 70000} {
		for _, mask := range []uint64{^uint64(0), 0x0000_ffff_ffff_ffff, 0xff, 0x3} {
			a := make([]recentSlot, n)
			for i := range a {
				h := r.Uint64() & mask
				a[i] = recentSlot{lo: uint32(h), hi: uint32(h >> 32), row: uint32(i)}
			}
			want := slices.Clone(a)
			slices.SortStableFunc(want, func(x, y recentSlot) int { return cmp.Compare(x.hash(), y.hash()) })
			sortSlots(a, 56)
			for i := range a {
				if a[i].hash() != want[i].hash() {
					t.Fatalf("n=%d mask=%#x: slot %d has hash %#x, want %#x", n, mask, i, a[i].hash(), want[i].hash())
				}
			}
		}
	}
}

// TestIDIndexRowsPastThreeBytes crosses row 2^24, where the store's
// entries widen from 9 to 10 bytes, with repeats on both sides, and checks
// every answer against a Go map.
func TestIDIndexRowsPastThreeBytes(t *testing.T) {
	x := newIDIndex()
	checkAgainstMap(t, x, rand.New(rand.NewPCG(5, 6)), 1<<24-60_000, 120_000)
	if x.store == nil || x.store.rowBytes != 4 {
		t.Fatalf("the store did not widen past row %d", 1<<24)
	}
}
