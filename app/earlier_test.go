package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/upload"
)

func TestShareOf(t *testing.T) {
	tests := []struct {
		run     upload.Shard
		earlier string
		want    shareRelation
	}{
		{upload.Shard{}, "", sameShare},
		{upload.Shard{K: 0, N: 1}, "", sameShare},
		{upload.Shard{}, "0/1", sameShare},
		{upload.Shard{K: 1, N: 4}, "1/4", sameShare},
		{upload.Shard{K: 1, N: 4}, "2/4", otherRows},
		{upload.Shard{K: 1, N: 4}, "1/2", overlap},
		{upload.Shard{K: 0, N: 3}, "0/2", overlap},
		{upload.Shard{}, "1/2", overlap},
		{upload.Shard{K: 1, N: 2}, "", overlap},
		{upload.Shard{K: 1, N: 2}, "banana", overlap},
	}
	for _, tc := range tests {
		if got := shareOf(tc.run, tc.earlier); got != tc.want {
			t.Errorf("shareOf(%v, %q) = %v, want %v", tc.run, tc.earlier, got, tc.want)
		}
	}
}

func TestPrefixSHA256(t *testing.T) {
	b := make([]byte, 600<<10)
	for i := range b {
		b[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	offsets := []int64{1, 300 << 10, 256 << 10, int64(len(b)), 300 << 10, int64(len(b)) + 1}
	got, err := prefixSHA256(context.Background(), path, offsets)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range offsets {
		if at > int64(len(b)) {
			if _, ok := got[at]; ok {
				t.Errorf("prefixSHA256 has a hash at %d, past the file's %d bytes", at, len(b))
			}
			continue
		}
		sum := sha256.Sum256(b[:at])
		if want := hex.EncodeToString(sum[:]); got[at] != want {
			t.Errorf("prefixSHA256 at %d = %s, want %s", at, got[at], want)
		}
	}
}

// TestFindEarlier: the results files in the folder whose meta file names
// this input's bytes, or its first bytes, are found, newest first; those
// of other inputs, of streams, of the simulator, without a results file
// or with an unreadable meta file are not.
func TestFindEarlier(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "leads.csv")
	content := []byte("leadId,dateOfBirth\nA,1980-01-02\nB,1981-03-04\n")
	if err := os.WriteFile(input, content, 0o600); err != nil {
		t.Fatal(err)
	}
	hash := func(b []byte) string {
		s := sha256.Sum256(b)
		return hex.EncodeToString(s[:])
	}
	firstRow := int64(len("leadId,dateOfBirth\nA,1980-01-02\n"))
	day := time.Date(2026, 11, 22, 23, 50, 0, 0, time.UTC)
	write := func(name string, m *outfile.Meta, results bool) {
		t.Helper()
		path := filepath.Join(dir, name)
		if results {
			if err := os.WriteFile(path, []byte("row\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if m != nil {
			if err := outfile.WriteMeta(path, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("same.results.csv", &outfile.Meta{InputSHA256: hash(content), InputBytes: int64(len(content)), Written: day}, true)
	write("prefix.results.jsonl", &outfile.Meta{InputSHA256: hash(content[:firstRow]), InputBytes: firstRow, Written: day.Add(time.Hour)}, true)
	write("other.results.csv", &outfile.Meta{InputSHA256: hash([]byte("x")), InputBytes: 1, Written: day}, true)
	write("longer.results.csv", &outfile.Meta{InputSHA256: hash(content), InputBytes: int64(len(content)) + 1, Written: day}, true)
	write("stream.results.csv", &outfile.Meta{InputSHA256: hash(content), InputBytes: int64(len(content)), Streamed: true, Written: day}, true)
	write("leads.simulated.results.csv", &outfile.Meta{InputSHA256: hash(content), InputBytes: int64(len(content)), Written: day}, true)
	write("noresults.results.csv", &outfile.Meta{InputSHA256: hash(content), InputBytes: int64(len(content)), Written: day}, false)
	write("notes.txt", &outfile.Meta{InputSHA256: hash(content), InputBytes: int64(len(content)), Written: day}, true)
	if err := os.WriteFile(filepath.Join(dir, "broken.results.csv"), []byte("row\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.results.csv.meta"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}

	runs, err := findEarlier(context.Background(), filepath.Join(dir, "new.results.csv"), input)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, filepath.Base(r.path))
	}
	if len(got) != 2 || got[0] != "prefix.results.jsonl" || got[1] != "same.results.csv" {
		t.Errorf("findEarlier = %v, want [prefix.results.jsonl same.results.csv] (newest first)", got)
	}
	runs, err = findEarlier(context.Background(), filepath.Join(dir, "same.results.csv"), input)
	if err != nil || len(runs) != 1 || filepath.Base(runs[0].path) != "prefix.results.jsonl" {
		t.Errorf("findEarlier from same.results.csv = %v, %v; want prefix.results.jsonl alone (not itself)", runs, err)
	}
}
