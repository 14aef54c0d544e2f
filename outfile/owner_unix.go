//go:build unix

package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }

// owned refuses what is not a regular file of the running user's.
func owned(path string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: %w: it is %s", path, ErrNotOwned, kind(st.Mode()))
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("%s: %w: it belongs to user id %d (this run is %d); remove it or choose another path", path, ErrNotOwned, sys.Uid, os.Geteuid())
	}
	return nil
}

// links is the number of names st's file has.
func links(st fs.FileInfo) uint64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Nlink)
	}
	return 1
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file"
}
