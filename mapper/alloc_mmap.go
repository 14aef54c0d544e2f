//go:build linux || darwin || freebsd || netbsd || openbsd

package mapper

import (
	"os"
	"syscall"
)

// offHeap says allocEntries maps memory outside the Go heap.
const offHeap = true

// allocEntries returns at least n zeroed bytes outside the Go heap (an
// anonymous private mapping): the duplicate index's store, which the
// collector need not scan nor budget for. Pages are backed only once
// written. freeEntries returns them.
func allocEntries(n int) []byte {
	page := os.Getpagesize()
	size := (n + page - 1) / page * page
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		// Out of address space: the heap is the fallback; memory is
		// memory either way.
		return make([]byte, 0, size)
	}
	return b[:0]
}

// freeEntries returns memory from allocEntries; nil is a no-op. Memory the
// fallback took from the heap is left to the collector.
func freeEntries(b []byte) {
	if cap(b) == 0 {
		return
	}
	_ = syscall.Munmap(b[:cap(b)]) // fails (EINVAL) only for heap memory: the collector's
}
