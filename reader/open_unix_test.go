//go:build unix

package reader

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOpenFileFIFOStopsOnCancel checks that opening a named pipe nobody
// writes to returns when the context ends, whether it ended before the call
// or during the wait, and leaves no reader waiting in open on the pipe.
func TestOpenFileFIFOStopsOnCancel(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cancelAfter time.Duration // 0: cancelled before the call
	}{
		{"cancelled before", 0},
		{"cancelled while waiting", 50 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "in.csv")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancelAfter == 0 {
				cancel()
			} else {
				time.AfterFunc(tc.cancelAfter, cancel)
			}
			done := make(chan error, 1)
			go func() {
				f, err := OpenFile(ctx, fifo)
				if f != nil {
					f.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("OpenFile(fifo without writer) = %v, want context.Canceled", err)
				}
			case <-time.After(30 * time.Second): // a hang detector, not a speed limit
				t.Fatal("OpenFile(fifo without writer) did not return after its context ended")
			}
			// No reader is left in open: a writer's non-blocking open finds
			// nobody (ENXIO).
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); !errors.Is(err, syscall.ENXIO) {
				if w != nil {
					w.Close()
				}
				t.Errorf("after OpenFile returned, a writer's open = %v, want ENXIO (a reader is still waiting)", err)
			}
		})
	}
}

// TestOpenFileFIFOWithWriter checks that a named pipe opens and reads once
// a writer comes.
func TestOpenFileFIFOWithWriter(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "in.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.WriteString("fname\nAnn\n")
		w.Close()
	}()
	f, err := OpenFile(context.Background(), fifo)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil || string(b) != "fname\nAnn\n" {
		t.Errorf("read fifo = %q, %v; want the writer's text", b, err)
	}
}
