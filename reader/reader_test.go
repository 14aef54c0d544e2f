package reader

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/lead"
)

// readAll reads every record of in; Raw is copied so it outlives Next.
func readAll(t *testing.T, in []byte, name string, opts Options) ([]Record, []string, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(in), name, opts)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var recs []Record
	for i := 0; ; i++ {
		if i > 1<<20 {
			t.Fatalf("more records than input bytes: reader does not advance")
		}
		rec, err := r.next()
		if errors.Is(err, io.EOF) {
			return recs, r.Unknown(), nil
		}
		if err != nil {
			return recs, r.Unknown(), err
		}
		rec.Raw = bytes.Clone(rec.Raw)
		recs = append(recs, rec)
	}
}

// describe renders a record compactly: "row@line field=value ..." or
// "row@line ERR: message".
func describe(rec Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d@%d", rec.Row, rec.Line)
	if rec.Err != nil {
		fmt.Fprintf(&b, " ERR: %v", rec.Err)
		return b.String()
	}
	for f := lead.Field(0); f < lead.NumFields; f++ {
		if v := rec.Values[f]; v != "" {
			fmt.Fprintf(&b, " %s=%s", f, v)
		}
	}
	return b.String()
}

func describeAll(recs []Record) []string {
	out := make([]string, len(recs))
	for i, rec := range recs {
		out[i] = describe(rec)
	}
	return out
}

func utf16le(s string) string {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r), byte(r>>8))
	}
	return string(b)
}

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type readCase struct {
	name    string
	file    string // file name given to NewReader
	in      string
	opts    Options
	want    []string // describe() of each record; ERR lines match by prefix
	unknown []string
	wantErr string // error from NewReader or Next, by substring
}

func runReadCases(t *testing.T, cases []readCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recs, unknown, err := readAll(t, []byte(tc.in), tc.file, tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("read(%q) error = %v, want it to contain %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("read(%q) error = %v", tc.in, err)
			}
			got := describeAll(recs)
			if len(got) != len(tc.want) {
				t.Fatalf("read(%q) =\n%s\nwant\n%s", tc.in, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for i := range got {
				if got[i] != tc.want[i] && !(strings.Contains(tc.want[i], " ERR: ") && strings.HasPrefix(got[i], tc.want[i])) {
					t.Errorf("read(%q) record %d = %q, want %q", tc.in, i, got[i], tc.want[i])
				}
			}
			if tc.unknown != nil && !slices.Equal(unknown, tc.unknown) {
				t.Errorf("read(%q) Unknown() = %q, want %q", tc.in, unknown, tc.unknown)
			}
		})
	}
}

