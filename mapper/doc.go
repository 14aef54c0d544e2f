// Package mapper is the second stage of bulkload's pipeline: it turns one
// record read from a partner file (lead.Values, the raw text of each cell by
// canonical field) into a lead.Input ready to send to createLead, or into the
// list of that row's field errors. It also reads the partner mapping file.
//
// A Mapper is shared. Its settings (the mapping's value maps, today's date,
// the hash seed) are fixed by New and only read after, so MapFields and
// IDKey are safe for concurrent use: source's workers (up to four) map rows
// in parallel with one Mapper. The duplicate-leadId index is the one thing
// that changes, and the first row with a leadId wins, so CheckDuplicate,
// PrefetchIDs and IndexMemory must be
// called from one goroutine, row after row in input order: in source, the
// goroutine that checks the mapped batches in order.
//
// Errors name the field and the rule, and show the bad value only for a
// field that is not sensitive and a value that does not look like an SSN or
// a date nor holds the row's own SSN or date of birth in any form package
// package redact finds, so they can be logged and written to the results
// file even for the SSN and the date of birth.
//
// # Rules
//
// Every value is first checked to be UTF-8 (Latin-1 files fail with a hint to
// use --encoding windows-1252) and trimmed of surrounding white space; a value
// that is empty after trimming is absent and is omitted from the Input, never
// sent as "" or 0. A control character (NUL, DEL, a C1 control, or a tab or
// line break inside the value) makes the field invalid, except that in the
// free-text fields (firstName, lastName, address1, address2, city) each run
// of tabs and line breaks, as in a quoted two-line address, becomes one
// space. Then the mapping file's value map for the field, if any, is
// applied (keys matched trimmed and case-insensitively), and the result is
// checked:
//
//   - dateOfBirth (required): YYYY-MM-DD, MM/DD/YYYY or M/D/YYYY (month
//     first), sent as YYYY-MM-DD. Two-digit years are rejected as ambiguous.
//     The date must exist (Feb 29 only in leap years), must not be after
//     today (Options.Now, read once by New) and not before 1900-01-01.
//   - homePhone, cellPhone: spaces, dots, dashes and parentheses are removed,
//     and a leading +1, or a leading 1 of 11 digits; then exactly 10 digits.
//     Letters, extensions and other country codes are errors.
//   - socialSecurityNumber: dashes and spaces removed, exactly 9 digits; area
//     000, 666 and 900-999, group 00 and serial 0000 are never issued and are
//     rejected, saying which part is wrong.
//   - state: a two-letter code in any case, or a full name in any case and
//     spacing ("new york", "District of Columbia", "U.S. Virgin Islands"),
//     sent as the upper-case code. Accepted: the 50 states, DC, the inhabited
//     territories PR, GU, VI, AS, MP, and the military codes AA, AE, AP
//     (applicants on APO/FPO addresses are real US residents). The freely
//     associated states FM, MH and PW are rejected.
//   - zipCode: 5 digits; ZIP+4 (12345-6789 or 9 digits) is cut to five. A
//     4-digit ZIP is an error with a hint that a spreadsheet dropped a leading
//     zero: it is never padded.
//   - termsConsent: true/false, yes/no, y/n, t/f or 1/0 in any case, and it
//     must be true: the service does not process a lead without consent, so
//     an absent or false consent makes the row invalid. coApplicant reads the
//     same words, and may be false.
//   - loanAmount, grossAnnualIncome, monthlyIncome: whole dollars sent as
//     integers. An optional $, thousands commas in well-formed groups of
//     three, and a fraction of zeros (.0, .00) are accepted: "$25,000" and
//     "25000.00" become 25000. A non-zero fraction, a minus sign, text, or a
//     value above 2147483647 (GraphQL Int is 32-bit) are errors.
//   - residenceTypeId: 1-4, or a label: Home Owner (also Homeowner, Own),
//     Rent (Renter), Living with Family, Other; labels ignore case, spaces
//     and punctuation. incomeSourceId: a positive integer (the service has
//     more than it lists) or Employed=1, Social Security=2, Pension=3.
//     loanPurposeId: a positive integer or Debt Consolidation=1, Home
//     Improvement=2. Integers are plain decimal digits.
//   - email: a bare address that net/mail.ParseAddress gives back exactly,
//     with a dot in the domain; its case is kept.
//   - trustedformCertificateID (the spec's consent certificate): a canonical
//     UUID (8-4-4-4-12 hex digits, either case) or an absolute http or https
//     URL with a host; kept as written.
//   - leadSourceId is never sent, whatever its column holds, and is not an
//     error. firstName, lastName, address1, address2, city, ref and leadId
//     are trimmed text.
//   - leadId: the same leadId (compared exactly after trimming) on a later
//     row makes that row invalid: "leadId: duplicate of row 3". A leadId is
//     registered the first time it is seen, whether or not its row is valid.
//     The index holds a 64-bit hash per distinct leadId (maphash, with a
//     random seed per Mapper) and the row number, in about 9.3 bytes a leadId
//     (10.3 past row 2^24) kept outside the Go heap (see index.go); two
//     different ids collide
//     with a chance of about n²/2⁶⁵ for n distinct ids (3e-8 at a million,
//     7e-7 at 5 million, 3e-6 at 10 million), in which case a row is wrongly
//     reported as a duplicate of the row named, whose leadId then differs;
//     the next run hashes differently.
//
// MapFields and CheckDuplicate report all of a row's errors at once, one per field, in field order.
//
// # Mapping file
//
// A partner whose export differs from the canonical columns and values gives
// a YAML mapping file with two optional top-level keys:
//
//	columns:                         # partner header: canonical field name
//	  "Cust SSN": socialSecurityNumber
//	  "Birth Date": dateOfBirth
//	values:                          # field: {partner value: value the rules accept}
//	  residenceTypeId:
//	    Own: 1
//	    Rent: 2
//	  termsConsent:
//	    "I agree": "true"
//	    "Declined": false
//	  state:
//	    "N/A": ""                    # an empty target makes the cell absent
//
// Field names are the LeadInput wire names, exactly (case-sensitive). Unknown
// top-level keys, unknown field names, a key given twice and value-map keys
// that differ only in case are errors naming the file and line. Targets may
// be written as YAML strings, integers or booleans; they are stored as text
// (integers in decimal, booleans as true/false) and still pass the field's
// rules after mapping. The reader applies columns; the mapper applies values.
package mapper
