package outfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMeta: a meta file reads back as written, mode 0600, and a results
// file without one reads as fs.ErrNotExist. That compaction keeps it is
// report's test (TestCompactKeepsMeta).
func TestMeta(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.csv")
	if _, err := ReadMeta(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadMeta of a results file without one = %v, want fs.ErrNotExist", err)
	}
	want := Meta{Input: "in.csv", InputSHA256: "abc", InputBytes: 42, Rows: 3, AllLeadIDs: true, Written: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Version: "v1"}
	if err := WriteMeta(path, &want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMeta(path)
	if err != nil || *got != want {
		t.Fatalf("ReadMeta = %+v, %v; want %+v", got, err, want)
	}
	if st, _ := os.Stat(MetaPath(path)); st.Mode().Perm() != 0o600 {
		t.Errorf("meta file mode = %v, want 0600", st.Mode().Perm())
	}
}
