package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadState feeds arbitrary bytes to LoadState as a CSV or JSONL
// results file: it never panics, fails only with ErrCorrupt, every row it
// reports reads back whole, and a file it accepts resumes cleanly.
func FuzzLoadState(f *testing.F) {
	csvFile := Header + "\n1,L1,,processed,id-1,1020,\"a,\"\"b\"\"\nc\",,1,\n2,,,created,id-2,1013,,\"$1,042.50\",1,\n"
	jsonlFile := `{"row":1,"leadId":"L1","ref":"","status":"processed","id":"id-1","resultCode":1020,"note":"a\n","bidValue":"","attempts":1,"error":""}` + "\n" +
		`{"row":2,"status":"created","id":"id-2","resultCode":null}` + "\n"
	for _, seed := range []string{"", csvFile, csvFile[:len(csvFile)-9], Header[:10], jsonlFile, jsonlFile[:len(jsonlFile)-12], "\n\n", "{", `"`, "row\n"} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, jsonl bool) {
		ext := ".csv"
		if jsonl {
			ext = ".jsonl"
		}
		path := filepath.Join(t.TempDir(), "r"+ext)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := LoadState(path)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("LoadState = %v, want nil or ErrCorrupt", err)
			}
			return
		}
		if s.Len() > len(data) || s.IgnoredPartialLines() > 1 {
			t.Fatalf("LoadState of %d bytes: Len %d, partial %d", len(data), s.Len(), s.IgnoredPartialLines())
		}
		for _, ref := range s.refs {
			got, err := s.read(ref)
			if err != nil || got.Row != int(ref.row) || got.Status != ref.status() {
				t.Fatalf("read(row %d) = %+v, %v; want the row with status %q", ref.row, got, err, ref.status())
			}
		}
		n := s.Len()
		s.Close()

		j, err := OpenJournal(path, true)
		if err != nil {
			t.Fatalf("OpenJournal(resume) after LoadState succeeded: %v", err)
		}
		if err := j.Append(Row{Row: maxRow, Status: StatusFailed, Error: "x"}); err != nil {
			t.Fatal(err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		s, err = LoadState(path)
		if err != nil {
			t.Fatalf("LoadState after resume: %v", err)
		}
		defer s.Close()
		if got, ok := s.Get(maxRow); !ok || got.Error != "x" || s.IgnoredPartialLines() != 0 || s.Len() < n {
			t.Fatalf("after resume: Get(maxRow) = %+v, %v; partial %d, Len %d (was %d)", got, ok, s.IgnoredPartialLines(), s.Len(), n)
		}
	})
}

// FuzzAppendJSONString checks the hand-written JSON string encoder against
// encoding/json (HTML escaping off), byte for byte.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "\x00\x1f\x7f", "é\u2028\xff", "\n\r\t\b\f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := string(appendJSONString(nil, s)) + "\n"; got != want.String() {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want.String())
		}
	})
}