func TestCSV(t *testing.T) {
	runReadCases(t, []readCase{
		{name: "bom and crlf", file: "a.csv", in: "\ufeffFirst Name,Last Name\r\nAnn,Lee\r\nBob,Ray\r\n",
			want: []string{"1@2 firstName=Ann lastName=Lee", "2@3 firstName=Bob lastName=Ray"}, unknown: []string{}},
		{name: "quoted comma and newline", file: "a.csv",
			in:   "fname,lname,address\nAnn,Lee,\"1 Main St, Apt 2\"\nBob,Ray,\"line1\r\nline2\"\nCy,Do,x\n",
			want: []string{"1@2 firstName=Ann lastName=Lee address1=1 Main St, Apt 2", "2@3 firstName=Bob lastName=Ray address1=line1\nline2", "3@5 firstName=Cy lastName=Do address1=x"}},
		{name: "quoted quote", file: "a.csv", in: "fname,lname\n\"Ann \"\"A\"\"\",Lee\n",
			want: []string{`1@2 firstName=Ann "A" lastName=Lee`}},
		{name: "semicolon sniffed", file: "a.csv", in: "fname;lname;city\nAnn;Lee;Paris, TX\n",
			want: []string{"1@2 firstName=Ann lastName=Lee city=Paris, TX"}},
		{name: "pipe sniffed", file: "a.csv", in: "fname|lname|city\nAnn|Lee|Paris, TX\n",
			want: []string{"1@2 firstName=Ann lastName=Lee city=Paris, TX"}},
		{name: "tab sniffed", file: "a.tsv", in: "fname\tlname\tcity\nAnn\tLee\tParis, TX\n",
			want: []string{"1@2 firstName=Ann lastName=Lee city=Paris, TX"}},
		{name: "quoted delimiter in header not counted", file: "a.csv", in: "\"a;b;c\",fname\nx,Ann\n",
			want: []string{"1@2 firstName=Ann"}, unknown: []string{"a;b;c"}},
		{name: "delimiter forced", file: "a.csv", in: "first name;last,name\nAnn;Lee,Jr\n", opts: Options{Delimiter: ';'},
			want: []string{"1@2 firstName=Ann lastName=Lee,Jr"}},
		{name: "tab forced", file: "a.csv", in: "fname\tlast,name\nAnn\tLee,Jr\n", opts: Options{Delimiter: '\t'},
			want: []string{"1@2 firstName=Ann lastName=Lee,Jr"}},
		{name: "invalid delimiter", file: "a.csv", in: "a\n", opts: Options{Delimiter: '"'}, wantErr: "invalid delimiter"},
		{name: "latin1", file: "a.csv", in: "fname,lname\nJos\xe9,Mu\xf1oz\n", opts: Options{Encoding: "ISO-8859-1"},
			want: []string{"1@2 firstName=José lastName=Muñoz"}},
		{name: "windows-1252 right quote", file: "a.csv", in: "fname,lname\nJos\xe9,O\x92Ne\xf1a\n", opts: Options{Encoding: "cp1252"},
			want: []string{"1@2 firstName=José lastName=O’Neña"}},
		{name: "latin1 read as utf-8", file: "a.csv", in: "fname,lname\nJos\xe9,Lee\nBob,Ray\n", opts: Options{EncodingHint: "--encoding windows-1252"},
			want: []string{"1@2 ERR: malformed record: row 1 (line 2): text is not valid UTF-8; if the file comes from a spreadsheet, pass --encoding windows-1252", "2@3 firstName=Bob lastName=Ray"}},
		{name: "latin1 read as utf-8, no setting named", file: "a.csv", in: "fname,lname\nJos\xe9,Lee\nBob,Ray\n",
			want: []string{"1@2 ERR: malformed record: row 1 (line 2): text is not valid UTF-8 (a spreadsheet's export may be Windows-1252)", "2@3 firstName=Bob lastName=Ray"}},
		{name: "latin1 in JSONL read as utf-8", file: "a.jsonl", in: "{\"fname\":\"Jos\xe9\"}\n", opts: Options{EncodingHint: "--encoding windows-1252"},
			want: []string{"1@1 ERR: malformed record: row 1 (line 1): text is not valid UTF-8; if the file comes from a spreadsheet, pass --encoding windows-1252"}},
		{name: "unknown encoding", file: "a.csv", in: "a\n", opts: Options{Encoding: "ebcdic"}, wantErr: `unknown encoding "ebcdic"`},
		{name: "utf-16 with bom", file: "a.csv", in: utf16le("\ufefffname,zip\r\nA,1\r\n"),
			want: []string{"1@2 firstName=A zipCode=1"}},
		{name: "lone CR line ends (old Mac export)", file: "a.csv", in: "fname,address\rAnn,\"a\rb\"\r\rBob,c\r",
			want: []string{"1@2 firstName=Ann address1=a\nb", "2@5 firstName=Bob address1=c"}},
		{name: "blank lines", file: "a.csv", in: "\n\nfname\n\nAnn\n\r\n\nBob\n\n",
			want: []string{"1@5 firstName=Ann", "2@8 firstName=Bob"}},
		{name: "rows of empty cells are blank", file: "a.csv", in: "fname,lname\n,\nAnn,Lee\n\"\", \n",
			want: []string{"1@3 firstName=Ann lastName=Lee"}},
		{name: "trailing empty columns", file: "a.csv", in: "fname,lname,,\nAnn,Lee,,\nBob,Ray\nCy,Do,,,,\nDee,Ek,x\n",
			want: []string{"1@2 firstName=Ann lastName=Lee", "2@3 firstName=Bob lastName=Ray", "3@4 firstName=Cy lastName=Do",
				"4@5 ERR: malformed record: row 4 (line 5): the row has 3 fields but the header has 2 columns, and the extra fields are not empty"}, unknown: []string{}},
		{name: "empty header in the middle", file: "a.csv", in: "fname,,lname\nAnn,x,Lee\n",
			want: []string{"1@2 firstName=Ann lastName=Lee"}, unknown: []string{"(column 2 has no header)"}},
		{name: "bare quote then goes on", file: "a.csv", in: "fname,lname\nA\"b,c\nBob,Ray\n",
			want: []string{"1@2 ERR: malformed record: row 1 (line 2, column 2): a quote (\") in a field that does not start with one", "2@3 firstName=Bob lastName=Ray"}},
		{name: "quote not closed properly", file: "a.csv", in: "fname,lname\n\"A\"b,c\nBob,Ray\n",
			want: []string{"1@2 ERR: malformed record: row 1 (line 2, column 3): text after the closing quote of a quoted field", "2@3 firstName=Bob lastName=Ray"}},
		{name: "unterminated quote at end of file", file: "a.csv", in: "fname,lname\nBob,Ray\n\"Ann,Lee\nCy,Do\n",
			want: []string{"1@2 firstName=Bob lastName=Ray", "2@3 ERR: malformed record: row 2 (line 3): a quoted field is not closed on the row's first line", "3@4 firstName=Cy lastName=Do"}},
		{name: "too few fields", file: "a.csv", in: "fname,lname,zip\nAnn,Lee\nBob,Ray,1\n",
			want: []string{"1@2 ERR: malformed record: row 1 (line 2): the row has 2 fields but the header has 3 columns", "2@3 firstName=Bob lastName=Ray zipCode=1"}},
		{name: "too many fields", file: "a.csv", in: "fname,lname\nAnn,Lee,x,y\n",
			want: []string{"1@2 ERR: malformed record: row 1 (line 2): the row has 4 fields but the header has 2 columns, and the extra fields are not empty"}},
		{name: "no known value", file: "a.csv", in: "fname,notes\n,hello\n",
			want: []string{"1@2 ERR: malformed record: row 1 (line 2): no known column has a value"}, unknown: []string{"notes"}},
		{name: "header synonyms and loose matching", file: "a.csv",
			in: "FIRSTNAME,last_name,E-Mail,Zip Code,D.O.B.,SSN,Mobile,Phone #,TCPA Consent,xxTrustedFormCertUrl,Lead Source,Loan Amount ($),Co-App,Residence Type,Annual Income,Address Line 2,St\n" +
				"Ann,Lee,a@b.c,12345,1980-01-02,123456789,5551234567,5557654321,yes,https://cert/x,7,5000,no,1,60000,Apt 2,TX\n",
			want:    []string{"1@2 firstName=Ann lastName=Lee dateOfBirth=1980-01-02 email=a@b.c homePhone=5557654321 cellPhone=5551234567 address2=Apt 2 state=TX zipCode=12345 loanAmount=5000 trustedformCertificateID=https://cert/x socialSecurityNumber=123456789 grossAnnualIncome=60000 residenceTypeId=1 termsConsent=yes coApplicant=no leadSourceId=7"},
			unknown: []string{}},
		{name: "mapping renames win over names and synonyms", file: "a.csv", in: "Cust Ref,ref,Notes\nR1,L1,n\n",
			opts: Options{Columns: map[string]string{"cust_ref": "ref", "REF": "leadId", "notes": "-"}},
			want: []string{"1@2 leadId=L1 ref=R1"}, unknown: []string{}},
		{name: "mapping to unknown field", file: "a.csv", in: "a\n", opts: Options{Columns: map[string]string{"a": "nickname"}},
			wantErr: `maps to unknown field "nickname"`},
		{name: "unknown and duplicate columns reported once", file: "a.csv", in: "fname,notes,Notes,zip,Zip Code,first\nAnn,a,b,1,2,Bo\nCy,c,d,3,4,Di\n",
			want:    []string{"1@2 firstName=Ann zipCode=1", "2@3 firstName=Cy zipCode=3"},
			unknown: []string{"notes", "Notes", "Zip Code (duplicate of zipCode)", "first (duplicate of firstName)"}},
		{name: "error column ignored", file: "a.csv", in: "error,fname\n\"row 1: bad\",Ann\n",
			want: []string{"1@2 firstName=Ann"}, unknown: []string{}},
		{name: "empty file", file: "a.csv", in: "", wantErr: "the file is empty"},
		{name: "header without names", file: "a.csv", in: "\n,,\nAnn,Lee,x\n", wantErr: "the header line (line 2) has no column names"},
		{name: "header only", file: "a.csv", in: "fname,lname\r\n", want: []string{}},
		{name: "no final newline", file: "a.csv", in: "fname\nAnn", want: []string{"1@2 firstName=Ann"}},
		{name: "stdin needs a format", file: "-", in: "fname\nAnn\n", wantErr: "reading standard input: its format cannot be told from a name"},
		{name: "stdin with format", file: "-", in: "fname\nAnn\n", opts: Options{Format: FormatCSV}, want: []string{"1@2 firstName=Ann"}},
		{name: "unknown extension", file: "a.xlsx", in: "fname\nAnn\n", wantErr: "cannot tell the format"},
		{name: "gzip by suffix", file: "a.csv.gz", in: string(gz(t, "fname\nAnn\n")), want: []string{"1@2 firstName=Ann"}},
		{name: "gzip by magic bytes", file: "-", opts: Options{Format: FormatCSV}, in: string(gz(t, "\ufefffname\r\nAnn\r\n")), want: []string{"1@2 firstName=Ann"}},
		{name: "gzip suffix but not gzip", file: "a.csv.gz", in: "fname\nAnn\n", wantErr: "not a readable gzip file"},
		{name: "corrupt gzip", file: "a.csv.gz", in: string(gz(t, strings.Repeat("fname\nAnn\n", 1000))[:60]), wantErr: "read a.csv.gz"},
	})
}

