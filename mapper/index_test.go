package mapper

import (
	"strconv"
	"testing"
)

func TestIDIndex(t *testing.T) {
	x := newIDIndex()
	const n = 100000
	for i := 1; i <= n; i++ {
		if first, dup := x.firstRow("L-"+strconv.Itoa(i), uint32(i)); dup || first != uint32(i) {
			t.Fatalf("firstRow(new id %d) = %d, %v, want %d, false", i, first, dup, i)
		}
	}
	for i := 1; i <= n; i += 7 {
		if first, dup := x.firstRow("L-"+strconv.Itoa(i), uint32(n+i)); !dup || first != uint32(i) {
			t.Fatalf("firstRow(seen id %d) = %d, %v, want %d, true", i, first, dup, i)
		}
	}
	if got := x.shards[0].n + x.shards[1].n; got == 0 {
		t.Errorf("shards 0 and 1 are empty: the ids are not spread")
	}
	total := 0
	for i := range x.shards {
		total += x.shards[i].n
	}
	if total != n {
		t.Errorf("index holds %d ids, want %d", total, n)
	}
	// Each shard is grown when 4/5 full, by half: it stays over 8/15 full,
	// so a distinct id costs at most 12 / (8/15) = 22.5 bytes.
	if perID := float64(x.bytes()) / n; perID > 22.5 {
		t.Errorf("index takes %.1f bytes an id, want at most 22.5", perID)
	}
}

func TestIDIndexSeedsDiffer(t *testing.T) {
	a, b := newIDIndex(), newIDIndex()
	same := 0
	for i := 0; i < 64; i++ {
		a.firstRow(strconv.Itoa(i), 1)
		b.firstRow(strconv.Itoa(i), 1)
	}
	for i := range a.shards {
		if (a.shards[i].n == 0) == (b.shards[i].n == 0) {
			same++
		}
	}
	if same == idShards {
		t.Errorf("two indexes spread 64 ids over the same shards: seeds are not random")
	}
}
