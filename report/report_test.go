package report

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/lead"
)

// trickyRows exercise quoting: commas, quotes, newlines, CR, tabs, leading
// spaces, non-ASCII and JSON's line separators.
func trickyRows() []lead.Row {
	return []lead.Row{
		{Row: 1, LeadID: "L1", Ref: "R1", Status: lead.StatusValid},
		{Row: 2, LeadID: "L2", Ref: "", Status: lead.StatusInvalid, Error: "zipCode: must be 5 digits; email: not an e-mail address"},
		{Row: 3, LeadID: "L,3", Ref: `R"3"`, Status: lead.StatusProcessed, ID: "0b9f8a2e-1c1d-4f7e-9a53-1b2c3d4e5f60", ResultCode: 1020, Note: "done, \"as\" asked\nsecond line\r\nthird", Attempts: 1},
		{Row: 4, LeadID: " L4 ", Ref: "\tR4", Status: lead.StatusSubmitted, ID: "id-4", ResultCode: 1013, Note: "qualified", BidValue: "$1,042.50", Attempts: 2},
		{Row: 5, LeadID: "Ünïcødé ✓", Ref: "line\u2028sep\u2029", Status: lead.StatusSubmitFailed, ID: "id-5", ResultCode: 1017, BidValue: "$42.50", Attempts: 3, Error: "submitLead: HTTP 503"},
		{Row: 6, LeadID: "\"", Ref: ",", Status: lead.StatusFailed, Attempts: 5, Error: "createLead: \"quoted\", and\nmulti-line"},
		{Row: 7, LeadID: "L7", Status: lead.StatusCreated, ID: "id-7", ResultCode: 1014, Note: "\\backslash\\", BidValue: "$0.01"},
		{Row: 0, LeadID: "\x01ctl\x1f", Status: lead.StatusValid},
		{Row: 8, LeadID: "", Ref: "", Status: lead.StatusValid, Note: "\""},
	}
}

