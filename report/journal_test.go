package report

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/outfile"
)

// journalLines is an upload's journal in completion order: rows interleave,
// qualified rows have a created line then their final line, and row 4 was
// retried (failed, then processed on a later line).
func journalLines() []lead.Row {
	return []lead.Row{
		{Row: 3, LeadID: "L3", Status: lead.StatusCreated, ID: "id-3", ResultCode: 1013, BidValue: "$1,042.50", Attempts: 1},
		{Row: 1, LeadID: "L1", Status: lead.StatusInvalid, Error: "zipCode: must be 5 digits"},
		{Row: 4, LeadID: "L4", Status: lead.StatusFailed, Attempts: 5, Error: "createLead: HTTP 503, \"gave up\"\nafter 5 attempts"},
		{Row: 2, LeadID: "L2", Status: lead.StatusCreated, ID: "id-2", ResultCode: 1017, Note: "q, \"2\"", BidValue: "$42.50", Attempts: 1},
		{Row: 3, LeadID: "L3", Status: lead.StatusSubmitted, ID: "id-3", ResultCode: 1013, BidValue: "$1,042.50", Attempts: 2},
		{Row: 5, LeadID: "L5", Status: lead.StatusProcessed, ID: "id-5", ResultCode: 1020, Note: "done", Attempts: 1},
		{Row: 4, LeadID: "L4", Status: lead.StatusProcessed, ID: "id-4", ResultCode: 1020, Note: "done\non retry", Attempts: 1},
		{Row: 2, LeadID: "L2", Status: lead.StatusSubmitFailed, ID: "id-2", ResultCode: 1017, Note: "q, \"2\"", BidValue: "$42.50", Attempts: 3, Error: "submitLead: HTTP 500"},
	}
}

// lastLines is what a reader of journalLines must see: the last line of each
// row, in row order.
func lastLines(lines []lead.Row) []lead.Row {
	last := map[int]lead.Row{}
	maxRow := 0
	for _, r := range lines {
		last[r.Row] = r
		maxRow = max(maxRow, r.Row)
	}
	var out []lead.Row
	for i := 0; i <= maxRow; i++ {
		if r, ok := last[i]; ok {
			out = append(out, r)
		}
	}
	return out
}

func appendAll(t *testing.T, j *Journal, rows []lead.Row) {
	t.Helper()
	for _, r := range rows {
		if err := j.AppendDurable(r); err != nil {
			t.Fatalf("AppendDurable(%+v): %v", r, err)
		}
	}
}

// encodeRows is the exact text a results file of rows has.
func encodeRows(t *testing.T, f Format, rows []lead.Row) string {
	t.Helper()
	var b bytes.Buffer
	w := NewWriter(&b, f)
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestCompact(t *testing.T) {
	for _, ext := range []string{".csv", ".jsonl"} {
		t.Run(ext, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "results"+ext)
			j, err := OpenJournal(path, false)
			if err != nil {
				t.Fatal(err)
			}
			lines := journalLines()
			appendAll(t, j, lines)
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			journal, _ := os.ReadFile(path)
			if want := encodeRows(t, FormatFor(path), lines); string(journal) != want {
				t.Fatalf("journal = %q, want %q", journal, want)
			}
			// The journal reads as its last lines before compaction.
			s := loadState(t, path)
			for _, want := range lastLines(lines) {
				if got, ok := s.Get(want.Row); !ok || !reflect.DeepEqual(got, want) {
					t.Errorf("journal Get(%d) = %+v, %v; want %+v", want.Row, got, ok, want)
				}
			}

			j, err = OpenJournal(path, true)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Compact(); err != nil {
				t.Fatalf("Compact: %v", err)
			}
			got, _ := os.ReadFile(path)
			if want := encodeRows(t, FormatFor(path), lastLines(lines)); string(got) != want {
				t.Errorf("compacted = %q, want %q", got, want)
			}
			st, err := os.Stat(path)
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("compacted mode = %v, %v; want 0600", st.Mode().Perm(), err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("directory after Compact holds %d files, want 1 (no temp file left)", len(ents))
			}
			if err := j.AppendDurable(lines[0]); err == nil {
				t.Errorf("AppendDurable after Compact = nil, want an error (the journal is closed)")
			}
		})
	}
}