func TestJSONL(t *testing.T) {
	runReadCases(t, []readCase{
		{name: "values", file: "a.jsonl",
			in:   `{"first_name":"Ann","zip":"01234","loan_amount":5000.50,"income":6e4,"consent":true,"coapp":false,"ref":null,"Notes":"x"}` + "\n",
			want: []string{"1@1 firstName=Ann zipCode=01234 loanAmount=5000.50 grossAnnualIncome=6e4 termsConsent=true coApplicant=false"}, unknown: []string{"Notes"}},
		{name: "bom crlf blank lines", file: "a.ndjson", in: "\ufeff{\"fname\":\"Ann\"}\r\n\r\n  \n{\"fname\":\"Bob\"}\r\n",
			want: []string{"1@1 firstName=Ann", "2@4 firstName=Bob"}},
		{name: "not json then goes on", file: "a.jsonl", in: "{\"fname\":\"Ann\"}\nfname,Bob\n{\"fname\":\"Cy\"}\n",
			want: []string{"1@1 firstName=Ann", "2@2 ERR: malformed record: row 2 (line 2, column 2): not valid JSON; check the line is one JSON object", "3@3 firstName=Cy"}},
		{name: "not an object", file: "a.jsonl", in: "[1,2]\n\"x\"\n",
			want: []string{"1@1 ERR: malformed record: row 1 (line 1): the line is not a JSON object", "2@2 ERR: malformed record: row 2 (line 2): the line is not a JSON object"}},
		{name: "array value", file: "a.jsonl", in: "{\"fname\":\"Ann\",\"phone\":[\"1\"]}\n",
			want: []string{`1@1 ERR: malformed record: row 1 (line 1): key "phone" holds an array`}},
		{name: "object value", file: "a.jsonl", in: "{\"address\":{\"city\":\"x\"}}\n",
			want: []string{`1@1 ERR: malformed record: row 1 (line 1): key "address" holds an object`}},
		{name: "duplicate known key holding an array", file: "a.jsonl", in: "{\"fname\":\"Ann\",\"first\":[1]}\n",
			want: []string{`1@1 ERR: malformed record: row 1 (line 1): key "first" holds an array`}},
		{name: "unknown keys holding objects and arrays", file: "a.jsonl",
			in:      "{\"extra\":{\"a\":[1,{\"b\":\"}]\"}],\"c\":{}},\"fname\":\"Ann\",\"tags\":[\"x\",[]],\"zip\":\"1\"}\n{\"extra\":[],\"fname\":\"Bob\",\"error\":{\"x\":1}}\n",
			want:    []string{"1@1 firstName=Ann zipCode=1", "2@2 firstName=Bob"},
			unknown: []string{"extra", "tags"}},
		{name: "unclosed object", file: "a.jsonl", in: "{\"fname\":\"Ann\"\n",
			want: []string{"1@1 ERR: malformed record: row 1 (line 1): not valid JSON"}},
		{name: "text after object", file: "a.jsonl", in: "{\"fname\":\"Ann\"} {\"fname\":\"Bob\"}\n",
			want: []string{"1@1 ERR: malformed record: row 1 (line 1, column 17): text after the JSON object"}},
		{name: "no known key", file: "a.jsonl", in: "{\"notes\":\"x\"}\n{}\n",
			want: []string{"1@1 ERR: malformed record: row 1 (line 1): no known key has a value", "2@2 ERR: malformed record: row 2 (line 2): no known key has a value"}},
		{name: "unknown keys in order, once", file: "a.jsonl", in: "{\"b\":1,\"fname\":\"A\",\"a\":2}\n{\"c\":1,\"b\":2,\"fname\":\"B\",\"first\":\"C\"}\n",
			want:    []string{"1@1 firstName=A", "2@2 firstName=B"},
			unknown: []string{"b", "a", "c", "first (duplicate of firstName)"}},
		{name: "error key ignored", file: "a.jsonl", in: "{\"fname\":\"A\",\"error\":\"x\"}\n", want: []string{"1@1 firstName=A"}, unknown: []string{}},
		{name: "latin1", file: "a.jsonl", in: "{\"fname\":\"Jos\xe9\"}\n", opts: Options{Encoding: "latin1"}, want: []string{"1@1 firstName=José"}},
		{name: "latin1 read as utf-8", file: "a.jsonl", in: "{\"fname\":\"Jos\xe9\"}\n", want: []string{"1@1 ERR: malformed record: row 1 (line 1): text is not valid UTF-8"}},
		{name: "gzip", file: "a.jsonl.gz", in: string(gz(t, "{\"fname\":\"Ann\"}")), want: []string{"1@1 firstName=Ann"}},
		{name: "stdin", file: "-", opts: Options{Format: FormatJSONL}, in: "{\"fname\":\"Ann\"}\n", want: []string{"1@1 firstName=Ann"}},
		{name: "empty", file: "a.jsonl", in: "", want: []string{}},
		{name: "line too long then goes on", file: "a.jsonl",
			in:   `{"fname":"` + strings.Repeat("x", maxRecord) + "\"}\n{\"fname\":\"Bob\"}\n",
			want: []string{"1@1 ERR: malformed record: row 1 (line 1): line longer than 1048576 bytes", "2@2 firstName=Bob"}},
	})
}

