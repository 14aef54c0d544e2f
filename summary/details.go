package summary

import (
	"cmp"
	"slices"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/report"
)

// Bounds of the details a Summary keeps for the run report: enough to tell
// a partner what to fix and an operator where to look, small whatever the
// input's size.
const (
	// maxDetailKeys bounds the distinct (column, rule) pairs and failure
	// reasons kept; rows beyond it count in an "other" entry.
	maxDetailKeys = 100
	// maxFirstRows is how many first row numbers an entry keeps.
	maxFirstRows = 10
	// maxExamples is how many distinct example values an entry keeps.
	maxExamples = 3
)

// otherKey names the entry that counts what is past maxDetailKeys.
const otherKey = "(other)"

// BidEdgesCents returns the upper bounds of the bid distribution's buckets
// in cents; the last bucket, past the last edge, is open.
func BidEdgesCents() []int64 { return []int64{1000, 2000, 3000, 4000, 5000, 10000, 25000} }

// CodeCount is how many rows got one result code, and the sum of their
// bids in cents (qualified codes only).
type CodeCount struct {
	// Code is the result code; 0: none (invalid, failed, not sent).
	Code     int   `json:"code"`
	Count    int   `json:"count"`
	BidCents int64 `json:"bidCents"`
}

// BidBucket is one bucket of the bid distribution: the bids of at least
// FromCents and below ToCents (0: no upper bound).
type BidBucket struct {
	FromCents int64 `json:"fromCents"`
	ToCents   int64 `json:"toCents"`
	Count     int   `json:"count"`
	BidCents  int64 `json:"bidCents"`
}

// InvalidColumn counts the invalid rows that broke one rule in one of the
// partner's columns: what the partner is to fix.
type InvalidColumn struct {
	// Column is the partner's name for the column (CSV header or JSONL
	// key); Field the LeadInput field it maps to; both "" for a malformed
	// record, which has no column.
	Column string `json:"column"`
	Field  string `json:"field"`
	// Rule is what is wrong, fixed text without the value.
	Rule  string `json:"rule"`
	Count int    `json:"count"`
	// FirstRows are the first rows (1-based data rows) that broke it.
	FirstRows []int `json:"firstRows"`
	// Examples are the first distinct values that broke it, only where the
	// mapper shows a value (never an SSN, a date of birth, or anything
	// shaped like one) and never for an e-mail or phone column.
	Examples []string `json:"examples,omitempty"`
}

// Failure counts the rows that ended with one status for one reason:
// failed, submit_failed or unverified.
type Failure struct {
	Status lead.Status `json:"status"`
	// Reason is the row's error (the service's answer or the run's reason,
	// redacted of personal data before it was recorded), or for an
	// unverified row that status's meaning.
	Reason    string `json:"reason"`
	Count     int    `json:"count"`
	FirstRows []int  `json:"firstRows"`
	// Notes are the first rows' notes, as the results file has them (the
	// service's note, redacted, with what bulkload added).
	Notes []string `json:"notes,omitempty"`
}

// unverifiedReason is the Reason of an unverified row without an error.
const unverifiedReason = "duplicate answer after a lost one, not confirmed as this row's own lead: reconcile by leadId"

// details are the Summary's row-level tables while rows are counted.
type details struct {
	codes    map[int]*CodeCount
	invalid  map[invalidKey]*InvalidColumn
	failures map[failureKey]*Failure
}

type invalidKey struct{ column, field, rule string }
type failureKey struct {
	status lead.Status
	reason string
}

// exampleAllowed reports whether the values of f may be shown as
// examples: never an SSN, a date of birth, an e-mail or a phone.
func exampleAllowed(f lead.Field) bool {
	switch {
	case f == lead.NoField, f.Sensitive(), f == lead.Email, f == lead.HomePhone, f == lead.CellPhone:
		return false
	}
	return true
}

func addRow(rows []int, row int) []int {
	if len(rows) < maxFirstRows && row > 0 && !slices.Contains(rows, row) {
		rows = append(rows, row)
	}
	return rows
}

