//go:build !unix

package main

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
