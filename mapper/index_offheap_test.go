//go:build linux || darwin || freebsd || netbsd || openbsd

package mapper

import (
	"runtime"
	"strconv"
	"testing"
)

// TestIDIndexOffHeap checks the store lives outside the Go heap, where the
// collector's headroom (GOGC) does not multiply it: 300,000 ids leave the
// heap about as large as the recent table.
func TestIDIndexOffHeap(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := newIDIndex()
	ids := make([]byte, 0, 16)
	for i := range 300_000 {
		ids = strconv.AppendInt(ids[:0], int64(i), 10)
		x.firstRow(x.key(string(ids)), uint32(i+1))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if total := x.bytes(); heap > int64(total)/4 {
		t.Errorf("the heap grew %d bytes for an index of %d bytes, want the store off the heap", heap, total)
	}
	runtime.KeepAlive(x)
}
