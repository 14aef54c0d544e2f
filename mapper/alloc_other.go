//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package mapper

// offHeap says allocEntries maps memory outside the Go heap.
const offHeap = false

// allocEntries returns at least n bytes from the Go heap, on platforms
// where this package maps no memory of its own.
func allocEntries(n int) []byte { return make([]byte, 0, n) }

// freeEntries leaves b to the collector.
func freeEntries([]byte) {}
