package synth

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/lead"
)

func TestSSNForScoreAndIssuable(t *testing.T) {
	tests := []struct {
		name  string
		i     int
		score int
	}{
		{"first row lowest score", 0, 300},
		{"score 600", 1, 600},
		{"score 849", 7, 849},
		{"top score", 12345, 850},
		{"clamped below", 3, 10},
		{"last unique index", MaxUniqueSSN - 1, 777},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := SSNFor(tc.i, tc.score)
			want := min(max(tc.score, MinScore), MaxScore)
			if got, ok := Score(s); !ok || got != want {
				t.Errorf("Score(SSNFor(%d, %d)) = %d, %v, want %d", tc.i, tc.score, got, ok, want)
			}
			if !issuable(s) {
				t.Errorf("SSNFor(%d, %d) is not issuable (value not shown: synthetic, but SSNs never go to output)", tc.i, tc.score)
			}
		})
	}
}

func issuable(s string) bool {
	if len(s) != 9 || strings.Trim(s, "0123456789") != "" {
		return false
	}
	area, group, serial := s[:3], s[3:5], s[5:]
	return area != "000" && area != "666" && area[0] != '9' && group != "00" && serial != "0000"
}

// TestSSNForUnique checks uniqueness over a sample that crosses every
// boundary of the index decomposition, for the hardest residue (0) and an
// ordinary one.
func TestSSNForUnique(t *testing.T) {
	for _, score := range []int{300, 650} {
		seen := make(map[string]int, 200_000)
		check := func(i int) {
			s := SSNFor(i, score)
			if j, dup := seen[s]; dup {
				t.Fatalf("SSNFor(%d, %d) = SSNFor(%d, %d)", i, score, j, score)
			}
			if !issuable(s) {
				t.Fatalf("SSNFor(%d, %d) is not issuable", i, score)
			}
			seen[s] = i
		}
		for i := range 100_000 {
			check(i)
		}
		for i := MaxUniqueSSN - 100_000; i < MaxUniqueSSN; i++ {
			check(i)
		}
	}
}

func TestRowDeterministic(t *testing.T) {
	opts := Options{Seed: 7, Style: Mixed, Qualified: 0.5, NoSSN: 0.1, Invalid: 0.2}
	g1, _ := New(opts)
	g2, _ := New(opts)
	var a, b lead.Values
	for _, i := range []int{5, 0, 999, 5} {
		fa, fb := g1.Row(i, &a), g2.Row(i, &b)
		g2.Row(i+1, &b) // a different row in between must not matter
		g2.Row(i, &b)
		if a != b || fa != fb {
			t.Errorf("Row(%d) differs between generators: %v vs %v", i, a, b)
		}
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"negative invalid", Options{Invalid: -0.1}},
		{"invalid above one", Options{Invalid: 1.5}},
		{"qualified plus nossn above one", Options{Qualified: 0.7, NoSSN: 0.4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.opts); err == nil {
				t.Errorf("New(%+v) = nil error, want one", tc.opts)
			}
		})
	}
}

