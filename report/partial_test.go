package report

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/lead"
)

// TestHalfWrittenLastLine cuts a valid journal at every byte offset of its
// last line (and, for CSV, of its header): LoadState never fails and never
// returns a half row, and OpenJournal(resume) then appends cleanly.
func TestHalfWrittenLastLine(t *testing.T) {
	// The last line is long and has every kind of quoting in it.
	last := lead.Row{Row: 9, LeadID: `L"9",x`, Ref: "r\n9", Status: lead.StatusSubmitFailed, ID: "id-9", ResultCode: 1016,
		Note: "a \"quoted\" note,\nwith \"\" pairs\n", BidValue: "$1,042.50", Attempts: 12, Error: "submitLead: \"HTTP 500\", then\nnull"}
	prev := []lead.Row{
		{Row: 9, LeadID: `L"9",x`, Ref: "r\n9", Status: lead.StatusCreated, ID: "id-9", ResultCode: 1016, BidValue: "$1,042.50", Attempts: 1},
		{Row: 1, LeadID: "L1", Status: lead.StatusProcessed, ID: "id-1", ResultCode: 1020, Note: "ok", Attempts: 1},
	}
	added := lead.Row{Row: 10, LeadID: "L10", Status: lead.StatusProcessed, ID: "id-10", ResultCode: 1020, Attempts: 1}
	for _, ext := range []string{".csv", ".jsonl"} {
		t.Run(ext, func(t *testing.T) {
			f := FormatFor("x" + ext)
			whole := encodeRows(t, f, append(prev, last))
			lastStart := len(encodeRows(t, f, prev))
			from := lastStart
			if f == FormatCSV {
				from = 0
			}
			dir := t.TempDir()
			for cut := from; cut < len(whole); cut++ {
				path := filepath.Join(dir, "cut"+ext)
				if err := os.WriteFile(path, []byte(whole[:cut]), 0o600); err != nil {
					t.Fatal(err)
				}
				s, err := LoadState(path)
				if err != nil {
					t.Fatalf("cut at %d of %d: LoadState: %v", cut, len(whole), err)
				}
				wantPartial := 1
				if cut == 0 {
					wantPartial = 0
				}
				for i := range len(prev) + 1 {
					if cut == len(encodeRows(t, f, prev[:i])) {
						wantPartial = 0 // a line boundary
					}
				}
				if s.IgnoredPartialLines() != wantPartial {
					t.Errorf("cut at %d: IgnoredPartialLines = %d, want %d", cut, s.IgnoredPartialLines(), wantPartial)
				}
				var want []lead.Row
				if cut >= lastStart {
					want = lastLines(prev)
				} else if cut > len(Header)+1 && f == FormatCSV {
					// Within the earlier lines: only whole lines count.
					want = nil
					for i := range prev {
						if len(encodeRows(t, f, prev[:i+1])) <= cut {
							want = lastLines(prev[:i+1])
						}
					}
				}
				if s.Len() != len(want) {
					t.Errorf("cut at %d: Len = %d, want %d", cut, s.Len(), len(want))
				}
				for _, w := range want {
					if got, ok := s.Get(w.Row); !ok || !reflect.DeepEqual(got, w) {
						t.Errorf("cut at %d: Get(%d) = %+v, %v; want %+v", cut, w.Row, got, ok, w)
					}
				}
				s.Close()

				j, err := OpenJournal(path, true)
				if err != nil {
					t.Fatalf("cut at %d: OpenJournal(resume): %v", cut, err)
				}
				if err := j.AppendDurable(added); err != nil {
					t.Fatal(err)
				}
				if err := j.Close(); err != nil {
					t.Fatal(err)
				}
				s, err = LoadState(path)
				if err != nil {
					t.Fatalf("cut at %d: LoadState after resume: %v", cut, err)
				}
				if s.IgnoredPartialLines() != 0 || s.Len() != len(want)+1 {
					t.Errorf("cut at %d: after resume Len, partial = %d, %d; want %d, 0", cut, s.Len(), s.IgnoredPartialLines(), len(want)+1)
				}
				if got, ok := s.Get(added.Row); !ok || !reflect.DeepEqual(got, added) {
					t.Errorf("cut at %d: after resume Get(%d) = %+v, %v; want %+v", cut, added.Row, got, ok, added)
				}
				s.Close()
			}
		})
	}
}

// TestCorruptLine: a malformed line that is not a half-written last line is
// an error wrapping ErrCorrupt that names the line and does not quote it.
func TestCorruptLine(t *testing.T) {
	const secret = "123456789" // stands for partner data that must not be echoed
	ok := "1,L1,,processed,id,1020,done,,1,\n"
	okJ := `{"row":1,"leadId":"L1","ref":"","status":"processed","id":"id","resultCode":1020,"note":"done","bidValue":"","attempts":1,"error":""}` + "\n"
	for _, tc := range []struct {
		name, ext, content string
		line               int
	}{
		{"csv unknown status", ".csv", Header + "\n" + ok + "2,,,nonsense,,,," + secret + ",,\n" + ok, 3},
		{"csv short record", ".csv", Header + "\n" + ok + "2,L2," + secret + "\n" + ok, 3},
		{"csv long record", ".csv", Header + "\n" + ok + "2,,,valid,,,,,,," + secret + "\n", 3},
		{"csv row not a number", ".csv", Header + "\n" + ok + "x" + secret + ",,,valid,,,,,,\n", 3},
		{"csv result code not a number", ".csv", Header + "\n" + "2,,,processed,,1.5,,,,\n", 2},
		{"csv row empty", ".csv", Header + "\n" + ",,,valid,,,,,,\n", 2},
		{"csv negative row", ".csv", Header + "\n" + "-2,,,valid,,,,,,\n", 2},
		{"csv bare quote", ".csv", Header + "\n" + `2,a"` + secret + `,,valid,,,,,,` + "\n" + ok, 2},
		{"csv terminated short last line", ".csv", Header + "\n" + ok + "2,L2\n", 3},
		{"csv wrong header", ".csv", "row,leadId,ssn\n" + ok, 1},
		{"csv unterminated quote then lines", ".csv", Header + "\n" + `2,"` + secret + ",,valid,,,,,,\n" + strings.Repeat(ok, 3) + "\"x\"\n", 2},
		{"csv unterminated quote swallows the rest", ".csv", Header + "\n" + ok + `2,"` + secret + ",,valid,,,,,,\n" + strings.Repeat(ok, 3), 3},
		{"jsonl invalid json", ".jsonl", okJ + `{"row":2,"leadId":"` + secret + "\n" + okJ, 2},
		{"jsonl unknown status", ".jsonl", okJ + okJ + `{"row":3,"status":"` + secret + `"}` + "\n", 3},
		{"jsonl row is a string", ".jsonl", `{"row":"` + secret + `","status":"valid"}` + "\n", 1},
		{"jsonl row missing", ".jsonl", `{"status":"valid","note":"` + secret + `"}` + "\n", 1},
		{"jsonl not an object", ".jsonl", okJ + "[" + secret + "]\n", 2},
		{"jsonl unterminated garbage", ".jsonl", okJ + secret, 2},
		{"jsonl attempts fractional", ".jsonl", `{"row":1,"status":"failed","attempts":1.5}` + "\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r"+tc.ext)
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadState(path)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("LoadState = %v, want ErrCorrupt", err)
			}
			if want := "line " + itoaEmpty(tc.line) + ":"; !strings.Contains(err.Error(), want) {
				t.Errorf("LoadState = %q, want it to name %q", err, want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("LoadState = %q quotes the line's content", err)
			}
		})
	}
}
