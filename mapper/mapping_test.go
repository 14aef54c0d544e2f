package mapper

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/lead"
)

func TestLoadMappingTestdata(t *testing.T) {
	mp, err := LoadMapping(filepath.Join("testdata", "mapping.yaml"))
	if err != nil {
		t.Fatalf("LoadMapping(testdata/mapping.yaml) error = %v", err)
	}
	wantCols := map[string]string{
		"Cust SSN": "socialSecurityNumber", "Birth Date": "dateOfBirth", "First": "firstName",
		"Last": "lastName", "Mobile": "cellPhone", "Housing": "residenceTypeId",
		"Opt In": "termsConsent", "Partner Source": "leadSourceId",
	}
	if !reflect.DeepEqual(mp.Columns, wantCols) {
		t.Errorf("LoadMapping columns = %v, want %v", mp.Columns, wantCols)
	}
	wantVals := map[lead.Field]map[string]string{
		lead.ResidenceTypeID: {"Own": "1", "Rent": "2", "With Parents": "3"},
		lead.TermsConsent:    {"I agree": "true", "Declined": "false", "Accepted": "true"},
		lead.IncomeSourceID:  {"W2": "1", "SSI": "2"},
		lead.State:           {"N/A": ""},
	}
	if !reflect.DeepEqual(mp.Values, wantVals) {
		t.Errorf("LoadMapping values = %v, want %v", mp.Values, wantVals)
	}

	// The value maps are applied case-insensitively, before the rules.
	v := validRow()
	v[lead.ResidenceTypeID], v[lead.TermsConsent], v[lead.IncomeSourceID], v[lead.State] = " with parents", "I AGREE", "ssi", "n/a"
	in, errs := mapRow(newTestMapper(mp), 1, &v)
	if len(errs) != 0 {
		t.Fatalf("Map with mapping errors = %v", errs)
	}
	if *in.ResidenceTypeID != 3 || *in.TermsConsent != true || *in.IncomeSourceID != 2 || in.State != "" {
		t.Errorf("Map with mapping = %v, want residenceTypeId 3, termsConsent true, incomeSourceId 2, no state", in)
	}
	v[lead.TermsConsent] = "declined"
	if _, errs := mapRow(newTestMapper(mp), 1, &v); errs.Error() != `termsConsent is "declined": `+ruleConsent {
		t.Errorf("Map(termsConsent=declined) = %v, want the consent error", errs)
	}
}

func TestParseMappingErrors(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string // substrings of the error
	}{
		{"unknown top-level key", "colums:\n  A: firstName\n", []string{"m.yaml line 1", `unknown key "colums"`}},
		{"unknown column field", "columns:\n  A: firstName\n  B: fristName\n", []string{"line 3", `unknown field "fristName"`}},
		{"wrong case column field", "columns:\n  A: FirstName\n", []string{"line 2", "did you mean firstName"}},
		{"unknown values field", "values:\n  residence: {Own: 1}\n", []string{"line 2", `unknown field "residence"`}},
		{"values not a map", "values:\n  residenceTypeId: [1, 2]\n", []string{"line 2", "residenceTypeId"}},
		{"target a list", "values:\n  residenceTypeId:\n    Own: [1]\n", []string{"line 3", `"Own"`}},
		{"keys differ in case", "values:\n  state:\n    NA: \"\"\n    na: \"\"\n", []string{"line 4", "same key"}},
		{"duplicate top-level key", "columns: {}\ncolumns: {}\n", []string{"line 2", "twice"}},
		{"duplicate field", "values:\n  state: {a: b}\n  state: {c: d}\n", []string{"line 3", "twice"}},
		{"not a mapping", "- columns\n", []string{"line 1", "want a mapping"}},
		{"columns not a mapping", "columns: [a]\n", []string{"line 1", "columns"}},
		{"empty header", "columns:\n  \"\": firstName\n", []string{"line 2", "header"}},
		{"bad yaml", "columns: {a: b\n", []string{"m.yaml", "yaml"}},
		{"tab indent", "columns:\n\tA: firstName\n", []string{"m.yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseMapping(strings.NewReader(tc.yaml), "m.yaml")
			if err == nil {
				t.Fatalf("ParseMapping(%q) error = nil, want %q", tc.yaml, tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseMapping(%q) error = %q, want it to contain %q", tc.yaml, err, w)
				}
			}
		})
	}
	_, err := ParseMapping(strings.NewReader("columns:\n  A: nope\n"), "m.yaml")
	if !errors.Is(err, errUnknownField) {
		t.Errorf("ParseMapping(unknown field) error = %v, want it to wrap errUnknownField", err)
	}
}

func TestParseMappingScalars(t *testing.T) {
	const doc = `
values:
  residenceTypeId:
    Own: 1
    Rent: "2"
    Parents: 0o3
  coApplicant:
    Joint: true
    Single: False
    Unknown: ~
  loanAmount:
    Small: 1_000
`
	mp, err := ParseMapping(strings.NewReader(doc), "s.yaml")
	if err != nil {
		t.Fatalf("ParseMapping error = %v", err)
	}
	want := map[lead.Field]map[string]string{
		lead.ResidenceTypeID: {"Own": "1", "Rent": "2", "Parents": "3"},
		lead.CoApplicant:     {"Joint": "true", "Single": "false", "Unknown": ""},
		lead.LoanAmount:      {"Small": "1000"},
	}
	if !reflect.DeepEqual(mp.Values, want) {
		t.Errorf("ParseMapping values = %v, want %v", mp.Values, want)
	}
}

func TestParseMappingEmpty(t *testing.T) {
	for _, doc := range []string{"", "# nothing\n", "columns:\nvalues:\n", "~\n"} {
		mp, err := ParseMapping(strings.NewReader(doc), "e.yaml")
		if err != nil || len(mp.Columns) != 0 || len(mp.Values) != 0 {
			t.Errorf("ParseMapping(%q) = %v, %v, want an empty mapping", doc, mp, err)
		}
	}
}

func TestLoadMappingMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := LoadMapping(path)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("LoadMapping(missing) error = %v, want a not-exist error naming the file", err)
	}
}