func writeRows(t *testing.T, path string, rows []lead.Row) {
	t.Helper()
	w, err := Create(path)
	if err != nil {
		t.Fatalf("Create(%q): %v", path, err)
	}
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatalf("Write(%+v): %v", r, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func loadState(t *testing.T, path string) *State {
	t.Helper()
	s, err := LoadState(path)
	if err != nil {
		t.Fatalf("LoadState(%q): %v", filepath.Base(path), err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRoundTrip(t *testing.T) {
	for _, ext := range []string{".csv", ".jsonl", ".ndjson", ".txt"} {
		t.Run(ext, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results"+ext)
			rows := trickyRows()
			writeRows(t, path, rows)
			s := loadState(t, path)
			if s.Len() != len(rows) || s.IgnoredPartialLines() != 0 {
				t.Fatalf("LoadState: Len %d, partial %d; want %d, 0", s.Len(), s.IgnoredPartialLines(), len(rows))
			}
			for _, want := range rows {
				if FormatFor(path) == FormatCSV {
					// encoding/csv reads CR LF in a quoted field as LF.
					want.Note = strings.ReplaceAll(want.Note, "\r\n", "\n")
				}
				got, ok := s.Get(want.Row)
				if !ok || !reflect.DeepEqual(got, want) {
					t.Errorf("Get(%d) = %+v, %v; want %+v", want.Row, got, ok, want)
				}
				if st, ok := s.Status(want.Row); !ok || st != want.Status {
					t.Errorf("Status(%d) = %q, %v; want %q", want.Row, st, ok, want.Status)
				}
			}
			if got, ok := s.Get(99); ok {
				t.Errorf("Get(99) = %+v, true; want missing", got)
			}
			st, err := os.Stat(path)
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("mode of %s = %v, %v; want 0600", path, st.Mode().Perm(), err)
			}
		})
	}
}

func TestWriterCSVText(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, FormatCSV)
	for _, r := range []lead.Row{
		{Row: 1, LeadID: "L1", Status: lead.StatusValid},
		{Row: 2, LeadID: "L,2", Ref: `say "hi"`, Status: lead.StatusFailed, Note: "a\nb", Attempts: 3, Error: "x: y"},
		{Row: 3, Status: lead.StatusSubmitted, ID: "u", ResultCode: 1013, BidValue: "$1,042.50", Attempts: 1},
		{Row: 4, Status: lead.StatusInvalid, Invalid: lead.RowErrors{{Row: 4, Field: lead.ZipCode, Rule: "must be 5 digits"}, {Row: 4, Field: lead.State, Rule: "bad"}}},
		{Row: 5, Status: lead.StatusInvalid, Invalid: lead.RowErrors{{Row: 5, StartLine: 7, Field: lead.NoField, Rule: "2 fields, header has 3"}}},
	} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := Header + "\n" +
		"1,L1,,valid,,,,,,\n" +
		"2,\"L,2\",\"say \"\"hi\"\"\",failed,,,\"a\nb\",,3,x: y\n" +
		"3,,,submitted,u,1013,,\"$1,042.50\",1,\n" +
		"4,,,invalid,,,,,,zipCode: must be 5 digits; state: bad\n" +
		"5,,,invalid,,,,,,\"malformed record: row 5 (line 7): 2 fields, header has 3\"\n"
	if b.String() != want {
		t.Errorf("CSV = %q, want %q", b.String(), want)
	}
}

func TestWriterJSONLText(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, FormatJSONL)
	if err := w.Write(lead.Row{Row: 2, LeadID: "L<2>&", Status: lead.StatusProcessed, ID: "u", ResultCode: 1020, Note: "a\"b\n"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(lead.Row{Row: 3, Status: lead.StatusInvalid, Invalid: lead.RowErrors{{Row: 3, Field: lead.ZipCode, Rule: "must be 5 digits"}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := `{"row":2,"leadId":"L<2>&","ref":"","status":"processed","id":"u","resultCode":1020,"note":"a\"b\n","bidValue":"","attempts":null,"error":""}` + "\n" +
		`{"row":3,"leadId":"","ref":"","status":"invalid","id":"","resultCode":null,"note":"","bidValue":"","attempts":null,"error":"zipCode: must be 5 digits"}` + "\n"
	if b.String() != want {
		t.Errorf("JSONL = %s, want %s", b.String(), want)
	}
}

func TestWriteRejectsBadRow(t *testing.T) {
	for _, tc := range []struct {
		name string
		row  lead.Row
	}{
		{"negative row", lead.Row{Row: -1, Status: lead.StatusValid}},
		{"row too large", lead.Row{Row: maxRow + 1, Status: lead.StatusValid}},
		{"unknown status", lead.Row{Row: 1, Status: "done"}},
		{"empty status", lead.Row{Row: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := NewWriter(&bytes.Buffer{}, FormatCSV)
			if err := w.Write(tc.row); !errors.Is(err, errBadRow) {
				t.Errorf("Write(%+v) = %v, want errBadRow", tc.row, err)
			}
		})
	}
}

func TestFormatFor(t *testing.T) {
	for _, tc := range []struct {
		path string
		want Format
	}{
		{"r.csv", FormatCSV}, {"r.jsonl", FormatJSONL}, {"R.JSONL", FormatJSONL}, {"dir.jsonl/r.ndjson", FormatJSONL},
		{"r.json", FormatCSV}, {"r", FormatCSV}, {"r.jsonl.csv", FormatCSV},
	} {
		if got := FormatFor(tc.path); got != tc.want {
			t.Errorf("FormatFor(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestCreateRestrictsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.csv")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeRows(t, path, nil)
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode after Create over a 0644 file = %v, %v; want 0600", st.Mode().Perm(), err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != Header+"\n" {
		t.Errorf("empty results file = %q, want the header only", b)
	}
}

// TestNoSensitiveColumns: the results file has no column a sensitive lead
// field could land in.
func TestNoSensitiveColumns(t *testing.T) {
	for _, col := range strings.Split(Header, ",") {
		if f, ok := lead.FieldByName(col); ok && f.Sensitive() {
			t.Errorf("column %q is the sensitive field %v", col, f)
		}
	}
	// One field per column; Invalid, rendered into the error column;
	// EngineNotes and Ambiguous, kept in the note column; and Refused, a
	// flag for the --refusals file, never written.
	if n := reflect.TypeFor[lead.Row]().NumField(); n != int(numColumns)+4 {
		t.Errorf("Row has %d fields, want %d (one per column, Invalid, EngineNotes, Ambiguous and Refused)", n, int(numColumns)+4)
	}
}

func TestLoadStateMissingFile(t *testing.T) {
	_, err := LoadState(filepath.Join(t.TempDir(), "none.csv"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadState(missing) = %v, want fs.ErrNotExist", err)
	}
}

// noteColumnCases are note columns as results files hold them and the
// fields they read as: the text on disk is the same as before the engine's
// notes and the ambiguous mark were fields of their own.
var noteColumnCases = []struct {
	name string
	col  string
	want lead.Row
}{
	{"empty", "", lead.Row{}},
	{"service's", "Lead qualified, tier 2", lead.Row{Note: "Lead qualified, tier 2"}},
	{"engine's after the service's", "Duplicate of lead x [bulkload: createLead was sent 2 times after an answer was lost; this is the lead the earlier attempt created, answered as a duplicate on the retry]",
		lead.Row{Note: "Duplicate of lead x", EngineNotes: []string{"createLead was sent 2 times after an answer was lost; this is the lead the earlier attempt created, answered as a duplicate on the retry"}}},
	{"engine's alone", " [bulkload: createLead answered without a lead id]", lead.Row{EngineNotes: []string{"createLead answered without a lead id"}}},
	{"two of the engine's", "ok [bulkload: a] [bulkload: createLead answered without a lead id]", lead.Row{Note: "ok", EngineNotes: []string{"a", "createLead answered without a lead id"}}},
	{"ambiguous", AmbiguousNote, lead.Row{Ambiguous: true}},
	{"ambiguous with a note", AmbiguousNote + " kept", lead.Row{Ambiguous: true, Note: "kept"}},
	{"ambiguous with the engine's", AmbiguousNote + "  [bulkload: x]", lead.Row{Ambiguous: true, EngineNotes: []string{"x"}}},
	{"an unclosed mark is the service's", "a [bulkload: b", lead.Row{Note: "a [bulkload: b"}},
	{"a mark unclosed later is the service's", "a [bulkload: b] [bulkload: c", lead.Row{Note: "a [bulkload: b] [bulkload: c"}},
	{"a bracket in the engine's", "a [bulkload: lead (x] y)]", lead.Row{Note: "a", EngineNotes: []string{"lead (x] y)"}}},
}

func TestNoteColumn(t *testing.T) {
	for _, tc := range noteColumnCases {
		t.Run(tc.name, func(t *testing.T) {
			var got lead.Row
			setNoteColumn(&got, tc.col)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("setNoteColumn(%q) = %+v, want %+v", tc.col, got, tc.want)
			}
			if col := noteColumn(&tc.want); col != tc.col {
				t.Errorf("noteColumn(%+v) = %q, want %q", tc.want, col, tc.col)
			}
		})
	}
}
