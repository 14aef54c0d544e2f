package source

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const csvRows = "leadId,dateOfBirth,termsConsent\nA1,1980-01-02,yes\nA2,1980-01-02,no\nA3,1980-13-02,yes\n"

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestScanInput(t *testing.T) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(csvRows))
	zw.Close()
	bad := bytes.Clone(z.Bytes())
	bad[len(bad)-8] ^= 1 // the CRC-32

	cases := []struct {
		name     string
		file     string
		data     []byte
		prefixAt int64
		wantErr  string
	}{
		{name: "csv", file: "in.csv", data: []byte(csvRows), prefixAt: 16},
		{name: "gzip", file: "in.csv.gz", data: z.Bytes()},
		{name: "gzip with a wrong checksum", file: "in.csv.gz", data: bad, wantErr: "checksum"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, tc.file, tc.data)
			var seen []string
			sc, err := ScanInput(context.Background(), p, Config{PrefixAt: tc.prefixAt}, func(it Item) error {
				seen = append(seen, it.Row.LeadID)
				return nil
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ScanInput(%s) error = %v, want one naming %q", tc.name, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ScanInput(%s): %v", tc.name, err)
			}
			if sc.Rows != 3 || sc.Invalid != 2 || !sc.AllLeadIDs || strings.Join(seen, ",") != "A1,A2,A3" {
				t.Errorf("ScanInput(%s) = rows %d invalid %d allLeadIDs %v seen %v, want 3, 2, true, A1,A2,A3", tc.name, sc.Rows, sc.Invalid, sc.AllLeadIDs, seen)
			}
			if sc.SHA256 != sha(tc.data) || sc.Bytes != int64(len(tc.data)) {
				t.Errorf("ScanInput(%s) = sha %s bytes %d, want the file's", tc.name, sc.SHA256, sc.Bytes)
			}
			if tc.prefixAt > 0 && sc.PrefixSHA256 != sha(tc.data[:tc.prefixAt]) {
				t.Errorf("ScanInput(%s) PrefixSHA256 = %s, want the hash of the first %d bytes", tc.name, sc.PrefixSHA256, tc.prefixAt)
			}
		})
	}
}

// TestLimitReadsTheScannedBytes: a Source with Limit reads no further, and
// says how many bytes came after.
func TestLimitReadsTheScannedBytes(t *testing.T) {
	more := csvRows + "A4,1980-01-02,yes\n"
	p := writeFile(t, "in.csv", []byte(more))
	s, err := Open(context.Background(), p, nil, Config{Limit: int64(len(csvRows))})
	if err != nil {
		t.Fatal(err)
	}
	n := each(t, s, func(Item) {})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n != 3 || s.InputSHA256() != sha([]byte(csvRows)) || s.Grew() != int64(len(more)-len(csvRows)) {
		t.Errorf("rows %d sha %s grew %d; want 3, the hash of the limit's bytes, %d", n, s.InputSHA256(), s.Grew(), len(more)-len(csvRows))
	}
}

// TestReadAheadKeepsOrder: rows read ahead come back first, in order, then
// the rest.
func TestReadAheadKeepsOrder(t *testing.T) {
	p := writeFile(t, "in.csv", []byte(csvRows))
	s, err := Open(context.Background(), p, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, err := ReadAhead(context.Background(), s, 2)
	if err != nil {
		t.Fatal(err)
	}
	if a.Rows() != 2 || a.Invalid() != 1 || a.Err() != nil {
		t.Fatalf("ReadAhead = rows %d invalid %d err %v, want 2, 1, nil", a.Rows(), a.Invalid(), a.Err())
	}
	var got []string
	each(t, a, func(it Item) { got = append(got, it.Row.LeadID) })
	if strings.Join(got, ",") != "A1,A2,A3" {
		t.Errorf("rows = %v, want A1,A2,A3", got)
	}
}
