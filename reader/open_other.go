//go:build !unix

package reader

import (
	"context"
	"os"
)

// OpenFile opens the named input file for reading. Named pipes that wait
// for a writer in open are a Unix matter; here it is os.Open, and ctx is
// only checked before.
func OpenFile(ctx context.Context, name string) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return os.Open(name)
}
