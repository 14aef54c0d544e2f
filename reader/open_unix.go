//go:build unix

package reader

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// OpenFile opens the named input file for reading. Opening a named pipe
// (FIFO) blocks until a writer opens it, which may be never: OpenFile waits
// for that in a goroutine, so that the end of ctx stops the wait and its
// error is returned. To release the open it gave up on, it opens the pipe
// for writing itself, for a moment, and closes what the open returns; no
// goroutine is left behind unless the pipe cannot be opened for writing
// (then the waiting goroutine ends, and closes its file, when a writer
// comes or the process exits). The caller closes the file.
func OpenFile(ctx context.Context, name string) (*os.File, error) {
	if fi, err := os.Stat(name); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		return os.Open(name) // a regular file's open does not wait
	}
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened)
	abandon := make(chan struct{})
	go func() {
		f, err := os.Open(name)
		select {
		case done <- opened{f, err}:
		case <-abandon:
			if f != nil {
				f.Close()
			}
		}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
	}
	// The goroutine may not have reached open(2) yet, and a writer's
	// non-blocking open fails with ENXIO until it has: try again a few
	// times before giving up on releasing it.
	for range 100 {
		w, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			w.Close()
			if o := <-done; o.f != nil {
				o.f.Close()
			}
			return nil, ctx.Err()
		}
		if !errors.Is(err, syscall.ENXIO) {
			break
		}
		select {
		case o := <-done:
			if o.f != nil {
				o.f.Close()
			}
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	close(abandon)
	return nil, ctx.Err()
}
