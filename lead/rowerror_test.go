package lead

import "testing"

func TestRowErrorText(t *testing.T) {
	for _, tc := range []struct {
		name         string
		err          RowErrors
		text, reason string
	}{
		{"field", RowErrors{{Row: 3, Field: ZipCode, Rule: "must be 5 digits"}},
			"zipCode: must be 5 digits", "zipCode: must be 5 digits"},
		{"two fields", RowErrors{{Row: 3, Field: ZipCode, Rule: "must be 5 digits"}, {Row: 3, Field: State, Rule: "bad"}},
			"zipCode: must be 5 digits; state: bad", "zipCode: must be 5 digits"},
		{"record", RowErrors{{Row: 20, StartLine: 25, Field: NoField, Rule: "10 fields, header has 24"}},
			"malformed record: row 20 (line 25): 10 fields, header has 24", "malformed record: 10 fields, header has 24"},
		{"record with column", RowErrors{{Row: 22, StartLine: 27, Line: 27, Column: 5, Field: NoField, Rule: "a quote"}},
			"malformed record: row 22 (line 27, column 5): a quote", "malformed record: a quote"},
		{"record with a later line", RowErrors{{Row: 2, StartLine: 3, Line: 5, Column: 1, Field: NoField, Rule: "a quote"}},
			"malformed record: row 2 (line 3; at line 5, column 1): a quote", "malformed record: a quote"},
		{"none", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.text {
				t.Errorf("RowErrors.Error() = %q, want %q", got, tc.text)
			}
			if len(tc.err) > 0 {
				if got := tc.err[0].Reason(); got != tc.reason {
					t.Errorf("RowError.Reason() = %q, want %q", got, tc.reason)
				}
			}
		})
	}
}