func TestCompactRenameFails(t *testing.T) {
	for _, ext := range []string{".csv", ".jsonl"} {
		t.Run(ext, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "results"+ext)
			j, err := OpenJournal(path, false)
			if err != nil {
				t.Fatal(err)
			}
			appendAll(t, j, journalLines())
			errRename := errors.New("injected rename failure")
			j.rename = func(oldpath, newpath string) error {
				// The compacted copy is complete when rename is called.
				b, err := os.ReadFile(oldpath)
				if want := encodeRows(t, FormatFor(path), lastLines(journalLines())); err != nil || string(b) != want {
					t.Errorf("compacted copy = %q, %v; want %q", b, err, want)
				}
				return errRename
			}
			if err := j.Compact(); !errors.Is(err, errRename) {
				t.Fatalf("Compact = %v, want the rename error", err)
			}
			got, _ := os.ReadFile(path)
			if want := encodeRows(t, FormatFor(path), journalLines()); string(got) != want {
				t.Errorf("journal after failed Compact = %q, want it intact %q", got, want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("directory after failed Compact holds %d files, want 1 (temp file removed)", len(ents))
			}
		})
	}
}

func TestResumeAppendsThenCompacts(t *testing.T) {
	for _, ext := range []string{".csv", ".jsonl"} {
		t.Run(ext, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results"+ext)
			lines := journalLines()
			first, second := lines[:4], lines[4:]
			j, err := OpenJournal(path, false)
			if err != nil {
				t.Fatal(err)
			}
			appendAll(t, j, first)
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			s := loadState(t, path)
			if st, ok := s.Status(2); !ok || st != lead.StatusCreated {
				t.Errorf("Status(2) = %q, %v; want created", st, ok)
			}
			if s.Lines() != len(first) || s.Len() != 4 {
				t.Errorf("Lines, Len = %d, %d; want %d, 4", s.Lines(), s.Len(), len(first))
			}
			j, err = OpenJournal(path, true)
			if err != nil {
				t.Fatal(err)
			}
			appendAll(t, j, second)
			if err := j.Compact(); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if want := encodeRows(t, FormatFor(path), lastLines(lines)); string(got) != want {
				t.Errorf("resumed and compacted = %q, want %q", got, want)
			}
		})
	}
}

func TestOpenJournalResumeMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.csv")
	j, err := OpenJournal(path, true)
	if err != nil {
		t.Fatalf("OpenJournal(missing, resume) = %v", err)
	}
	if err := j.AppendDurable(lead.Row{Row: 1, Status: lead.StatusInvalid}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := Header + "\n1,,,invalid,,,,,,\n"; string(got) != want {
		t.Errorf("file = %q, want %q", got, want)
	}
}

func TestOpenJournalResumeCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.csv")
	content := Header + "\n1,,,nonsense,,,,,,\n2,,,invalid,,,,,,\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenJournal(path, true); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("OpenJournal(corrupt, resume) = %v, want ErrCorrupt naming line 2", err)
	}
	if got, _ := os.ReadFile(path); string(got) != content {
		t.Errorf("file after refused resume = %q, want it untouched", got)
	}
}

// TestJournalDurability: each AppendDurable is on disk (to the OS) when it
// returns, with every line before it.
func TestJournalDurability(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	j, err := OpenJournal(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	size := func() int {
		b, _ := os.ReadFile(path)
		return len(b)
	}

	rows := []lead.Row{{Row: 1, Status: lead.StatusProcessed}, {Row: 2, Status: lead.StatusCreated, ID: "id-2", ResultCode: 1013}, {Row: 3, Status: lead.StatusProcessed}}
	for i, r := range rows {
		if err := j.AppendDurable(r); err != nil {
			t.Fatal(err)
		}
		if got, want := size(), len(encodeRows(t, FormatJSONL, rows[:i+1])); got != want {
			t.Errorf("after AppendDurable of row %d the file has %d bytes, want %d (every line so far written)", r.Row, got, want)
		}
	}
}

func TestStateCounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.csv")
	j, err := OpenJournal(path, false)
	if err != nil {
		t.Fatal(err)
	}
	appendAll(t, j, journalLines())
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	s := loadState(t, path)
	want := map[lead.Status]int{lead.StatusInvalid: 1, lead.StatusSubmitted: 1, lead.StatusProcessed: 2, lead.StatusSubmitFailed: 1}
	if got := s.Counts(); !reflect.DeepEqual(got, want) {
		t.Errorf("Counts() = %v, want %v", got, want)
	}
}

