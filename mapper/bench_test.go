package mapper

import (
	"encoding/csv"
	"strconv"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/lead"
)

// BenchmarkMap measures one row: a realistic valid row with the usual
// formatting to normalise, the same row already canonical, and a row with
// several errors. Each iteration gets a fresh leadId, so the duplicate index
// grows as in a run of b.N rows; index-B/id is its size per leadId.
func BenchmarkMap(b *testing.B) {
	bad := validRow()
	bad[lead.ZipCode], bad[lead.HomePhone], bad[lead.SocialSecurityNumber] = "2134", "555-1234", "666-12-3456"
	bad[lead.LoanAmount], bad[lead.TermsConsent], bad[lead.DateOfBirth] = "25000.50", "no", "13/01/1990"
	canonical := validRow()
	canonical[lead.DateOfBirth], canonical[lead.HomePhone], canonical[lead.CellPhone] = "1980-02-29", "5551234567", "5559876543"
	canonical[lead.State], canonical[lead.ZipCode], canonical[lead.SocialSecurityNumber] = "MA", "02134", "123456789"
	canonical[lead.LoanAmount], canonical[lead.GrossAnnualIncome], canonical[lead.MonthlyIncome] = "25000", "85000", "7083"
	canonical[lead.ResidenceTypeID], canonical[lead.IncomeSourceID], canonical[lead.TermsConsent] = "1", "1", "true"
	for _, bc := range []struct {
		name string
		row  lead.Values
	}{
		{"valid", validRow()},
		{"valid_canonical", canonical},
		{"errors", bad},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ids := make([]string, b.N)
			for i := range ids {
				ids[i] = "L-" + strconv.Itoa(i)
			}
			m := newTestMapper(nil)
			v := bc.row
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				v[lead.LeadID] = ids[i]
				in, errs := mapRow(m, i+1, &v)
				if (len(errs) == 0) != (bc.name != "errors") || (bc.name != "errors" && in.DateOfBirth == "") {
					b.Fatalf("Map(%s) = %v", bc.name, errs)
				}
			}
			b.ReportMetric(float64(m.ids.bytes())/float64(b.N), "index-B/id")
		})
	}
}

// BenchmarkCSVBaseline parses the valid row as one CSV line with
// encoding/csv, the yardstick of the performance aim: compare its ns/op with
// BenchmarkMap/valid's, run together, on this shared machine.
func BenchmarkCSVBaseline(b *testing.B) {
	row := validRow()
	var sb strings.Builder
	w := csv.NewWriter(&sb)
	if err := w.Write(row[:]); err != nil {
		b.Fatal(err)
	}
	w.Flush()
	line := sb.String()
	const lines = 1024
	text := strings.Repeat(line, lines)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += lines {
		r := csv.NewReader(strings.NewReader(text))
		r.ReuseRecord = true
		for {
			if _, err := r.Read(); err != nil {
				break
			}
		}
	}
}
