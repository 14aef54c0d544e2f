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
		{"header and value", RowErrors{{Row: 3, Field: ZipCode, Header: "zip", Value: "8002", Rule: "must be 5 digits"}},
			`column "zip" (zipCode) is "8002": must be 5 digits`, `column "zip" (zipCode): must be 5 digits`},
		{"header is the field's name", RowErrors{{Row: 3, Field: State, Header: "state", Value: "Calif.", Rule: "bad"}},
			`column "state" is "Calif.": bad`, `column "state": bad`},
		{"value quoted", RowErrors{{Row: 3, Field: City, Header: "Town", Value: "a\"b\x01", Rule: "bad"}},
			`column "Town" (city) is "a\"b\x01": bad`, `column "Town" (city): bad`},
		{"detail shown, rule counted", RowErrors{{Row: 9, Field: LeadID, Header: "Lead ID", Value: "L-1", Rule: "duplicate of an earlier row", Detail: "duplicate of row 3"}},
			`column "Lead ID" (leadId) is "L-1": duplicate of row 3`, `column "Lead ID" (leadId): duplicate of an earlier row`},
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
