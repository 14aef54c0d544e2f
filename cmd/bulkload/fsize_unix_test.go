//go:build unix

package main

import "syscall"

// limitFileSize makes every write of this process beyond n bytes of a file
// fail with EFBIG, as on a full disk (the Go runtime ignores SIGXFSZ).
func limitFileSize(n uint64) error {
	return syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n})
}
