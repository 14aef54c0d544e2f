package summary

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/lead"
)

// TestDetails: Count fills the report's tables: invalid rows by column
// and rule with first rows and only allowed examples, failures by reason,
// result codes with their bids, the bid distribution; the JSON carries
// them and reads back.
func TestDetails(t *testing.T) {
	var s Summary
	zip := func(row int, v string) lead.RowError {
		return lead.RowError{Row: row, Field: lead.ZipCode, Header: "zip", Rule: "must be 5 digits", Value: v}
	}
	mail := lead.RowError{Row: 4, Field: lead.Email, Header: "mail", Rule: "must be a valid e-mail address", Value: "bob@example"}
	rows := []lead.Row{
		{Row: 1, Status: lead.StatusInvalid, Invalid: lead.RowErrors{zip(1, "8002")}},
		{Row: 2, Status: lead.StatusInvalid, Invalid: lead.RowErrors{zip(2, "8002"), mail}},
		{Row: 3, Status: lead.StatusInvalid, Invalid: lead.RowErrors{zip(3, "ABCDE")}},
		{Row: 4, Status: lead.StatusInvalid, Invalid: lead.RowErrors{mail}},
		{Row: 5, Status: lead.StatusSubmitted, ResultCode: 1013, BidValue: "$15.00"},
		{Row: 6, Status: lead.StatusSubmitted, ResultCode: 1017, BidValue: "$45.00"},
		{Row: 7, Status: lead.StatusProcessed, ResultCode: 1001},
		{Row: 8, Status: lead.StatusFailed, Error: "createLead: HTTP 503"},
		{Row: 9, Status: lead.StatusFailed, Error: "createLead: HTTP 503"},
		{Row: 10, Status: lead.StatusUnverified, ResultCode: 1001, Note: "duplicate [bulkload: ...]"},
	}
	for _, r := range rows {
		s.Count(r)
	}
	b, err := json.Marshal(s.JSON())
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.InvalidColumns) != 2 {
		t.Fatalf("invalid columns %+v, want zip and mail", back.InvalidColumns)
	}
	z := back.InvalidColumns[0]
	if z.Column != "zip" || z.Field != "zipCode" || z.Count != 3 || !slices.Equal(z.FirstRows, []int{1, 2, 3}) || !slices.Equal(z.Examples, []string{"8002", "ABCDE"}) {
		t.Errorf("zip column %+v, want 3 rows 1,2,3 with examples 8002, ABCDE", z)
	}
	if m := back.InvalidColumns[1]; m.Column != "mail" || m.Count != 2 || len(m.Examples) != 0 {
		t.Errorf("mail column %+v, want 2 rows and no example (e-mail is never shown)", m)
	}
	if strings.Contains(string(b), "bob@example") {
		t.Errorf("summary JSON holds an e-mail value")
	}
	want := []CodeCount{{0, 2, 0}, {1001, 2, 0}, {1013, 1, 1500}, {1017, 1, 4500}}
	if !slices.Equal(back.ResultCodes, want) {
		t.Errorf("result codes %+v, want %+v", back.ResultCodes, want)
	}
	var nb int
	var cents int64
	for _, bb := range back.BidBuckets {
		nb += bb.Count
		cents += bb.BidCents
	}
	if nb != 2 || cents != 6000 {
		t.Errorf("bid buckets hold %d bids, %d cents; want 2, 6000", nb, cents)
	}
	if len(back.Failures) != 2 || back.Failures[0].Count != 2 || !slices.Equal(back.Failures[0].FirstRows, []int{8, 9}) || back.Failures[1].Status != lead.StatusUnverified {
		t.Errorf("failures %+v, want 2 failed by one reason, then 1 unverified", back.Failures)
	}

	// A shard's table merges into another's.
	back.MergeInvalidColumns([]InvalidColumn{{Column: "zip", Field: "zipCode", Rule: "must be 5 digits", Count: 2, FirstRows: []int{11}, Examples: []string{"1"}}})
	if z := back.InvalidColumns[0]; z.Count != 5 || !slices.Equal(z.FirstRows, []int{1, 2, 3, 11}) || len(z.Examples) != 3 {
		t.Errorf("merged zip column %+v", z)
	}
}
