package mapper

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestIDIndexAgainstMap registers ids in a random order with repeats, many
// merges deep, and checks every answer against a Go map.
func TestIDIndexAgainstMap(t *testing.T) {
	x := newIDIndex()
	truth := map[string]uint32{}
	r := rand.New(rand.NewPCG(1, 2))
	const rows = 200_000
	for row := uint32(1); row <= rows; row++ {
		// About one row in five repeats an id seen before.
		id := "L-" + strconv.Itoa(r.IntN(rows))
		first, dup := x.firstRow(id, row)
		want, seen := truth[id]
		if !seen {
			truth[id] = row
			want = row
		}
		if first != want || dup != seen {
			t.Fatalf("row %d: firstRow(%q) = %d, %v, want %d, %v", row, id, first, dup, want, seen)
		}
	}
	if x.store == nil || x.store.n == 0 {
		t.Fatalf("no merge happened in %d rows: the store is untested", rows)
	}
	// Every id again, now that most are in the store.
	for id, want := range truth {
		if first, dup := x.firstRow(id, rows+1); !dup || first != want {
			t.Fatalf("firstRow(%q) again = %d, %v, want %d, true", id, first, dup, want)
		}
	}
}

// TestIDIndexBytesPerID is the memory aim: the index grows at most 12 bytes
// for each new leadId (it holds 10 for each in the store, plus the recent
// table at a sixteenth of them).
func TestIDIndexBytesPerID(t *testing.T) {
	x := newIDIndex()
	add := func(from, to int) {
		for i := from; i < to; i++ {
			x.firstRow("GEN-"+strconv.Itoa(i), uint32(i))
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
	a.firstRow("L-1", 1)
	b.firstRow("L-1", 1)
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
		x.firstRow(id, uint32(i+1))
	}
	b.ReportMetric(float64(x.bytes())/float64(b.N), "B/id")
}
