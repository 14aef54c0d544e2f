package outfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// TestDecodeMetaRefuses: a meta file that decodes but holds what no run
// writes is refused with ErrBadMeta, naming what is wrong.
func TestDecodeMetaRefuses(t *testing.T) {
	for _, tc := range []struct{ name, json, want string }{
		{"negative rows", `{"rows":-1}`, "rows -1"},
		{"negative bytes", `{"inputBytes":-5}`, "inputBytes -5"},
		{"first bytes past the bytes read", `{"inputBytes":10,"firstBytes":11}`, "firstBytes 11 past inputBytes 10"},
		{"hash not hex", `{"inputSha256":"zz"}`, `inputSha256 "zz"`},
		{"partial hash not hex", `{"inputSha256":"partial:xyz"}`, `inputSha256 "partial:xyz"`},
		{"first hash too long", `{"firstSha256":"` + strings.Repeat("a", 65) + `"}`, "firstSha256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeMeta([]byte(tc.json))
			if !errors.Is(err, ErrBadMeta) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("DecodeMeta(%s) = %v, want ErrBadMeta naming %q", tc.json, err, tc.want)
			}
		})
	}
	if m, err := DecodeMeta([]byte(`{"input":"x","inputSha256":"partial:0a1B","inputBytes":9,"firstBytes":9,"firstSha256":"ff","rows":2,"streamed":true}`)); err != nil || m.Rows != 2 {
		t.Errorf("DecodeMeta of a streamed run's meta = %+v, %v; want it read", m, err)
	}
}

// FuzzDecodeMeta decodes any bytes as a meta file: a meta it accepts has
// no negative count and its first bytes within the bytes read, and writes
// and reads back as itself.
func FuzzDecodeMeta(f *testing.F) {
	f.Add([]byte(`{"input":"in.csv","inputSha256":"5f1c0e2a9b7d","inputBytes":42,"rows":3,"allLeadIds":true,"written":"2026-01-02T03:04:05Z","version":"v1"}`))
	f.Add([]byte(`{"inputSha256":"partial:00","inputBytes":9,"firstBytes":4,"firstSha256":"ab","streamed":true}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeMeta(data)
		if err != nil {
			return
		}
		if m.Rows < 0 || m.InputBytes < 0 || m.FirstBytes < 0 || m.FirstBytes > m.InputBytes {
			t.Fatalf("DecodeMeta accepted %+v", m)
		}
		path := filepath.Join(dir, "r.csv")
		if err := WriteMeta(path, m); err != nil {
			t.Fatal(err)
		}
		back, err := ReadMeta(path)
		if err != nil {
			t.Fatalf("ReadMeta after WriteMeta(%+v): %v", m, err)
		}
		// A time zone's offset reads back as an equal instant of another
		// *Location: compare the instant.
		if !back.Written.Equal(m.Written) {
			t.Fatalf("written %v read back as %v", m.Written, back.Written)
		}
		back.Written, m.Written = time.Time{}, time.Time{}
		if *back != *m {
			t.Fatalf("ReadMeta after WriteMeta(%+v) = %+v", m, back)
		}
	})
}
