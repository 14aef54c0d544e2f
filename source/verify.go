package source

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
)

// blockSize is the span of the input one block hash covers. An upload's
// send pass hands the reader no byte of a block before the whole block
// hashes as it did in the check pass.
const blockSize = 256 << 10

// ErrInputChanged is wrapped by the error of a send pass whose input is
// not the file the check pass read: replaced, truncated or rewritten
// since.
var ErrInputChanged = errors.New("the input changed during the run")

// Blocks is an input file's identity as a check pass (ScanInput) read it:
// the file itself (for os.SameFile), how many bytes were read, and a 64-bit
// hash (hash/maphash, seeded once per pass: both passes run in one process)
// of each blockSize span of them. maphash is no cryptographic hash; it
// catches a file rewritten or truncated by accident, not by an adversary
// who can write the input anyway.
type Blocks struct {
	file os.FileInfo
	seed maphash.Seed
	sums []uint64
	size int64
}

// Size is how many bytes the check pass read.
func (b *Blocks) Size() int64 { return b.size }

// blockHasher hashes what is written to it, block by block.
type blockHasher struct {
	h    maphash.Hash
	n    int // bytes of the current block so far
	sums []uint64
}

func newBlockHasher(seed maphash.Seed) *blockHasher {
	b := &blockHasher{}
	b.h.SetSeed(seed)
	return b
}

func (b *blockHasher) write(p []byte) {
	for len(p) > 0 {
		k := min(len(p), blockSize-b.n)
		b.h.Write(p[:k])
		b.n += k
		p = p[k:]
		if b.n == blockSize {
			b.sums = append(b.sums, b.h.Sum64())
			b.h.Reset()
			b.n = 0
		}
	}
}

// finish returns the sums, the last block's included.
func (b *blockHasher) finish() []uint64 {
	if b.n > 0 {
		b.sums = append(b.sums, b.h.Sum64())
		b.h.Reset()
		b.n = 0
	}
	return b.sums
}

// verifyReader reads an input file for a send pass: it reads a block
// whole, checks its hash against the check pass's, and only then hands its
// bytes on, so that no byte the check did not read reaches the reader.
// After the check pass's last byte it returns io.EOF (rows appended since
// wait for the next run). A block that differs, or a file that ends early,
// is an error wrapping ErrInputChanged that names the input, and every
// later Read returns it too.
type verifyReader struct {
	f       io.Reader
	name    string
	b       *Blocks
	h       maphash.Hash
	buf     []byte
	pending []byte
	off     int64 // bytes checked so far
	idx     int   // the next block
	err     error
}

func newVerifyReader(f io.Reader, name string, b *Blocks) *verifyReader {
	v := &verifyReader{f: f, name: name, b: b, buf: make([]byte, blockSize)}
	v.h.SetSeed(b.seed)
	return v
}

// Read hands on checked bytes.
func (v *verifyReader) Read(p []byte) (int, error) {
	if len(v.pending) == 0 {
		if v.err != nil {
			return 0, v.err
		}
		if v.off >= v.b.size {
			return 0, io.EOF
		}
		want := int(min(blockSize, v.b.size-v.off))
		n, err := io.ReadFull(v.f, v.buf[:want])
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			v.err = fmt.Errorf("%w: %s ends at byte %d, but the check before the first call read %d bytes (truncated?); the rows after it were not sent", ErrInputChanged, v.name, v.off+int64(n), v.b.size)
			return 0, v.err
		case err != nil:
			return 0, err
		}
		v.h.Reset()
		v.h.Write(v.buf[:want])
		if v.idx >= len(v.b.sums) || v.h.Sum64() != v.b.sums[v.idx] {
			v.err = fmt.Errorf("%w: bytes %d to %d of %s differ from what the check before the first call read (rewritten or replaced in place?); the rows from there on were not sent", ErrInputChanged, v.off, v.off+int64(want), v.name)
			return 0, v.err
		}
		v.pending = v.buf[:want]
		v.off += int64(want)
		v.idx++
	}
	n := copy(p, v.pending)
	v.pending = v.pending[n:]
	return n, nil
}

// sameFile checks, when a send pass opens its input, that it is the file
// the check pass read and no shorter.
func (b *Blocks) sameFile(name string, st os.FileInfo) error {
	if b.file != nil && !os.SameFile(b.file, st) {
		return fmt.Errorf("%w: %s is another file than the one the check before the first call read (replaced?); nothing more is sent", ErrInputChanged, name)
	}
	if st.Size() < b.size {
		return fmt.Errorf("%w: %s holds %d bytes, but the check before the first call read %d (truncated?); nothing more is sent", ErrInputChanged, name, st.Size(), b.size)
	}
	return nil
}