// TestHeader checks that the reader gives each field's name as the
// partner's file has it: the CSV header, or the first JSONL key.
func TestHeader(t *testing.T) {
	for _, tc := range []struct {
		name, file, in string
		opts           Options
		want           map[lead.Field]string
	}{
		{name: "csv", file: "a.csv", in: " Zip Code ,SSN,firstName\n1,2,3\n",
			want: map[lead.Field]string{lead.ZipCode: "Zip Code", lead.SocialSecurityNumber: "SSN", lead.FirstName: "firstName", lead.State: ""}},
		{name: "csv mapped", file: "a.csv", in: "Cust SSN,fname\n1,2\n", opts: Options{Columns: map[string]string{"Cust SSN": "socialSecurityNumber"}},
			want: map[lead.Field]string{lead.SocialSecurityNumber: "Cust SSN", lead.FirstName: "fname"}},
		{name: "jsonl first key", file: "a.jsonl", in: "{\"zip\":\"1\"}\n{\"postal_code\":\"2\",\"fname\":\"A\"}\n",
			want: map[lead.Field]string{lead.ZipCode: "zip", lead.FirstName: "fname", lead.City: ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tc.in), tc.file, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for {
				if _, err := r.next(); err != nil {
					break
				}
			}
			for f, want := range tc.want {
				if got := r.Header(f); got != want {
					t.Errorf("Header(%s) = %q, want %q", f, got, want)
				}
			}
		})
	}
}

