package redact

import (
	"strings"
	"testing"
)

func TestParseWritten(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []birthDate
	}{
		{"Jan 2 1980", []birthDate{{"1980", "80", 1, 2}}},
		{"2 January 1980", []birthDate{{"1980", "80", 1, 2}}},
		{"January 2nd, 1980", []birthDate{{"1980", "80", 1, 2}}},
		{"1980 Jan 02", []birthDate{{"1980", "80", 1, 2}}},
		{"02-JAN-80", []birthDate{{"", "80", 1, 2}}},
		{"01/02/1980", []birthDate{{"1980", "80", 1, 2}, {"1980", "80", 2, 1}}},
		{"13/02/1980", []birthDate{{"1980", "80", 2, 13}}},
		{"1980.1.2", []birthDate{{"1980", "80", 1, 2}}},
		{"19800102", []birthDate{{"1980", "80", 1, 2}}},
		{"01021980", []birthDate{{"1980", "80", 1, 2}, {"1980", "80", 2, 1}}},
		{"Jan 32 1980", nil},
		{"yesterday", nil},
		{"1980-01-02 extra", nil},
		{"", nil},
	} {
		got := parseWritten(tc.in)
		if len(got) != len(tc.want) {
			t.Errorf("parseWritten(%q) = %+v, want %+v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("parseWritten(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		}
	}
}

// TestOwnWrittenDate: a date of birth given in a form other than
// YYYY-MM-DD is found in the other forms it may be written in.
func TestOwnWrittenDate(t *testing.T) {
	o := NewOwn("", "Jan 2 1980")
	for _, s := range []string{"2 January 1980", "1980-01-02", "01/02/1980", "January 2, 1980", "02-JAN-80", "19800102"} {
		if got := o.Cut("x "+s+" y", false); got != "x "+Text+" y" {
			t.Errorf("Cut(%q) = %q, want it cut", s, got)
		}
	}
	if got := o.Cut("x 1980-01-03 y", false); got != "x 1980-01-03 y" {
		t.Errorf("Cut of another date = %q, want it kept", got)
	}
}

// FuzzParseWritten: every reading of a written date is a real month and
// day, and an Own given that text as its date of birth cuts it out of any
// text it stands in, between spaces.
//
//	go test ./package redact -run '^$' -fuzz FuzzParseWritten -fuzztime 10m
func FuzzParseWritten(f *testing.F) {
	for _, s := range []string{"Jan 2 1980", "2 January 1980", "01/02/1980", "19800102", "02-JAN-80", "1980_1_2", "Sept 31st 99"} {
		f.Add(s, "text around")
	}
	f.Fuzz(func(t *testing.T, s, around string) {
		ds := parseWritten(s)
		for _, d := range ds {
			if d.m < 1 || d.m > 12 || d.d < 1 || d.d > 31 || len(d.y2) != 2 || (d.y4 != "" && d.y4[2:] != d.y2) {
				t.Fatalf("parseWritten(%q) = %+v: not a date", s, ds)
			}
		}
		if len(ds) == 0 {
			return
		}
		text := around + " " + s + " " + around
		if out := NewOwn("", s).Cut(text, false); strings.Contains(out, " "+s+" ") {
			t.Fatalf("Cut(%q) = %q: the date of birth %q is still there", text, out, s)
		}
	})
}