func TestOpenJournalRemovesStaleCompaction(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.csv")
	stale := filepath.Join(dir, ".r.csv.compact-123")
	other := filepath.Join(dir, ".other.csv.compact-123")
	for _, p := range []string{stale, other} {
		if err := os.WriteFile(p, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	j, err := OpenJournal(path, true)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale compaction file after OpenJournal: Stat = %v, want not exist", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another file's compaction file was removed: %v", err)
	}
}

// TestUnverifiedAndAmbiguousSurvive: an unverified row and a failed row
// marked Ambiguous come back from the journal as they went in (State.Get,
// State.Status, Counts), in both formats, before and after compaction.
func TestUnverifiedAndAmbiguousSurvive(t *testing.T) {
	rows := []lead.Row{
		{Row: 1, LeadID: "L1", Status: lead.StatusFailed, Attempts: 1, Ambiguous: true, Error: "createLead: connection lost after 1 attempt"},
		{Row: 2, LeadID: "L2", Status: lead.StatusUnverified, ID: "dup-2", ResultCode: 1002, Note: "Duplicate of lead x", EngineNotes: []string{"reconcile by leadId"}, Attempts: 2},
		{Row: 3, LeadID: "L3", Status: lead.StatusFailed, Attempts: 1, Ambiguous: true, Note: "kept"},
		{Row: 4, LeadID: "L4", Status: lead.StatusFailed, Attempts: 5, Error: "createLead: HTTP 503 after 5 attempts"},
		{Row: 5, LeadID: "L5", Status: lead.StatusFailed, Attempts: 1, Ambiguous: true, EngineNotes: []string{"one", "two; three"}},
	}
	for _, ext := range []string{".csv", ".jsonl"} {
		t.Run(ext, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r"+ext)
			j, err := OpenJournal(path, false)
			if err != nil {
				t.Fatal(err)
			}
			appendAll(t, j, rows)
			check := func(when string) {
				s := loadState(t, path)
				for _, want := range rows {
					got, ok := s.Get(want.Row)
					if !ok || !reflect.DeepEqual(got, want) {
						t.Errorf("%s: Get(%d) = %+v, want %+v", when, want.Row, got, want)
					}
					if st, _ := s.Status(want.Row); st != want.Status {
						t.Errorf("%s: Status(%d) = %q, want %q", when, want.Row, st, want.Status)
					}
				}
				if got := s.Counts(); got[lead.StatusUnverified] != 1 || got[lead.StatusFailed] != 4 {
					t.Errorf("%s: Counts() = %v, want 1 unverified, 4 failed", when, got)
				}
			}
			check("journal")
			if err := j.Compact(); err != nil {
				t.Fatal(err)
			}
			check("compacted")
		})
	}
}

// TestCompactKeepsMeta: the meta file is a file of its own, so a journal's
// compaction (a new file renamed over the results file) keeps it.
func TestCompactKeepsMeta(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.csv")
	want := outfile.Meta{Input: "in.csv", InputSHA256: "abc", InputBytes: 42, Rows: 3, AllLeadIDs: true, Written: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Version: "v1"}
	if err := outfile.WriteMeta(path, &want); err != nil {
		t.Fatal(err)
	}
	j, err := OpenJournal(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.AppendDurable(lead.Row{Row: 1, Status: lead.StatusProcessed}); err != nil {
		t.Fatal(err)
	}
	if err := j.Compact(); err != nil {
		t.Fatal(err)
	}
	got, err := outfile.ReadMeta(path)
	if err != nil || *got != want {
		t.Fatalf("ReadMeta after compaction = %+v, %v; want %+v", got, err, want)
	}
}