// countDetails adds one row to the detail tables.
func (s *Summary) countDetails(r lead.Row) {
	d := &s.details
	if d.codes == nil {
		d.codes = map[int]*CodeCount{}
		d.invalid = map[invalidKey]*InvalidColumn{}
		d.failures = map[failureKey]*Failure{}
	}
	// A row of an unknown status is counted as sent.
	if i, ok := r.Status.Info(); !ok || i.Sent {
		c := d.codes[r.ResultCode]
		if c == nil {
			c = &CodeCount{Code: r.ResultCode}
			d.codes[r.ResultCode] = c
		}
		c.Count++
		if lead.NeedsSubmission(r.ResultCode) && r.BidValue != "" {
			if cents, err := ParseBid(r.BidValue); err == nil {
				c.BidCents += cents
				s.addBid(cents)
			}
		}
	}
	for _, e := range r.Invalid {
		k := invalidKey{e.Header, "", e.Rule}
		if e.Field != lead.NoField {
			k.field = e.Field.String()
			if k.column == "" {
				k.column = k.field
			}
		} else {
			k.column = ""
		}
		ic := d.invalid[k]
		if ic == nil {
			if len(d.invalid) >= maxDetailKeys {
				k = invalidKey{otherKey, "", otherKey}
				if ic = d.invalid[k]; ic == nil {
					ic = &InvalidColumn{Column: otherKey, Rule: "more distinct column and rule pairs than the report lists"}
					d.invalid[k] = ic
				}
			} else {
				ic = &InvalidColumn{Column: k.column, Field: k.field, Rule: k.rule}
				d.invalid[k] = ic
			}
		}
		ic.Count++
		ic.FirstRows = addRow(ic.FirstRows, r.Row)
		if e.Value != "" && exampleAllowed(e.Field) && len(ic.Examples) < maxExamples && !slices.Contains(ic.Examples, e.Value) {
			ic.Examples = append(ic.Examples, e.Value)
		}
	}
	if i, _ := r.Status.Info(); !i.Failure() {
		return
	}
	k := failureKey{r.Status, cmp.Or(r.Error, unverifiedReason)}
	f := d.failures[k]
	if f == nil {
		if len(d.failures) >= maxDetailKeys {
			k.reason = otherKey
			f = d.failures[k]
		}
		if f == nil {
			f = &Failure{Status: k.status, Reason: k.reason}
			d.failures[k] = f
		}
	}
	f.Count++
	if len(f.FirstRows) < maxFirstRows && r.Row > 0 {
		f.FirstRows = append(f.FirstRows, r.Row)
		f.Notes = append(f.Notes, report.NoteText(&r))
	}
}

// addBid counts one bid in the distribution.
func (s *Summary) addBid(cents int64) {
	edges := BidEdgesCents()
	if len(s.BidBuckets) == 0 {
		var from int64
		for _, e := range edges {
			s.BidBuckets = append(s.BidBuckets, BidBucket{FromCents: from, ToCents: e})
			from = e
		}
		s.BidBuckets = append(s.BidBuckets, BidBucket{FromCents: from})
	}
	i, _ := slices.BinarySearch(edges, cents+1)
	s.BidBuckets[i].Count++
	s.BidBuckets[i].BidCents += cents
}

// FinishDetails moves the rows counted since the last call into the
// Summary's sorted lists (ResultCodes in code order, InvalidColumns and
// Failures most frequent first). JSON and the run report call it; calling
// it again, or after more rows, is safe.
func (s *Summary) FinishDetails() {
	d := &s.details
	if d.codes == nil {
		return
	}
	for _, c := range d.codes {
		i := slices.IndexFunc(s.ResultCodes, func(x CodeCount) bool { return x.Code == c.Code })
		if i < 0 {
			s.ResultCodes = append(s.ResultCodes, *c)
			continue
		}
		s.ResultCodes[i].Count += c.Count
		s.ResultCodes[i].BidCents += c.BidCents
	}
	slices.SortFunc(s.ResultCodes, func(a, b CodeCount) int { return cmp.Compare(a.Code, b.Code) })
	inv := make([]InvalidColumn, 0, len(d.invalid))
	for _, c := range d.invalid {
		inv = append(inv, *c)
	}
	s.MergeInvalidColumns(inv)
	for _, f := range d.failures {
		i := slices.IndexFunc(s.Failures, func(x Failure) bool { return x.Status == f.Status && x.Reason == f.Reason })
		if i < 0 {
			s.Failures = append(s.Failures, *f)
			continue
		}
		m := &s.Failures[i]
		m.Count += f.Count
		for j, row := range f.FirstRows {
			if len(m.FirstRows) < maxFirstRows {
				m.FirstRows = append(m.FirstRows, row)
				m.Notes = append(m.Notes, f.Notes[j])
			}
		}
	}
	slices.SortFunc(s.Failures, func(a, b Failure) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Status, b.Status), cmp.Compare(a.Reason, b.Reason))
	})
	s.details = details{}
}

func sortInvalid(v []InvalidColumn) {
	slices.SortFunc(v, func(a, b InvalidColumn) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Column, b.Column), cmp.Compare(a.Rule, b.Rule))
	})
}

// MergeInvalidColumns adds the invalid-column table of another summary of
// the same input's rows (a shard's) to s's: counts add up, first rows and
// examples merge, the lowest first.
func (s *Summary) MergeInvalidColumns(other []InvalidColumn) {
	idx := map[invalidKey]int{}
	for i, c := range s.InvalidColumns {
		idx[invalidKey{c.Column, c.Field, c.Rule}] = i
	}
	for _, c := range other {
		k := invalidKey{c.Column, c.Field, c.Rule}
		i, ok := idx[k]
		if !ok {
			idx[k] = len(s.InvalidColumns)
			c.FirstRows = slices.Clone(c.FirstRows)
			c.Examples = slices.Clone(c.Examples)
			s.InvalidColumns = append(s.InvalidColumns, c)
			continue
		}
		m := &s.InvalidColumns[i]
		m.Count += c.Count
		rows := append(slices.Clone(m.FirstRows), c.FirstRows...)
		slices.Sort(rows)
		rows = slices.Compact(rows)
		m.FirstRows = rows[:min(maxFirstRows, len(rows))]
		for _, ex := range c.Examples {
			if len(m.Examples) < maxExamples && !slices.Contains(m.Examples, ex) {
				m.Examples = append(m.Examples, ex)
			}
		}
	}
	sortInvalid(s.InvalidColumns)
}