// TestRowsUniqueAndParse writes rows in both styles and formats, reads them
// back with encoding/csv and encoding/json, and checks the identifiers the
// simulator deduplicates on never repeat.
func TestRowsUniqueAndParse(t *testing.T) {
	const n = 5000
	for _, style := range []Style{Clean, Mixed} {
		g, err := New(Options{Seed: 3, Style: style, Qualified: 0.5, NoSSN: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		var csvBuf, jsonBuf bytes.Buffer
		cw, jw := NewCSVWriter(&csvBuf), NewJSONLWriter(&jsonBuf)
		if err := cw.WriteHeader(); err != nil {
			t.Fatal(err)
		}
		var v lead.Values
		for i := range n {
			g.Row(i, &v)
			if err := cw.Write(&v); err != nil {
				t.Fatal(err)
			}
			if err := jw.Write(&v); err != nil {
				t.Fatal(err)
			}
		}
		if err := cw.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := jw.Flush(); err != nil {
			t.Fatal(err)
		}

		r := csv.NewReader(&csvBuf)
		header, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		if len(header) != 23 || header[0] != "firstName" || header[22] != "coApplicant" {
			t.Fatalf("header = %v, want the 23 LeadInput fields", header)
		}
		seen := map[string]map[string]bool{}
		rows := 0
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("style %d: csv row %d: %v", style, rows+1, err)
			}
			rows++
			for _, f := range []lead.Field{lead.LeadID, lead.Email, lead.HomePhone, lead.CellPhone, lead.SocialSecurityNumber} {
				val := rec[f]
				if f != lead.Email && f != lead.LeadID {
					val = strings.Map(func(r rune) rune {
						if r >= '0' && r <= '9' {
							return r
						}
						return -1
					}, val)
				}
				if val == "" {
					continue
				}
				if seen[f.String()] == nil {
					seen[f.String()] = map[string]bool{}
				}
				if seen[f.String()][val] {
					t.Fatalf("style %d: %s repeats at row %d", style, f, rows)
				}
				seen[f.String()][val] = true
			}
		}
		if rows != n {
			t.Errorf("style %d: csv rows = %d, want %d", style, rows, n)
		}
		lines := 0
		dec := json.NewDecoder(&jsonBuf)
		for dec.More() {
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				t.Fatalf("style %d: jsonl line %d: %v", style, lines+1, err)
			}
			lines++
			if style == Clean {
				if _, ok := obj["loanAmount"].(float64); !ok {
					t.Fatalf("clean jsonl line %d: loanAmount = %#v, want a JSON number", lines, obj["loanAmount"])
				}
				if obj["termsConsent"] != true {
					t.Fatalf("clean jsonl line %d: termsConsent = %#v, want true", lines, obj["termsConsent"])
				}
			}
		}
		if lines != n {
			t.Errorf("style %d: jsonl lines = %d, want %d", style, lines, n)
		}
	}
}

func TestOutcomeSpread(t *testing.T) {
	const n = 20000
	g, _ := New(Options{Seed: 11, Qualified: 0.5, NoSSN: 0.1})
	var v lead.Values
	var noSSN, low int
	var bands [5]int
	for i := range n {
		g.Row(i, &v)
		s, ok := Score(v[lead.SocialSecurityNumber])
		switch {
		case v[lead.SocialSecurityNumber] == "":
			noSSN++
		case !ok:
			t.Fatalf("row %d: clean SSN is not 9 digits", i)
		case s < QualifyingScore:
			low++
		default:
			bands[min((s-600)/50, 4)]++
		}
	}
	within := func(name string, got int, want float64) {
		if f := float64(got) / n; f < want*0.85 || f > want*1.15 {
			t.Errorf("%s fraction = %.3f, want about %.3f", name, f, want)
		}
	}
	within("no SSN", noSSN, 0.1)
	within("low score", low, 0.4)
	for b, c := range bands {
		within("band "+string(rune('0'+b)), c, 0.1)
	}
}

func TestFlawsPlanted(t *testing.T) {
	const n = 20000
	g, _ := New(Options{Seed: 5, Style: Mixed, Qualified: 0.5, NoSSN: 0.1, Invalid: 0.05})
	var v lead.Values
	counts := map[Flaw]int{}
	for i := range n {
		counts[g.Row(i, &v)]++
	}
	bad := n - counts[NoFlaw]
	if f := float64(bad) / n; f < 0.04 || f > 0.06 {
		t.Errorf("invalid fraction = %.4f, want about 0.05", f)
	}
	for f := Flaw(1); f <= Flaw(NumFlaws); f++ {
		if counts[f] == 0 {
			t.Errorf("flaw %v never planted in %d rows", f, n)
		}
	}
}

