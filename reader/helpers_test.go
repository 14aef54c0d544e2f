package reader

import (
	"fmt"
	"io"
	"os"
)

// openInput opens the named input for a test; "-" reads stdin. Production
// opens its input with OpenFile (or reads standard input) and hands the
// stream to NewReader; this is the same for the tests' files. Closing the
// Reader closes the file (never stdin).
func openInput(name string, stdin io.Reader, opts Options) (*Reader, error) {
	if name == "-" {
		return NewReader(stdin, name, opts)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("open input: %w", err)
	}
	r, err := NewReader(f, name, opts)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	r.closers = append(r.closers, f)
	return r, nil
}
