package reader

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/bulkload/bulkload/lead"
)

// maxUnknown bounds the list of unknown column names kept, so that a JSONL
// file whose every line invents new keys cannot grow it without end.
const maxUnknown = 100

// maxKeyCache bounds the JSONL key resolution cache for the same reason.
const maxKeyCache = 1024

// errorColumn is the normalised name of the column the Rejects writer adds.
// A column of that name is recognised and ignored, so a fixed rejects file
// feeds straight back in.
const errorColumn = "error"

// exampleFields names a few fields for the error of a header that names
// none, so the partner sees what a header looks like.
const exampleFields = "firstName, lastName, dateOfBirth, email, zipCode"

// ignoreTarget is the mapping-file target that drops a column on purpose.
const ignoreTarget = "-"

// colKind says what a header resolves to.
type colKind uint8

const (
	colUnknown colKind = iota // not a LeadInput field: reported by Unknown
	colField                  // a LeadInput field
	colIgnore                 // known and dropped: the rejects "error" column or a "-" mapping
)

// colRes is the resolution of one header or JSON key.
type colRes struct {
	kind  colKind
	field lead.Field
}

// normalize folds a header for loose matching: lower case, letters and
// digits only, so "First Name", "first_name", "FIRST-NAME" and "firstName"
// are the same.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// synonyms returns the built-in header synonyms, normalised, by field. It is
// a function, not a package variable, so that nothing at package level is
// mutable; a resolver calls it once.
func synonyms() map[lead.Field][]string {
	return map[lead.Field][]string{
		lead.FirstName:                {"fname", "first", "givenname", "forename", "firstnm"},
		lead.LastName:                 {"lname", "last", "surname", "familyname", "lastnm"},
		lead.DateOfBirth:              {"dob", "birthdate", "dateofbirth", "birthday", "birthdt"},
		lead.Email:                    {"email", "emailaddress", "emailaddr", "mail"},
		lead.HomePhone:                {"phone", "homephone", "phone1", "telephone", "phonenumber", "homephonenumber", "primaryphone", "tel", "dayphone"},
		lead.CellPhone:                {"mobile", "cell", "cellphone", "mobilephone", "cellphonenumber", "mobilenumber", "mobilephonenumber", "phone2"},
		lead.Address1:                 {"address", "street", "addressline1", "addr1", "addr", "streetaddress", "address1"},
		lead.Address2:                 {"addressline2", "apt", "suite", "addr2", "unit", "aptsuite", "address2"},
		lead.City:                     {"town"},
		lead.State:                    {"st", "statecode", "stateabbr", "province"},
		lead.ZipCode:                  {"zip", "zipcode", "postalcode", "postcode", "zip5", "postal"},
		lead.LoanAmount:               {"loanamount", "amount", "requestedamount", "loanamt", "requestedloanamount"},
		lead.LeadID:                   {"leadid", "partnerleadid", "externalid", "externalleadid"},
		lead.Ref:                      {"reference", "referenceid", "refid"},
		lead.TrustedformCertificateID: {"trustedform", "trustedformcerturl", "xxtrustedformcerturl", "trustedformcert", "trustedformurl", "trustedformcertificate", "trustedformcertificateurl", "consentcertificate", "consentcertificateid", "consentcertificateurl", "consentcert", "certificateid", "certificateurl", "certurl", "certid"},
		lead.SocialSecurityNumber:     {"ssn", "social", "socialsecurity", "socialsecuritynumber", "ssnumber", "socialsecurityno"},
		lead.GrossAnnualIncome:        {"income", "annualincome", "grossincome", "grossannualincome", "yearlyincome"},
		lead.MonthlyIncome:            {"monthlyincome", "incomemonthly", "grossmonthlyincome"},
		lead.ResidenceTypeID:          {"residencetype", "residence", "housingtype", "housing", "residencestatus"},
		lead.IncomeSourceID:           {"incomesource", "sourceofincome", "incometype"},
		lead.LoanPurposeID:            {"loanpurpose", "purpose", "loanreason"},
		lead.TermsConsent:             {"consent", "terms", "tcpa", "tcpaconsent", "termsconsent", "agreedtoterms", "termsaccepted", "agreetoterms"},
		lead.CoApplicant:              {"coapplicant", "coapp", "hascoapplicant"},
		lead.LeadSourceID:             {"leadsource", "sourceid", "leadsourceid"},
	}
}

// resolver maps partner headers and JSON keys to fields. It is built once per
// Reader and only read afterwards.
type resolver struct {
	canonical map[string]lead.Field // normalised wire name -> field
	renames   map[string]colRes     // normalised partner header -> mapping-file target
	synonyms  map[string]lead.Field // normalised synonym -> field
}

