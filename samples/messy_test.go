package samples

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
)

// messyHeader is the header of messy.csv: loose spellings and synonyms of
// the interface's names, an unknown column (Sales Rep) and two trailing
// empty header cells, as a spreadsheet export leaves them.
func messyHeader() []string {
	return []string{
		"First Name", "last_name", "dob", "Email Address", "phone", "mobile", "Street", "Apt",
		"CITY", "State", "zip", "loan_amount", "Lead ID", "Reference", "xxTrustedFormCertUrl", "ssn",
		"Annual Income", "Monthly Income", "Residence Type", "Income Source", "Loan Purpose", "consent",
		"Co Applicant", "Sales Rep", "", "",
	}
}

// messyRow is one record of messy.csv with what it exercises and, for a
// row that must fail, the field at fault ("" for a malformed record).
type messyRow struct {
	cells  []string // the record's cells; quoted as CSV needs
	raw    string   // instead of cells: the record's exact text (malformed records)
	leadID string
	pass   bool
	field  string // the field whose rule fails, for rows that fail
	why    string
	blank  bool // a blank line follows the record
}

// messyRows returns messy.csv's records in order. Cells, in header order:
// fname lname dob email phone mobile street apt city state zip loan leadId
// ref cert ssn income monthly residence incomeSource purpose consent coapp
// salesRep, then optionally the two trailing empty cells.
func messyRows() []messyRow {
	const cert1 = "https://cert.trustedform.com/2b5f0e6a8c1d4e3f9a7b6c5d4e3f2a1b0c9d8e7f"
	const cert2 = "3f1c2a9e-5b7d-4c8e-9f0a-1b2c3d4e5f60"
	const cert3 = "http://cert.trustedform.com/77aa01c2d3e4f5061728394a5b6c7d8e9f0a1b2c"
	row := func(s string) []string { return strings.Split(s, "|") }
	return []messyRow{
		{cells: row("Maria|Gonzalez|1984-03-12|maria.gonzalez@gmail.com|(512) 555-0143|512.555.0187|1402 Oak Ave||Austin|TX|78701|$25,000|MSY-1001|wk47-fb|" + cert1 + "|219-09-9991|$62,000|$5,166|Home Owner|Employed|Debt Consolidation|Yes|No|Dana||"),
			leadID: "MSY-1001", pass: true, why: "money with $ and commas, phone with parentheses and dots, SSN with dashes, labels, consent Yes, trailing empty cells"},
		{cells: row("James|O'Neil|03/07/1979|jimmy.oneil@yahoo.com|512-555-0199||88 Cedar Ln; Bldg 2|Apt 4\nRear entrance|Dallas|texas|75201-4402|25000.00|MSY-1002|wk47-gg||123 45 6780|48000.00|4000.00|Rent|Social Security|Home Improvement|Y|N|Dana||"),
			leadID: "MSY-1002", pass: true, why: "quoted fields holding `;` and a line break, MM/DD/YYYY, full state name in lower case, ZIP+4, 25000.00, SSN with spaces, consent Y"},
		{cells: row("Ashley|Nguyen|7/4/1992|ashley.nguyen@outlook.com|+1 415 555 0122|(415) 555-0123|500 Market St|Suite 210|San Francisco|California|94105|7500|MSY-1003||" + cert2 + "|562330417|95000||Living with Family|Pension|1|1|0|"),
			leadID: "MSY-1003", pass: true, why: "M/D/YYYY, +1 and spaces, full state name, UUID certificate, consent 1, ids as numbers, no trailing cells", blank: true},
		{cells: row("Robert|Smith|1961-11-30|rsmith61@aol.com|1-614-555-0135||77 High St||Columbus|oh|43215|$7,500.00|MSY-1004|wk47-em||401-52-7788|$38,500||Other|1|2|TRUE|false|Lee||"),
			leadID: "MSY-1004", pass: true, why: "leading 1- on the phone, lower-case state, $7,500.00, consent TRUE; preceded by a blank line"},
		{cells: row("Kevin|Brooks|1988-02-14|kevin.brooks@gmail.com|3125550176||12 Lake Shore Dr||Chicago|IL|60601|10000|MSY-1005|||666-12-3456|70000||2|1|1|yes|no|Lee||"),
			leadID: "MSY-1005", field: "socialSecurityNumber", why: "SSN area 666 is never issued"},
		{cells: row("Linda|Park|10/21/1970|linda.park@icloud.com|(206) 555-0164|206 555 0165|3100 Pine St|Unit 5|Seattle|Washington|98101|12000|MSY-1006|wk47-fb|" + cert3 + "|530-66-2104|88000|7333|1|Employed|Home Improvement|1||Dana||"),
			leadID: "MSY-1006", pass: true, why: "http certificate URL, empty coApplicant"},
		{cells: row("Patrick|Walsh|1975-05-09|pwalsh@comcast.net|617-555-0111||45 Beacon St||Boston|MA|2134|15000|MSY-1007|wk47-gg||031-44-5521|54000||Rent|Employed|1|Yes|No|Dana||"),
			leadID: "MSY-1007", field: "zipCode", why: "4-digit ZIP (a spreadsheet dropped the leading 0 of 02134)"},
		{cells: row("Sofia|Ramirez|1999-12-31|sofia.ramirez@gmail.com|+1 (305) 555-0190||901 Brickell Ave|Apt 1203|Miami|FL|33131-2711|$3,000|MSY-1008||||$41,000||Rent|Employed|Debt Consolidation|true|false|||"),
			leadID: "MSY-1008", pass: true, why: "no SSN (allowed: the service answers 1020), +1 with parentheses"},
		{cells: row("Derek|Lang|1990-08-08|derek.lang@hotmail.com|404-555-0177||19 Peachtree St||Atlanta|GA|30303|5000|MSY-1009|wk47-fb||258-31-9044|36000||Rent|Employed|1|No|No|Lee||"),
			leadID: "MSY-1009", field: "termsConsent", why: "consent No: the service would not process the lead", blank: true},
		{cells: row("Grace|Kim|1/5/1983|grace.kim@example.com|202.555.0155||1600 K St NW|Apt 801|Washington|District of Columbia|20006|18000|MSY-1010|wk47-em||517-29-6603|102000|8500|Home Owner|Employed|Home Improvement|y|n|Dana||"),
			leadID: "MSY-1010", pass: true, why: "\"District of Columbia\" spelled out, consent y; preceded by a blank line"},
		{cells: row("Hector|Alvarez|1972-01-19|hector.alvarez@yahoo.com|(713) 555-0102||2200 Main St||Houston|TX|77002|25000.50|MSY-1011|wk47-gg||344-12-9087|67000||1|1|1|Yes|No|Lee||"),
			leadID: "MSY-1011", field: "loanAmount", why: "25000.50: money must be whole dollars"},
		{cells: row("Emma|Schultz|04/01/2099|emma.schultz@gmail.com|414-555-0138||700 N Water St||Milwaukee|WI|53202|9000|MSY-1012|wk47-fb||389-50-1176|51000||Rent|Employed|2|Yes|No|Dana||"),
			leadID: "MSY-1012", field: "dateOfBirth", why: "date of birth in the future (2099)"},
		{cells: row("Tom|Becker|1956-06-18|tom.becker@att.net|615.555.0148||150 3rd Ave S||Nashville|TN|37201|40000|MSY-1013|wk47-em||402-88-1350|72000|6000|3|Pension|Debt Consolidation|TRUE|FALSE|Lee||"),
			leadID: "MSY-1013", pass: true, why: "plain formats, ids as numbers mixed with labels"},
		{cells: row("Nina|Petrova|02/30/1985|nina.petrova@outlook.com|(718) 555-0181||3 Brighton Ave||Brooklyn|NY|11235|6000|MSY-1014|wk47-gg||110-72-4418|47000||Rent|Employed|1|Yes|No|Dana||"),
			leadID: "MSY-1014", field: "dateOfBirth", why: "February 30 is not a date"},
		{cells: row("Aisha|Bello|1995-09-27|aisha.bello@gmail.com|(832) 555-0109|832-555-0110|5015 Westheimer Rd|Apt 12|Houston|TX|77056-1110|$12,500|MSY-1015|wk47-fb|" + cert2[:35] + "1|608-21-3349|$58,000|$4,833|Rent|Employed|Debt Consolidation|1|0|Lee||"),
			leadID: "MSY-1015", pass: true, why: "ZIP+4, money with $ in three columns, UUID certificate", blank: true},
		{cells: row("Marcus|Reed|1987-12-03|marcus.reed.gmail.com|(503) 555-0116||1120 SW 5th Ave||Portland|OR|97204|8000|MSY-1016|wk47-em||276-40-8812|44000||Rent|Employed|1|Yes|No|Dana||"),
			leadID: "MSY-1016", field: "email", why: "e-mail without @"},
		{cells: row("Olivia|Turner|1979-04-22|olivia.turner@icloud.com|480-555-0127||45 E Camelback Rd||Phoenix|az|85012|14000|MSY-1017|wk47-gg||529-17-4460|66000|5500|Home Owner|Employed|Home Improvement|Yes|No|Lee||"),
			leadID: "MSY-1017", pass: true, why: "lower-case state code"},
		{cells: row("Carlos|Mendez|1968-07-14|carlos.mendez@yahoo.com|(210) 555-0173||800 Dolorosa St||San Antonio|Texsa|78207|11000|MSY-1018|wk47-fb||461-23-7785|52000||Rent|Social Security|1|Yes|No|Dana||"),
			leadID: "MSY-1018", field: "state", why: "\"Texsa\" is no state"},
		{cells: row("Brian|Cole|1982-10-10|brian.cole@gmail.com|(303) 555-0140||1400 Larimer St||Denver|CO|80202|20000|MSY-1003|wk47-em||523-61-0934|81000||Home Owner|Employed|1|Yes|No|Lee||"),
			leadID: "MSY-1003", field: "leadId", why: "leadId MSY-1003 already used by row 3"},
		{raw: "Wendy;Hall;1991-03-03;wendy.hall@gmail.com;(919) 555-0104;;22 Glenwood Ave;;Raleigh;NC",
			leadID: "", field: "", why: "a record cut short: 10 fields where the header has 24"},
		{cells: row("Daniel|Foster|1966-02-28|dan.foster@comcast.net|617.555.0129||12 Elm St|Apt 2|Cambridge|MA|02138|30000|MSY-1021|wk47-fb|" + cert1 + "|035-44-1029|125000|10416|Home Owner|Employed|Home Improvement|yes|no|Dana||"),
			leadID: "MSY-1021", pass: true, why: "ZIP with a leading zero kept as text"},
		{raw: "Bob \"Bobby\";Jones;1977-07-07;bob.jones@gmail.com;(615) 555-0166;;9 Music Row;;Nashville;TN;37203;5000;MSY-1022;wk47-gg;;301-55-2846;39000;;Rent;Employed;1;Yes;No;Lee;;",
			leadID: "", field: "", why: "a bare quote inside an unquoted field (Bob \"Bobby\", lead MSY-1022): a malformed record, so no leadId is taken from it"},
		{cells: row("Rachel|Adams|1993-05-16|rachel.adams@outlook.com|(612) 555-0151|612-555-0152|250 Nicollet Mall|Suite 1400|Minneapolis|Minnesota|55401|15000|MSY-1023|wk47-em||472-30-6618|73000|6083|Rent|Employed|Debt Consolidation|Y|N|Dana||"),
			leadID: "MSY-1023", pass: true, why: "full state name"},
		{cells: row("Samuel|Wright|1959-09-09|sam.wright@aol.com|1 (216) 555-0185||1 Public Sq||Cleveland|OH|44113|22000|MSY-1024|wk47-fb||390-82-5527|$44,000||Home Owner|Social Security|2|1|0|Lee||"),
			leadID: "MSY-1024", pass: true, why: "phone with a leading 1 and parentheses"},
		{cells: row("Jasmine|Lewis|8/30/2001|jasmine.lewis@gmail.com|(901) 555-0193||88 Beale St|Apt 3B|Memphis|tn|38103|4000|MSY-1025|wk47-gg||285-14-3370|29000|2416|Living with Family|Employed|Debt Consolidation|TRUE|false|Dana||"),
			leadID: "MSY-1025", pass: true, why: "M/D/YYYY, lower-case state"},
		{cells: row("Victor|Huang|1974-11-11|victor.huang@example.com|(408) 555-0174|(408) 555-0175|1 Infinite Loop||Cupertino|CA|95014-2083|50000|MSY-1026|wk47-em|" + cert3 + "|548-09-7731|$240,000|$20,000|Home Owner|Employed|Home Improvement|Yes|Yes|Lee||"),
			leadID: "MSY-1026", pass: true, why: "co-applicant Yes, large incomes with $ and commas"},
		{cells: row("Laura|Bishop|1980-06-06|laura.bishop@hotmail.com|(702) 555-0132||3600 S Las Vegas Blvd||Las Vegas|NV|89109|16000|MSY-1027|wk47-fb||367-28-1194|58000||Rent|Employed|Debt Consolidation|Yes|No|Dana||"),
			leadID: "MSY-1027", pass: true, why: "plain row"},
		{cells: row("Ethan|Cross|1985-01-31|ethan.cross@gmail.com|(801) 555-0160||50 W Broadway||Salt Lake City|UT|84101|12000|MSY-1028|wk47-gg||496-73-2058|61000|5083|Rent|Employed|1|1|0|Lee||"),
			leadID: "MSY-1028", pass: true, why: "plain row", blank: true},
		{cells: row("Monica|Reyes|12/25/1969|monica.reyes@yahoo.com|(505) 555-0147||400 Central Ave SW||Albuquerque|NM|87102|7000|MSY-1029|wk47-em||585-36-4021|33000||Other|Pension|Home Improvement|y|n|Dana||"),
			leadID: "MSY-1029", pass: true, why: "MM/DD/YYYY, consent y; preceded by a blank line"},
		{cells: row("George|Hill|1950-03-15|george.hill@att.net|(405) 555-0112||100 N Broadway Ave||Oklahoma City|OK|73102|10000|MSY-1030|wk47-fb||446-19-8320|28000||Home Owner|Social Security|Debt Consolidation|Yes|No|Lee"),
			leadID: "MSY-1030", pass: true, why: "last row, ends without a line break", blank: false},
	}
}