func TestAppendHelpers(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"padded", string(appendPadded(nil, 42, 6)), "000042"},
		{"padded wide", string(appendPadded(nil, 1234567, 6)), "1234567"},
		{"thousands", string(appendThousands(nil, 1234567)), "1,234,567"},
		{"thousands small", string(appendThousands(nil, 999)), "999"},
		{"csv plain", string(appendCSVField(nil, "a b", ',')), "a b"},
		{"csv comma", string(appendCSVField(nil, "1 Main St, Rear", ',')), `"1 Main St, Rear"`},
		{"csv quote", string(appendCSVField(nil, `say "hi"`, ',')), `"say ""hi"""`},
		{"json escapes", string(appendJSONString(nil, "a\"b\\c\n\x01é")), `"a\"b\\c\n\u0001é"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
			}
		})
	}
}

func BenchmarkRowCSV(b *testing.B) {
	g, _ := New(Options{Seed: 1, Style: Mixed, Qualified: 0.5, NoSSN: 0.1, Invalid: 0.02})
	w := NewCSVWriter(io.Discard)
	var v lead.Values
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		g.Row(i, &v)
		if err := w.Write(&v); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSSNsUniquePastOneSlotRound checks the rows that share an SSN slot
// (MaxUniqueSSN apart), the only ones whose SSNs could repeat, in files of
// up to 10 million rows: their SSNs never repeat, and each keeps the band of
// the score it drew (the simulator's outcome). Without distinctScore, about
// one slot in 60 repeats an SSN here.
func TestSSNsUniquePastOneSlotRound(t *testing.T) {
	const rounds = 7 // 7 * 1,511,334 rows > 10 million
	for _, style := range []Style{Clean, Mixed} {
		opts := Options{Seed: 13, Style: style, Qualified: 0.5, NoSSN: 0.1, Invalid: 0.02}
		g, _ := New(opts)
		replay, _ := New(opts)
		replay.replaying = true
		var v lead.Values
		for _, slot := range []int{0, 1, 2, 777, 12345, MaxUniqueSSN / 2, MaxUniqueSSN - 1} {
			for k := range 300 {
				slot := (slot + k*4999) % MaxUniqueSSN
				seen := map[string]int{}
				for r := range rounds {
					i := slot + r*MaxUniqueSSN
					g.Row(i, &v)
					ssn := strings.Map(func(c rune) rune {
						if c < '0' || c > '9' {
							return -1
						}
						return c
					}, v[lead.SocialSecurityNumber])
					if ssn == "" {
						continue
					}
					if j, dup := seen[ssn]; dup {
						t.Fatalf("style %d: rows %d and %d have the same SSN", style, j, i)
					}
					seen[ssn] = i
					if ssn[:3] == "666" {
						continue // a planted flaw: its score is not the row's
					}
					replay.Row(i, &v)
					d := replay.drawn
					if s, _ := Score(ssn); s < d.lo || s >= d.hi {
						t.Fatalf("style %d: row %d scores %d, outside the band [%d, %d) it drew", style, i, s, d.lo, d.hi)
					}
				}
			}
		}
	}
}

// TestRowsBelowOneSlotRoundUnchanged pins rows of files up to MaxUniqueSSN
// rows: their SSN is SSNFor(i, the score drawn), as before larger files
// were possible, so existing samples and benchmark inputs stay the same.
func TestRowsBelowOneSlotRoundUnchanged(t *testing.T) {
	opts := Options{Seed: 1, Style: Clean, Qualified: 0.5, NoSSN: 0.1}
	g, _ := New(opts)
	replay, _ := New(opts)
	replay.replaying = true
	var v lead.Values
	for _, i := range []int{0, 1, 99, 5000, MaxUniqueSSN - 1} {
		g.Row(i, &v)
		replay.Row(i, &v)
		d := replay.drawn
		g.Row(i, &v)
		if want := ""; d.score != 0 {
			want = SSNFor(i, d.score)
			if v[lead.SocialSecurityNumber] != want {
				t.Errorf("Row(%d) SSN differs from SSNFor(%d, drawn score %d)", i, i, d.score)
			}
		} else if v[lead.SocialSecurityNumber] != want {
			t.Errorf("Row(%d) has an SSN, want none", i)
		}
	}
}
