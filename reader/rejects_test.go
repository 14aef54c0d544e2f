package reader

import (
	"bytes"
	"github.com/bulkload/bulkload/lead"
	"slices"
	"strings"
	"testing"
)

// rejectAll writes every record of in to a rejects file, with a reason that
// needs quoting, and returns the file.
func rejectAll(t *testing.T, in []byte, name string, opts Options) ([]Record, []byte) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(in), name, opts)
	if err != nil {
		t.Fatalf("NewReader(%q) error = %v", in, err)
	}
	defer r.Close()
	var out bytes.Buffer
	x := NewRejects(&out, r, r.format, r.comma) // the input's own format
	var recs []Record
	for i := 0; i < 1000; i++ {
		rec, err := r.next()
		if err != nil {
			break
		}
		if err := x.Write(&rec, `bad "value", see docs`); err != nil {
			t.Fatalf("Write() error = %v", err)
		}
		rec.Raw = bytes.Clone(rec.Raw)
		recs = append(recs, rec)
	}
	if err := x.Flush(); err != nil {
		t.Fatalf("Flush() error = %v", err)
	}
	return recs, out.Bytes()
}

// TestRejectsRoundTrip checks that a rejects file reads back, with the same
// options, as the same records: same values for good rows, malformed again
// for malformed rows, and the error column known, not reported.
func TestRejectsRoundTrip(t *testing.T) {
	cases := []struct {
		name, file, in string
		opts           Options
		wantHead       string // first line of the rejects file
	}{
		{name: "csv", file: "a.csv",
			in:       "First Name,Zip,Notes,,\r\nAnn,1,\"a, b\",,\r\nBob,2\r\nBad\"q,3,x\r\n\"Cy\nCo\",3,\"multi\nline\"\r\nDi,4,x,,,,\r\n",
			wantHead: `error,First Name,Zip,Notes,,`},
		{name: "csv semicolon", file: "a.csv", in: "fname;zip\nAnn;1\nBob\n", wantHead: `error;fname;zip`},
		{name: "csv fed back twice", file: "a.csv", in: "Error,fname\nold,Ann\n", wantHead: `error,fname`},
		{name: "csv latin1", file: "a.csv", in: "fname,lname\nJos\xe9,O\x92Neil\n", opts: Options{Encoding: "windows-1252"}, wantHead: "error,fname,lname"},
		{name: "jsonl", file: "a.jsonl", in: "{\"fname\":\"Ann\",\"zip\":1}\n{}\nnot json\n{\"a\":[1]}\n { \"fname\" : \"Bo\" } \n",
			wantHead: `{"fname":"Ann","zip":1,"error":"bad \"value\", see docs"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recs, rejects := rejectAll(t, []byte(tc.in), tc.file, tc.opts)
			if head, _, _ := strings.Cut(string(rejects), "\n"); head != tc.wantHead {
				t.Errorf("rejects(%q) header = %q, want %q", tc.in, head, tc.wantHead)
			}
			back, unknown, err := readAll(t, rejects, tc.file, tc.opts)
			if err != nil {
				t.Fatalf("read(rejects %q) error = %v", rejects, err)
			}
			if len(back) != len(recs) {
				t.Fatalf("read(rejects %q) = %d records, want %d", rejects, len(back), len(recs))
			}
			for i := range recs {
				if (recs[i].Err == nil) != (back[i].Err == nil) || recs[i].Values != back[i].Values {
					t.Errorf("read(rejects) record %d = %q, want %q", i, describe(back[i]), describe(recs[i]))
				}
			}
			if slices.ContainsFunc(unknown, func(s string) bool { return strings.Contains(strings.ToLower(s), "error") }) {
				t.Errorf("read(rejects) Unknown() = %q, want no error column", unknown)
			}
			if tc.file == "a.csv" {
				// Feeding the rejects back must keep one error column.
				_, again := rejectAll(t, rejects, tc.file, tc.opts)
				if head, _, _ := strings.Cut(string(again), "\n"); head != tc.wantHead {
					t.Errorf("rejects(rejects) header = %q, want %q", head, tc.wantHead)
				}
			}
		})
	}
}

// TestRejectsEmpty: a CSV rejects file with no rows still has its header
// (a run that found none is told apart from one that wrote nothing); a
// JSONL one is empty.
func TestRejectsEmpty(t *testing.T) {
	for _, tc := range []struct {
		name, input, file string
		as                Format
		want              string
	}{
		{"csv", "fname\nAnn\n", "a.csv", FormatAuto, "error,fname\n"},
		{"jsonl", `{"fname":"Ann"}` + "\n", "a.jsonl", FormatAuto, ""},
		{"jsonl as csv", `{"fname":"Ann"}` + "\n", "a.jsonl", FormatCSV, "error,firstName,"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tc.input), tc.file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			x := NewRejects(&out, r, tc.as, 0)
			if err := x.Flush(); err != nil || !strings.HasPrefix(out.String(), tc.want) || (tc.want == "" && out.Len() != 0) {
				t.Errorf("Flush() with no rows = %q, %v, want %q", out.String(), err, tc.want)
			}
		})
	}
}

// TestRejectsAsOwnFormat: the rejects file follows its own extension's
// format, whatever the input's, and feeds back in with the values intact.
func TestRejectsAsOwnFormat(t *testing.T) {
	cases := []struct {
		name, file, input string
		as                Format
		comma             rune
		want              []string // the rejects file's lines
	}{
		{"csv as jsonl", "a.csv", "fname;zip\nAnn;8002\n\"Bo; Jr\";123\n", FormatJSONL, 0,
			[]string{`{"fname":"Ann","zip":"8002","error":"bad zip"}`, `{"fname":"Bo; Jr","zip":"123","error":"bad zip"}`}},
		{"csv as tsv", "a.csv", "fname,zip\nAnn,8002\n", FormatCSV, '\t',
			[]string{"error\tfname\tzip", "bad zip\tAnn\t8002"}},
		{"jsonl as csv", "a.jsonl", `{"firstName":"Ann","zipCode":"8002","extra":1}` + "\n", FormatCSV, ',',
			nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tc.input), tc.file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			x := NewRejects(&out, r, tc.as, tc.comma)
			for {
				rec, err := r.next()
				if err != nil {
					break
				}
				if err := x.Write(&rec, "bad zip"); err != nil {
					t.Fatal(err)
				}
			}
			if err := x.Flush(); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if tc.want != nil && !slices.Equal(lines, tc.want) {
				t.Errorf("rejects = %q, want %q", lines, tc.want)
			}
			// Read back in the rejects file's own format: the values survive.
			name := "rejects.jsonl"
			if tc.as == FormatCSV {
				name = "rejects.csv"
			}
			back, err := NewReader(strings.NewReader(out.String()), name, Options{Delimiter: tc.comma})
			if err != nil {
				t.Fatalf("read rejects back: %v", err)
			}
			rec, err := back.next()
			if err != nil || rec.Err != nil {
				t.Fatalf("read rejects back: %v %v", err, rec.Err)
			}
			if rec.Values[lead.FirstName] != "Ann" || rec.Values[lead.ZipCode] != "8002" {
				t.Errorf("rejects read back: firstName %q zipCode %q, want Ann 8002", rec.Values[lead.FirstName], rec.Values[lead.ZipCode])
			}
		})
	}
}

func TestRejectsNotJSONKeepsLine(t *testing.T) {
	_, rejects := rejectAll(t, []byte("not json\n"), "a.jsonl", Options{})
	want := `{"error":"bad \"value\", see docs","raw":"not json"}` + "\n"
	if string(rejects) != want {
		t.Errorf("rejects(not json) = %q, want %q", rejects, want)
	}
}
