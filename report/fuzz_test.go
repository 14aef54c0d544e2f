package report

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/lead"
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
		if err := j.AppendDurable(lead.Row{Row: maxRow, Status: lead.StatusFailed, Error: "x"}); err != nil {
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

// FuzzRowRoundTrip: any text in a row's text columns is written to a CSV
// results file with no cell a spreadsheet runs as a formula, and reads
// back (LoadState's scan) as the same row.
func FuzzRowRoundTrip(f *testing.F) {
	f.Add("=HYPERLINK(\"x\")", "-2+3+cmd|' /C calc'!A0", "'s-Hertogenbosch", "-5", "@x", "\t=1")
	f.Add("", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, leadID, ref, id, note, bid, errText string) {
		want := lead.Row{Row: 1, LeadID: leadID, Ref: ref, Status: lead.StatusFailed, ID: id, Note: note, BidValue: bid, Attempts: 1, Error: errText}
		var b bytes.Buffer
		w := NewWriter(&b, FormatCSV)
		if err := w.Write(want); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		cr := csv.NewReader(bytes.NewReader(b.Bytes()))
		recs, err := cr.ReadAll()
		if err != nil {
			t.Fatalf("results %q do not parse: %v", b.Bytes(), err)
		}
		for _, rec := range recs {
			for _, c := range rec {
				if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) && lead.EscapeCell(c) != c {
					t.Fatalf("cell %q would run as a formula", c)
				}
			}
		}
		var got []lead.Row
		if _, err := scan(bytes.NewReader(b.Bytes()), int64(b.Len()), FormatCSV, "fuzz.csv", func(s *scanned) error {
			got = append(got, s.row)
			return nil
		}); err != nil {
			// encoding/csv cannot keep every byte (a CR before a line
			// end inside quotes), nor can a row hold invalid UTF-8 in
			// the ambiguous mark; those were never round-trip.
			return
		}
		if strings.HasPrefix(note, AmbiguousNote) {
			return // the note's own mark, read back as Ambiguous
		}
		// encoding/csv reads a CR LF inside quotes as LF.
		n := func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
		want = lead.Row{Row: 1, LeadID: n(leadID), Ref: n(ref), Status: lead.StatusFailed, ID: n(id), Note: n(note), BidValue: n(bid), Attempts: 1, Error: n(errText)}
		if len(got) != 1 {
			t.Fatalf("read back %d rows from %q, want 1", len(got), b.Bytes())
		}
		// A note that looks like the engine's is read back as the
		// service's and the engine's: the same text.
		g := got[0]
		g.Note, g.EngineNotes = NoteText(&g), nil
		if !reflect.DeepEqual(g, want) {
			t.Fatalf("read back %+v from %q, want %+v", got[0], b.Bytes(), want)
		}
	})
}

// FuzzNoteColumn: the note column read back (setNoteColumn) and written
// again (noteColumn) is the same text, so that a resumed run rewrites an
// earlier run's notes as they were; and reading is stable.
func FuzzNoteColumn(f *testing.F) {
	for _, c := range noteColumnCases {
		f.Add(c.col)
	}
	f.Add("x [bulkload: a] [bulkload: b")
	f.Add(" [bulkload: ] [bulkload: ]]")
	f.Fuzz(func(t *testing.T, col string) {
		var r lead.Row
		setNoteColumn(&r, col)
		again := noteColumn(&r)
		if !strings.HasPrefix(col, AmbiguousNote) && again != col {
			t.Fatalf("setNoteColumn(%q) = %+v, written again as %q", col, r, again)
		}
		var r2 lead.Row
		setNoteColumn(&r2, again)
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("setNoteColumn(%q) = %+v, but its column %q reads as %+v", col, r, again, r2)
		}
	})
}