// csvCell quotes a cell for a `;`-delimited file when it must.
func csvCell(s string) string {
	if strings.ContainsAny(s, ";\"\r\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// messyCSV builds messy.csv: UTF-8 with a byte-order mark, CRLF record
// ends (a line break inside a quoted cell stays LF, as spreadsheets write
// it), `;` delimiter, blank lines, no line break after the last record.
func messyCSV() []byte {
	var b bytes.Buffer
	b.WriteString("\ufeff")
	b.WriteString(strings.Join(messyHeader(), ";"))
	for _, r := range messyRows() {
		b.WriteString("\r\n")
		if r.raw != "" {
			b.WriteString(r.raw)
		} else {
			for i, c := range r.cells {
				if i > 0 {
					b.WriteByte(';')
				}
				b.WriteString(csvCell(c))
			}
		}
		if r.blank {
			b.WriteString("\r\n")
		}
	}
	return b.Bytes()
}

// messyExpected is messy.expected.csv: per row, whether bulkload validate
// must accept it and, when not, the field at fault ("" for a malformed
// record).
func messyExpected() []byte {
	var b bytes.Buffer
	b.WriteString("row,leadId,status,field\n")
	for i, r := range messyRows() {
		status := "invalid"
		if r.pass {
			status = "valid"
		}
		b.WriteString(strconv.Itoa(i+1) + "," + r.leadID + "," + status + "," + r.field + "\n")
	}
	return b.Bytes()
}

// messyTable is the Markdown table of messy.csv's rows for README.md.
func messyTable() string {
	var b strings.Builder
	b.WriteString("| row | leadId | result | why |\n|---:|---|---|---|\n")
	for i, r := range messyRows() {
		res := "valid"
		if !r.pass {
			res = "**invalid**"
			if r.field != "" {
				res += " (" + r.field + ")"
			} else {
				res += " (malformed)"
			}
		}
		b.WriteString("| " + strconv.Itoa(i+1) + " | " + r.leadID + " | " + res + " | " + strings.ReplaceAll(r.why, "|", `\|`) + " |\n")
	}
	return b.String()
}

// latin1Rows are the rows of messy-latin1.csv: tab-delimited, Windows-1252.
// O’Brien carries U+2019, which Windows-1252 encodes as 0x92 (in ISO-8859-1
// that byte is a control character: hence --encoding windows-1252).
func latin1Rows() [][]string {
	return [][]string{
		{"FIRSTNAME", "LASTNAME", "Birth Date", "e-mail", "Home Phone", "Cell Phone", "address1", "city", "state", "postal_code", "Loan Amount", "leadId", "Social Security Number", "residenceTypeId", "incomeSourceId", "loanPurposeId", "Terms Consent"},
		{"José", "Muñoz", "1981-02-17", "jose.munoz@gmail.com", "(408) 555-0111", "", "1200 Calle Peña", "San José", "CA", "95112", "12000", "LAT-001", "512-40-1187", "2", "1", "1", "Yes"},
		{"Zoë", "Müller", "1990-07-30", "zoe.muller@outlook.com", "212-555-0124", "646-555-0125", "44 Straße Way", "New York", "NY", "10001", "8000", "LAT-002", "473-22-9051", "Rent", "Employed", "Debt Consolidation", "Y"},
		{"Renée", "O’Brien", "03/14/1976", "renee.obrien@yahoo.com", "617.555.0136", "", "9 Café Row", "Boston", "MA", "02116", "15000", "LAT-003", "026-81-3374", "1", "1", "2", "1"},
		{"François", "Dubois", "1968-11-05", "f.dubois@comcast.net", "(504) 555-0142", "", "310 Rue Royale", "New Orleans", "LA", "70130", "20000", "LAT-004", "433-17-6620", "Home Owner", "Pension", "Home Improvement", "TRUE"},
		{"Iñaki", "Peña", "5/9/1995", "inaki.pena@gmail.com", "(305) 555-0153", "305 555 0154", "77 Calle Ocho", "Miami", "FL", "33135", "5000", "LAT-005", "591-04-2283", "2", "1", "1", "yes"},
		{"Björn", "Åström", "1985-01-22", "bjorn.astrom@icloud.com", "612-555-0161", "", "500 Nicollet Mall", "Minneapolis", "MN", "55402", "9500", "LAT-006", "468-35-7719", "3", "1", "1", "Yes"},
		{"Chloé", "Lefèvre", "1999-10-01", "chloe.lefevre@gmail.com", "(802) 555-0178", "", "12 Église St", "Burlington", "VT", "05401", "3000", "LAT-007", "008-52-6634", "Living with Family", "Employed", "1", "Y"},
		{"Ramón", "Núñez", "1972-06-12", "ramon.nunez@aol.com", "915.555.0189", "", "4 Paseo del Río", "El Paso", "TX", "79901", "11000", "LAT-008", "452-66-1190", "1", "Social Security", "1", "1"},
		{"Søren", "Kierkegård", "1988-04-04", "soren.k@protonmail.com", "(206) 555-0190", "", "1 Fjord Ln", "Seattle", "WA", "98101", "7000", "LAT-009", "533-71-0452", "Rent", "1", "2", "Yes"},
		{"Dolores", "Ibáñez D’Angelo", "1963-12-24", "dolores.ibanez@att.net", "(915) 555-0102", "", "88 Mesa St", "El Paso", "TX", "79902", "6000", "LAT-010", "455-09-3318", "Other", "Pension", "Debt Consolidation", "TRUE"},
	}
}

// messyLatin1 builds messy-latin1.csv: Windows-1252, tab-delimited, CRLF.
func messyLatin1(t *testing.T) []byte {
	var b strings.Builder
	for _, r := range latin1Rows() {
		b.WriteString(strings.Join(r, "\t"))
		b.WriteString("\r\n")
	}
	out, err := charmap.Windows1252.NewEncoder().String(b.String())
	if err != nil {
		t.Fatalf("encode messy-latin1.csv as Windows-1252: %v", err)
	}
	return []byte(out)
}

func TestMessySamples(t *testing.T) {
	golden(t, "messy.csv", messyCSV())
	golden(t, "messy.expected.csv", messyExpected())
	golden(t, "messy-latin1.csv", messyLatin1(t))
	goldenSection(t, "README.md", "<!-- messy rows: generated by go test ./samples -update -->", "<!-- end messy rows -->", messyTable())
}

// TestMessyShape checks the properties README.md promises of messy.csv.
func TestMessyShape(t *testing.T) {
	b := messyCSV()
	rows := messyRows()
	checks := []struct {
		name string
		ok   bool
	}{
		{"starts with a UTF-8 BOM", bytes.HasPrefix(b, []byte("\xef\xbb\xbf"))},
		{"CRLF line ends", bytes.Count(b, []byte("\r\n")) >= len(rows)},
		{"blank lines", bytes.Contains(b, []byte("\r\n\r\n"))},
		{"quoted cell with ; and a line break", bytes.Contains(b, []byte(`"Apt 4`+"\n"+`Rear entrance"`)) && bytes.Contains(b, []byte(`"88 Cedar Ln; Bldg 2"`))},
		{"about 30 rows", len(rows) >= 28 && len(rows) <= 34},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !c.ok {
				t.Errorf("messy.csv: %s: not so", c.name)
			}
		})
	}
	failing := 0
	for i, r := range rows {
		if !r.pass {
			failing++
		}
		if r.raw == "" && len(r.cells) != 24 && len(r.cells) != 26 {
			t.Errorf("messy row %d has %d cells, want 24 (or 26 with the trailing empty ones)", i+1, len(r.cells))
		}
	}
	if failing < len(rows)/4 || failing > len(rows)/2 {
		t.Errorf("messy.csv: %d of %d rows fail, want about a third", failing, len(rows))
	}
	l := messyLatin1(t)
	if !bytes.Contains(l, []byte("O\x92Brien")) || !bytes.Contains(l, []byte("Mu\xf1oz")) {
		t.Errorf("messy-latin1.csv lacks Windows-1252 bytes 0x92 (’) and 0xf1 (ñ)")
	}
}

// goldenSection compares the part of a file between two marker lines with
// want, or rewrites it with -update.
func goldenSection(t *testing.T, name, begin, end, want string) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s: markers %q and %q not found", name, begin, end)
	}
	got := s[i+len(begin)+1 : j]
	if got == want {
		return
	}
	if !*update {
		t.Errorf("%s: the section between %q and %q differs from its generator; run go test ./samples -update", name, begin, end)
		return
	}
	if err := os.WriteFile(name, []byte(s[:i+len(begin)+1]+want+s[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
}
