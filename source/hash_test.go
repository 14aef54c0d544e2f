package source

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// FuzzHashWriter: however the input arrives in pieces, the hashWriter's
// whole hash, its prefix hash at at and its check hash at checkAt are the
// SHA-256 of the first bytes they name.
func FuzzHashWriter(f *testing.F) {
	f.Add([]byte("row,leadId\n1,A\n2,B\n"), int64(4), int64(11), uint8(3))
	f.Add([]byte("x"), int64(1), int64(1), uint8(1))
	f.Add([]byte(""), int64(0), int64(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, at, checkAt int64, piece uint8) {
		w := &hashWriter{h: sha256.New(), at: at, checkAt: checkAt}
		var checked []byte
		calls := 0
		w.onCheck = func(sum []byte) { checked, calls = sum, calls+1 }
		step := int(piece%17) + 1
		for i := 0; i < len(data); i += step {
			n, err := w.Write(data[i:min(i+step, len(data))])
			if err != nil || n != min(step, len(data)-i) {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
		if got := hex.EncodeToString(w.h.Sum(nil)); got != sum(data) || w.n != int64(len(data)) {
			t.Fatalf("hash of %d bytes = %s after %d, want %s", len(data), got, w.n, sum(data))
		}
		switch {
		case at > 0 && at <= int64(len(data)):
			if got := hex.EncodeToString(w.prefix); got != sum(data[:at]) {
				t.Fatalf("prefix at %d = %s, want %s", at, got, sum(data[:at]))
			}
		case w.prefix != nil:
			t.Fatalf("prefix at %d of %d bytes is set", at, len(data))
		}
		switch {
		case checkAt > 0 && checkAt <= int64(len(data)):
			if calls != 1 || hex.EncodeToString(checked) != sum(data[:checkAt]) {
				t.Fatalf("check at %d: %d calls, %x, want one with %s", checkAt, calls, checked, sum(data[:checkAt]))
			}
		case calls != 0:
			t.Fatalf("check at %d of %d bytes was called", checkAt, len(data))
		}
	})
}