// TestCSVRecordTooLong checks that a record over the limit is one
// malformed row and reading goes on, whatever made it long (a cell of
// megabytes on one line, quoted or not, or a quote left open), without the
// reader buffering the rest of the file; and that empty lines, however
// many, are never a record over the limit.
func TestCSVRecordTooLong(t *testing.T) {
	big := strings.Repeat("x", 2*maxRecord) // a 10 MB cell reads the same way, only slower
	blank := strings.Repeat("\n", maxRecord+2*bufSize)
	const tooLong = "ERR: malformed record: row 2 (line 3): record longer than 1048576 bytes; the row is skipped"
	runReadCases(t, []readCase{
		{name: "unterminated quote", file: "a.csv", in: "fname,lname\nAnn,Lee\n\"Bob,Ray\n" + strings.Repeat("Cy,Do\n", (maxRecord+2*bufSize)/6+1),
			want: append([]string{"1@2 firstName=Ann lastName=Lee", "2@3 ERR: malformed record: row 2 (line 3): record longer than 1048576 bytes: a quoted field is not closed on the row's first line"},
				func() []string {
					var w []string
					for i := range (maxRecord+2*bufSize)/6 + 1 {
						w = append(w, fmt.Sprintf("%d@%d firstName=Cy lastName=Do", i+3, i+4))
					}
					return w
				}()...)},
		{name: "10 MB cell", file: "a.csv", in: "fname,lname\nAnn,Lee\nBob," + big + "\nCy,Do\n",
			want: []string{"1@2 firstName=Ann lastName=Lee", "2@3 " + tooLong, "3@4 firstName=Cy lastName=Do"}},
		{name: "10 MB quoted cell", file: "a.csv", in: "fname,lname\r\nAnn,Lee\r\nBob,\"" + big + "\"\r\nCy,Do\r\n",
			want: []string{"1@2 firstName=Ann lastName=Lee", "2@3 " + tooLong, "3@4 firstName=Cy lastName=Do"}},
		{name: "10 MB cell at the end", file: "a.csv", in: "fname,lname\nAnn,Lee\nBob," + big,
			want: []string{"1@2 firstName=Ann lastName=Lee", "2@3 " + tooLong}},
		{name: "10 MB cell after blank lines", file: "a.csv", in: "fname,lname\nAnn,Lee\n\n\r\nBob," + big + "\nCy,Do\n",
			want: []string{"1@2 firstName=Ann lastName=Lee", "2@5 ERR: malformed record: row 2 (line 5): record longer", "3@6 firstName=Cy lastName=Do"}},
		{name: "blank lines over the limit", file: "a.csv", in: "fname,lname\nAnn,Lee\n" + blank + "Bob,Ray\n",
			want: []string{"1@2 firstName=Ann lastName=Lee", fmt.Sprintf("2@%d firstName=Bob lastName=Ray", 3+len(blank))}},
		{name: "blank lines over the limit at the end", file: "a.csv", in: "fname,lname\nAnn,Lee\n" + blank,
			want: []string{"1@2 firstName=Ann lastName=Lee"}},
		{name: "blank lines over the limit before the header", file: "a.csv", in: blank + "fname,lname\nAnn,Lee\n",
			want: []string{fmt.Sprintf("1@%d firstName=Ann lastName=Lee", 2+len(blank))}},
	})
}

// TestLineMatchesFieldPos checks that the line this package counts agrees
// with csv.Reader's FieldPos over rows that span lines and follow errors.
func TestLineNumbers(t *testing.T) {
	in := "\r\nfname,address\r\n\r\nAnn,\"a\r\nb\r\n\"\r\nBad\"q,x\r\n\"Cy\",\"c\"\r\n,\r\nDi,\"\n\n\"\nEd,e"
	recs, _, err := readAll(t, []byte(in), "a.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1@4 firstName=Ann address1=a\nb\n", "2@7 ERR", "3@8 firstName=Cy address1=c", "4@10 firstName=Di address1=\n\n", "5@13 firstName=Ed address1=e"}
	got := describeAll(recs)
	if len(got) != len(want) {
		t.Fatalf("read(%q) = %q, want %q", in, got, want)
	}
	for i := range got {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("read(%q) record %d = %q, want %q", in, i, got[i], want[i])
		}
	}
	wantRaw := []string{"Ann,\"a\r\nb\r\n\"", "Bad\"q,x", "\"Cy\",\"c\"", "Di,\"\n\n\"", "Ed,e"}
	for i, rec := range recs {
		if string(rec.Raw) != wantRaw[i] {
			t.Errorf("read(%q) record %d Raw = %q, want %q", in, i, rec.Raw, wantRaw[i])
		}
	}
}

