//go:build unix

package app

import (
	"os"
	"syscall"
)

// openNoWait opens path for reading without waiting for a FIFO's writer
// (O_NONBLOCK; it does nothing to a regular file's reads).
func openNoWait(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
