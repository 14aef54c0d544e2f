package source

import (
	"bytes"
	"errors"
	"hash/maphash"
	"io"
	"testing"
)

func TestVerifyReader(t *testing.T) {
	orig := bytes.Repeat([]byte("0123456789abcdef"), 3*blockSize/16+100) // three blocks and a bit
	seed := maphash.MakeSeed()
	bh := newBlockHasher(seed)
	bh.write(orig[:1000])
	bh.write(orig[1000:])
	blocks := &Blocks{seed: seed, sums: bh.finish(), size: int64(len(orig))}
	changed := bytes.Clone(orig)
	changed[2*blockSize+5] = 'X'
	tests := []struct {
		name    string
		file    []byte
		want    []byte // what is read before the error
		wantErr bool
	}{
		{"same bytes", orig, orig, false},
		{"bytes appended are not read", append(bytes.Clone(orig), "more rows\n"...), orig, false},
		{"a byte changed in the third block", changed, orig[:2*blockSize], true},
		{"truncated in the second block", orig[:blockSize+10], orig[:blockSize], true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := newVerifyReader(bytes.NewReader(tc.file), "export.csv", blocks)
			got, err := io.ReadAll(v)
			if !bytes.Equal(got, tc.want) {
				t.Errorf("read %d bytes, want %d", len(got), len(tc.want))
			}
			if tc.wantErr != errors.Is(err, ErrInputChanged) {
				t.Errorf("ReadAll error = %v, want ErrInputChanged: %v", err, tc.wantErr)
			}
			if tc.wantErr {
				if _, again := v.Read(make([]byte, 10)); !errors.Is(again, ErrInputChanged) {
					t.Errorf("Read after the error = %v, want it again", again)
				}
			}
		})
	}
}
