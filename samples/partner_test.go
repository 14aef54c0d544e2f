package samples

import (
	"bytes"
	"encoding/csv"
	"testing"
)

// partnerRows are partner-acme.csv: Acme's own column names and values,
// which only samples/mapping.yaml turns into LeadInput. Row 6 declines
// consent and must fail; every other row is valid with the mapping (and
// most are invalid without it).
func partnerRows() [][]string {
	return [][]string{
		{"Acme Lead #", "Campaign", "Cust First", "Cust Last", "Birth Date", "Applicant Email", "Home Tel", "Cell Tel", "Street Address", "City", "State", "Zip", "Cust SSN", "Amount Requested", "Yearly Pay", "Own/Rent", "Employment", "Reason", "Agreed", "Branch"},
		{"AC-50001", "spring-tv", "Helen", "Brooks", "04/12/1971", "helen.brooks@gmail.com", "(614) 555-0120", "", "18 Maple Dr", "Columbus", "OH", "43215", "287-44-9130", "$15,000", "$64,000", "Own", "W-2", "Bills", "I agree", "OH-02"},
		{"AC-50002", "spring-tv", "Marco", "Silva", "1986-09-03", "marco.silva@yahoo.com", "216-555-0131", "216-555-0132", "3301 Euclid Ave", "Cleveland", "OH", "44115", "296-15-4471", "8000", "41000", "Rent", "W-2", "Bills", "I agree", "OH-01"},
		{"AC-50003", "web", "Dorothy", "Evans", "2/2/1949", "dot.evans@aol.com", "(419) 555-0143", "", "77 River Rd", "Toledo", "OH", "43604", "301-82-5567", "5000", "22000", "own", "Retired", "Remodel", "i agree", "OH-03"},
		{"AC-50004", "web", "Kwame", "Asante", "1993-06-21", "kwame.asante@outlook.com", "513.555.0154", "", "900 Vine St, Apt 5", "Cincinnati", "OH", "45202-1502", "272-60-3318", "$22,500", "$88,000", "Family", "W-2", "Bills", "I agree", "OH-04"},
		{"AC-50005", "radio", "Beth", "Novak", "07/30/1978", "beth.novak@icloud.com", "(330) 555-0165", "", "12 Market Ave N", "Canton", "OH", "44702", "", "12000", "57000", "Rent", "SSA", "Remodel", "I agree", "OH-02"},
		{"AC-50006", "radio", "Tariq", "Hassan", "1990-01-15", "tariq.hassan@gmail.com", "937-555-0176", "", "45 Main St", "Dayton", "OH", "45402", "283-27-6604", "9000", "49000", "Rent", "W-2", "Bills", "Declined", "OH-05"},
		{"AC-50007", "spring-tv", "Irene", "Lopez", "1966-11-08", "irene.lopez@att.net", "(614) 555-0187", "614-555-0188", "2 Nationwide Blvd", "Columbus", "Ohio", "43215", "302-51-7729", "$30,000", "$120,000", "Own", "W-2", "Remodel", "I AGREE", "OH-02"},
		{"AC-50008", "web", "Paul", "Kowalczyk", "3/17/1982", "paul.kowalczyk@gmail.com", "(440) 555-0198", "", "5 Lake Ave", "Elyria", "OH", "44035", "277-09-2215", "6500", "38000", "Rent", "W-2", "Bills", "I agree", "OH-01"},
	}
}

func partnerCSV(t *testing.T) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.WriteAll(partnerRows()); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestPartnerSample(t *testing.T) {
	golden(t, "partner-acme.csv", partnerCSV(t))
}