// newResolver validates the mapping-file renames and builds the lookup
// tables. Mapping-file renames win over everything else, because they are
// the partner's explicit word: a column named "ref" that the partner maps to
// leadId must not be taken as ref.
func newResolver(columns map[string]string) (*resolver, error) {
	r := &resolver{
		canonical: make(map[string]lead.Field, lead.NumFields),
		renames:   make(map[string]colRes, len(columns)),
		synonyms:  make(map[string]lead.Field, 128),
	}
	for f := lead.Field(0); f < lead.NumFields; f++ {
		r.canonical[normalize(f.String())] = f
	}
	for f, names := range synonyms() {
		for _, n := range names {
			r.synonyms[n] = f
		}
	}
	for from, to := range columns {
		key := normalize(from)
		if key == "" {
			return nil, fmt.Errorf("column mapping: header %q has no letters or digits; name the partner's column as it appears in the file", from)
		}
		if strings.TrimSpace(to) == ignoreTarget {
			r.renames[key] = colRes{kind: colIgnore}
			continue
		}
		f, ok := r.canonical[normalize(to)]
		if !ok {
			return nil, fmt.Errorf("column mapping: %q maps to unknown field %q; use a LeadInput field name (%s) or %q to ignore the column", from, to, fieldList(), ignoreTarget)
		}
		r.renames[key] = colRes{kind: colField, field: f}
	}
	return r, nil
}

// resolve says what the header name means: mapping-file rename, then the
// canonical wire name, then a built-in synonym, then the rejects error
// column; anything else is unknown.
func (r *resolver) resolve(name string) colRes {
	key := normalize(name)
	if res, ok := r.renames[key]; ok {
		return res
	}
	if f, ok := r.canonical[key]; ok {
		return colRes{kind: colField, field: f}
	}
	if f, ok := r.synonyms[key]; ok {
		return colRes{kind: colField, field: f}
	}
	if key == errorColumn {
		return colRes{kind: colIgnore}
	}
	return colRes{kind: colUnknown}
}

// fieldList names every field, for error messages that must say what to use.
func fieldList() string {
	names := make([]string, 0, lead.NumFields)
	for f := lead.Field(0); f < lead.NumFields; f++ {
		names = append(names, f.String())
	}
	return strings.Join(names, ", ")
}

// unknownSet keeps unknown column names in first-seen order, each once, up
// to maxUnknown of them.
type unknownSet struct {
	names []string
	seen  map[string]struct{}
	more  bool // some names were left out
}

func (u *unknownSet) add(name string) {
	if _, ok := u.seen[name]; ok {
		return
	}
	if len(u.names) >= maxUnknown {
		u.more = true
		return
	}
	if u.seen == nil {
		u.seen = make(map[string]struct{})
	}
	u.seen[name] = struct{}{}
	u.names = append(u.names, name)
}

func (u *unknownSet) list() []string {
	out := make([]string, len(u.names), len(u.names)+1)
	copy(out, u.names)
	if u.more {
		out = append(out, fmt.Sprintf("(more than %d unknown columns; the rest are not listed)", maxUnknown))
	}
	return out
}

// duplicateName describes a column whose field an earlier column took.
func duplicateName(name string, f lead.Field) string {
	return fmt.Sprintf("%s (duplicate of %s)", name, f)
}

// shortName trims a header or key for an error message or the unknown list,
// so a pathological header cannot flood a log line.
func shortName(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// dateLayouts are the date forms a header cell that is really a date of
// birth may take; see looksLikeData.
func dateLayouts() []string {
	return []string{"2006-01-02", "2006/01/02", "01/02/2006", "1/2/2006", "01/02/06", "1/2/06",
		"01-02-2006", "1-2-2006", "01-02-06", "02.01.2006", "2.1.2006", "20060102",
		"Jan 2 2006", "Jan 2, 2006", "January 2, 2006", "2 Jan 2006", "2-Jan-2006", "02-Jan-06", "2-Jan-06"}
}

// looksLikeData reports whether a header name that resolves to no field
// looks like a cell of data rather than a column name: 4 or more digits (an
// SSN, a phone, a ZIP, a year), an '@' (an email) or a date. Such a name is
// never reported as it is, because a file whose header line is missing or
// shifted would otherwise put an SSN or a date of birth into a log line.
func looksLikeData(name string) bool {
	if strings.ContainsRune(name, '@') {
		return true
	}
	digits := 0
	for _, r := range name {
		if unicode.IsDigit(r) {
			digits++
		}
	}
	if digits >= 4 {
		return true
	}
	s := strings.TrimSpace(name)
	for _, layout := range dateLayouts() {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}