// TestErrorsDoNotLeak checks that no error quotes cell contents, so an SSN
// or date of birth in a malformed row never reaches a log or results file.
func TestErrorsDoNotLeak(t *testing.T) {
	const ssn, dob = "123456789", "1980-01-02"
	cases := []struct{ name, file, in string }{
		{"bare quote", "a.csv", "ssn,dob\n1234\"56789,1980-01-02\n"},
		{"quote not closed", "a.csv", "ssn,dob\n\"123456789\"x,1980-01-02\n"},
		{"field count", "a.csv", "ssn,dob,zip\n123456789,1980-01-02\n"},
		{"extra fields", "a.csv", "ssn,dob\n1,2,123456789,1980-01-02\n"},
		{"not json", "a.jsonl", "{\"ssn\":123456789,\"dob\":1980-01-02}\n"},
		{"bad literal", "a.jsonl", "{\"ssn\":123456789x}\n"},
		{"array", "a.jsonl", "{\"ssn\":[\"123456789\"],\"dob\":\"1980-01-02\"}\n"},
		{"invalid utf-8", "a.csv", "ssn,dob\n123456789\xff,1980-01-02\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recs, _, err := readAll(t, []byte(tc.in), tc.file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1 || recs[0].Err == nil {
				t.Fatalf("read(%q) = %q, want one malformed record", tc.in, describeAll(recs))
			}
			if msg := recs[0].Err.Error(); strings.Contains(msg, ssn) || strings.Contains(msg, dob) || strings.Contains(msg, "12345") {
				t.Errorf("read(%q) Err = %q, quotes the SSN or date of birth", tc.in, msg)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	content := gz(t, strings.Repeat("fname,zip\nAnn,1\n", 3))
	path := filepath.Join(dir, "leads.CSV.GZ")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := openInput(path, nil, Options{})
	if err != nil {
		t.Fatalf("Open(%q) error = %v", path, err)
	}
	if got := r.Format(); got != FormatCSV {
		t.Errorf("Format() = %v, want csv", got)
	}
	if got := r.Size(); got != int64(len(content)) {
		t.Errorf("Size() = %d, want %d", got, len(content))
	}
	n := 0
	for ; ; n++ {
		if _, err := r.next(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("Next() error = %v", err)
			}
			break
		}
	}
	if n != 5 {
		t.Errorf("Open(%q) read %d records, want 5 (the header repeats as a data row twice)", path, n)
	}
	if got := r.BytesRead(); got != int64(len(content)) {
		t.Errorf("BytesRead() = %d, want %d (compressed size)", got, len(content))
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close() error = %v", err)
	}

	r, err = openInput("-", strings.NewReader("{\"fname\":\"A\"}\n"), Options{Format: FormatJSONL})
	if err != nil {
		t.Fatalf("Open(-) error = %v", err)
	}
	if got := r.Size(); got != -1 {
		t.Errorf("Open(-).Size() = %d, want -1", got)
	}
	if rec, err := r.next(); err != nil || rec.Values[lead.FirstName] != "A" {
		t.Errorf("Open(-).next() = %q, %v, want firstName A", describe(rec), err)
	}
	_ = r.Close()

	if _, err := openInput(filepath.Join(dir, "missing.csv"), nil, Options{}); err == nil || !strings.Contains(err.Error(), "missing.csv") {
		t.Errorf("Open(missing) error = %v, want it to name the file", err)
	}
}

func TestParseFormat(t *testing.T) {
	cases := []struct {
		in      string
		want    Format
		wantErr bool
	}{
		{"", FormatAuto, false}, {"CSV", FormatCSV, false}, {"tsv", FormatCSV, false},
		{"jsonl", FormatJSONL, false}, {"ndjson", FormatJSONL, false}, {"xml", FormatAuto, true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseFormat(tc.in)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("ParseFormat(%q) = %v, %v, want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"First Name", "firstname"}, {"first_name", "firstname"}, {"FIRST-NAME", "firstname"},
		{" D.O.B. ", "dob"}, {"Phone #", "phone"}, {"Prénom", "prénom"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			if got := normalize(tc.in); got != tc.want {
				t.Errorf("normalize(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestSynonymsResolve checks every synonym resolves to its field and none is
// claimed by two fields.
func TestSynonymsResolve(t *testing.T) {
	res, err := newResolver(nil)
	if err != nil {
		t.Fatal(err)
	}
	owner := map[string]lead.Field{}
	for f, names := range synonyms() {
		for _, n := range names {
			if prev, ok := owner[n]; ok && prev != f {
				t.Errorf("synonym %q claimed by %v and %v", n, prev, f)
			}
			owner[n] = f
			if normalize(n) != n {
				t.Errorf("synonym %q is not normalised", n)
			}
			if got := res.resolve(n); got.kind != colField || got.field != f {
				t.Errorf("resolve(%q) = %+v, want %v", n, got, f)
			}
		}
	}
	for f := lead.Field(0); f < lead.NumFields; f++ {
		if got := res.resolve(f.String()); got.field != f {
			t.Errorf("resolve(%q) = %+v, want %v", f.String(), got, f)
		}
	}
}

func TestScanFields(t *testing.T) {
	cases := []struct {
		raw   string
		comma rune
		n     int
		want  fieldScan
	}{
		{"a,b,c", ',', 3, fieldScan{fields: 3}},
		{"a,b,,", ',', 2, fieldScan{fields: 4}},
		{"a,b,, x", ',', 2, fieldScan{fields: 4, extraSet: true}},
		{`a,"b,c",d`, ',', 3, fieldScan{fields: 3}},
		{`a,"b,""c""",,""`, ',', 2, fieldScan{fields: 4}},
		{`a,b,"x"`, ',', 2, fieldScan{fields: 3, extraSet: true}},
		{`a,b,""""`, ',', 2, fieldScan{fields: 3, extraSet: true}},
		{",  ,\t", ',', 3, fieldScan{fields: 3, blank: true}},
		{`"",""`, ',', 2, fieldScan{fields: 2, blank: true}},
		{"a¦b¦c", '¦', 3, fieldScan{fields: 3}},
		{"a¦\"b¦c\"¦¦", '¦', 2, fieldScan{fields: 4}},
		{"a;b,c", ';', 2, fieldScan{fields: 2}},
	}
	for _, tc := range cases {
		t.Run(tc.raw, func(t *testing.T) {
			if got := scanFields([]byte(tc.raw), tc.comma, tc.n); got != tc.want {
				t.Errorf("scanFields(%q, %q, %d) = %+v, want %+v", tc.raw, tc.comma, tc.n, got, tc.want)
			}
		})
	}
}

// TestBytesReadConcurrent polls BytesRead from another goroutine while the
// reader reads, as a progress display does; go test -race checks it.
func TestBytesReadConcurrent(t *testing.T) {
	in := "fname\n" + strings.Repeat("Ann\n", 50_000)
	r, err := NewReader(strings.NewReader(in), "a.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	polled := make(chan int64)
	go func() {
		var last int64
		for {
			select {
			case <-done:
				polled <- last
				return
			default:
				if n := r.BytesRead(); n < last {
					t.Errorf("BytesRead() went back from %d to %d", last, n)
				} else {
					last = n
				}
			}
		}
	}()
	rows := 0
	for ; rows <= 50_000; rows++ {
		if _, err := r.next(); err != nil {
			break
		}
	}
	close(done)
	<-polled
	if rows != 50_000 || r.BytesRead() != int64(len(in)) {
		t.Errorf("read %d rows, BytesRead() = %d, want 50000 rows and %d bytes", rows, r.BytesRead(), len(in))
	}
}

// TestHeaderless checks that a CSV file without a header line stops the run
// with an error that quotes none of its first row, and that a header cell
// that looks like data is withheld from Unknown.
func TestHeaderless(t *testing.T) {
	secrets := []string{"123-45-6789", "123456789", "1980-01-02", "01/02/1980", "ann@example.com", "Lee"}
	cases := []struct {
		name    string
		file    string
		in      string
		wantErr string
		unknown []string
	}{
		{name: "no header line", file: "a.csv",
			in:      "Ann,Lee,123-45-6789,1980-01-02,ann@example.com\nBob,Ray,987-65-4321,1970-03-04,bob@example.com\n",
			wantErr: "read a.csv: the first line names no known column (firstName, lastName, dateOfBirth, email, zipCode, ...); does the file lack a header line?"},
		{name: "no header line, ssn without dashes", file: "a.csv", in: "123456789;01/02/1980\n987654321;03/04/1970\n",
			wantErr: "the first line names no known column"},
		{name: "one cell is a synonym", file: "a.csv",
			in:      "Ann,Mobile,123-45-6789,1980-01-02,ann@example.com,1/2/80,Lee\nBob,Austin,987-65-4321,1970-03-04,bob@example.com,3/4/70,Ray\n",
			unknown: []string{"Ann", "(column 3: name withheld, it looks like data)", "(column 4: name withheld, it looks like data)", "(column 5: name withheld, it looks like data)", "(column 6: name withheld, it looks like data)", "Lee"}},
		{name: "jsonl keys", file: "a.jsonl", in: "{\"fname\":\"A\",\"123-45-6789\":1,\"ann@example.com\":2,\"1980-01-02\":3,\"Notes\":4}\n",
			unknown: []string{"(a key: name withheld, it looks like data)", "Notes"}},
		{name: "real header kept", file: "a.csv", in: "fname,Address 2,utm_source,Q4 2024 notes\nAnn,,,\n",
			unknown: []string{"utm_source", "(column 4: name withheld, it looks like data)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, unknown, err := readAll(t, []byte(tc.in), tc.file, Options{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("read(%q) error = %v, want it to contain %q", tc.in, err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("read(%q) error = %v", tc.in, err)
			}
			if tc.unknown != nil && !slices.Equal(unknown, tc.unknown) {
				t.Errorf("read(%q) Unknown() = %q, want %q", tc.in, unknown, tc.unknown)
			}
			out := fmt.Sprint(err, unknown)
			for _, s := range secrets {
				if strings.Contains(out, s) && !slices.Contains(tc.unknown, s) {
					t.Errorf("read(%q) error and Unknown() = %q, quote %q", tc.in, out, s)
				}
			}
		})
	}
}

// TestReasons checks that a malformed row's error carries its position
// apart from its reason, so that the same problem on many rows counts as one
// reason, and that the reason reads as a sentence.
func TestReasons(t *testing.T) {
	cases := []struct {
		name, file, in, want string
		line, column         int
	}{
		{"not json", "a.jsonl", "{\"fname\":\"Ann\"}\nfname,Bob\n", "malformed record: not valid JSON; check the line is one JSON object", 2, 2},
		{"not json late", "a.jsonl", "{\"fname\":\"Ann\",}\n", "malformed record: not valid JSON; check the line is one JSON object", 1, 16},
		{"bare quote", "a.csv", "fname,zip\nA\"nn,1\n", `malformed record: a quote (") in a field that does not start with one; put the whole field in quotes and double each quote inside it ("")`, 2, 2},
		{"field count", "a.csv", "fname,zip\nAnn\n", "malformed record: the row has 1 field but the header has 2 columns; a field is missing, or a value that holds the delimiter is not in quotes", 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recs, _, err := readAll(t, []byte(tc.in), tc.file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []lead.RowError
			for _, rec := range recs {
				if rec.Err != nil {
					got = append(got, *rec.Err)
				}
			}
			if len(got) != 1 || got[0].Reason() != tc.want || got[0].Field != lead.NoField || got[0].Line != tc.line || got[0].Column != tc.column {
				t.Errorf("read(%q) errors = %+v, want one with reason %q at line %d column %d", tc.in, got, tc.want, tc.line, tc.column)
			}
		})
	}
}

// TestUnclosedQuote checks that a quote left open does not swallow the rows
// after it: the broken row is reported with its first line only and the
// lines after it are read as rows of their own.
func TestUnclosedQuote(t *testing.T) {
	const unclosed = "ERR: malformed record: row 2 (line 3): a quoted field is not closed on the row's first line; the lines after it are read as rows of their own"
	runReadCases(t, []readCase{
		{name: "open to the end", file: "a.csv", in: "fname,ssn\nAnn,1\n\"Bob,123-45-6789\nCy,3\nDi,4\nEd,5\n",
			want: []string{"1@2 firstName=Ann socialSecurityNumber=1", "2@3 " + unclosed, "3@4 firstName=Cy socialSecurityNumber=3", "4@5 firstName=Di socialSecurityNumber=4", "5@6 firstName=Ed socialSecurityNumber=5"}},
		{name: "closed by a later row's quote", file: "a.csv", in: "fname,lname\nAnn,Lee\n\"Bob,Ray\nCy,Do\nDi,\"Ed\"\nEd,Fo\n",
			want: []string{"1@2 firstName=Ann lastName=Lee", "2@3 " + unclosed, "3@4 firstName=Cy lastName=Do", "4@5 firstName=Di lastName=Ed", "5@6 firstName=Ed lastName=Fo"}},
		{name: "twice, crlf, blank lines", file: "a.csv", in: "fname;lname\r\n\r\nAnn;\"Lee\r\n\r\nCy;Do\r\n\"Di;x\r\nEd;Fo",
			want: []string{"1@3 ERR: malformed record: row 1 (line 3): a quoted field is not closed", "2@5 firstName=Cy lastName=Do", "3@6 ERR: malformed record: row 3 (line 6): a quoted field is not closed", "4@7 firstName=Ed lastName=Fo"}},
		{name: "multi-line header kept", file: "a.csv", in: "\"first\nname\",zip\nAnn,1\n\"Bob,2\nCy,3\n",
			want: []string{"1@3 firstName=Ann zipCode=1", "2@4 ERR: malformed record: row 2 (line 4): a quoted field is not closed", "3@5 firstName=Cy zipCode=3"}},
		{name: "a closed multi-line field is one row", file: "a.csv", in: "fname,address\nAnn,\"1 Main\nApt 2\"\nBob,x\n",
			want: []string{"1@2 firstName=Ann address1=1 Main\nApt 2", "2@4 firstName=Bob address1=x"}},
	})
	recs, _, err := readAll(t, []byte("fname,ssn\nAnn,1\n\"Bob,123-45-6789\nCy,3\n"), "a.csv", Options{})
	if err != nil || len(recs) != 3 {
		t.Fatalf("read(unclosed quote) = %q, %v, want 3 records", describeAll(recs), err)
	}
	if got, want := string(recs[1].Raw), "\"Bob,123-45-6789"; got != want {
		t.Errorf("read(unclosed quote) broken row Raw = %q, want %q (its first line only)", got, want)
	}
	if msg := recs[1].Err.Error(); strings.Contains(msg, "123") || strings.Contains(msg, "Bob") {
		t.Errorf("read(unclosed quote) Err = %q, quotes a cell", msg)
	}
}

// TestCSVRowFields checks that csvRow is NumFields strings in Field order,
// each tagged with its field's name, so that gocsv fills it by the names and
// values reads it as a lead.Values.
func TestCSVRowFields(t *testing.T) {
	typ := reflect.TypeFor[csvRow]()
	if typ.NumField() != int(lead.NumFields) || typ.Size() != reflect.TypeFor[lead.Values]().Size() {
		t.Fatalf("csvRow has %d fields of %d bytes, want %d strings, as lead.Values", typ.NumField(), typ.Size(), lead.NumFields)
	}
	var row csvRow
	rv := reflect.ValueOf(&row).Elem()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.String || f.Tag.Get("csv") != lead.Field(i).String() {
			t.Errorf("csvRow field %d is %s %s `csv:%q`, want a string tagged %q", i, f.Name, f.Type, f.Tag.Get("csv"), lead.Field(i))
		}
		rv.Field(i).SetString(fmt.Sprint("v", i))
	}
	v := row.values()
	for f := range lead.NumFields {
		if want := fmt.Sprint("v", int(f)); v[f] != want {
			t.Errorf("values()[%s] = %q, want %q", f, v[f], want)
		}
	}
}

// The errors a caller adds its own hint to (the command line names its
// flags) are typed, with the input's name.
func TestTypedErrors(t *testing.T) {
	_, _, err := readAll(t, []byte("fname\nAnn\n"), "-", Options{})
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Name != "-" {
		t.Errorf("stdin without a format: error %v, want a *FormatError for -", err)
	}
	_, _, err = readAll(t, []byte("fname\nAnn\n"), "a.xlsx", Options{})
	if !errors.As(err, &fe) || fe.Name != "a.xlsx" {
		t.Errorf("a.xlsx: error %v, want a *FormatError for a.xlsx", err)
	}
	_, _, err = readAll(t, []byte("Ann,Lee,123-45-6789\n"), "a.csv", Options{})
	var he *HeaderError
	if !errors.As(err, &he) || he.Name != "a.csv" || strings.Contains(err.Error(), "Ann") {
		t.Errorf("no header line: error %v, want a *HeaderError for a.csv that quotes no data", err)
	}
}
