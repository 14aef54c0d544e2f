//go:build !unix

package app

import (
	"fmt"
	"os"
)

// openNoWait opens path for reading, refusing what is not a regular file
// before the open.
func openNoWait(path string) (*os.File, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return os.Open(path)
}

// OwnerOf returns an unknown owner: the platform has no unix owners.
func OwnerOf(os.FileInfo) FileOwner { return FileOwner{} }

// ProcessIdentity is unknown on this platform.
func ProcessIdentity() Identity { return Identity{} }
