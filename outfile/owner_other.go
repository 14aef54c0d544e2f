//go:build !unix

package outfile

import (
	"fmt"
	"io/fs"
	"os"
)

func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: it is not a regular file", ErrNotOwned)
	}
	return os.OpenFile(path, flag, perm)
}

func isLoop(error) bool { return false }

func owned(path string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: %w", path, ErrNotOwned)
	}
	return nil
}

func links(fs.FileInfo) uint64 { return 1 }
