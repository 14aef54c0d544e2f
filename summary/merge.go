package summary

import (
	"cmp"
	"slices"

	"github.com/bulkload/bulkload/outfile"
)

// Merge combines several results files from the summaries beside them
// (Path; parts[i] of the file whose meta file is metas[i], nil when
// it has none) instead of their rows: the counts and the report's tables
// add up, an input's row count is taken once from its meta file, and its
// rows that no file holds (a shard that never ran or stopped early) count
// as not sent. It reads no row, so its cost does not grow with the files;
// the caller uses it only when every file has a summary at least as new as
// itself (a results file written after its summary belongs to a run that
// never finished it: the caller reads that one's rows instead, as
// package app's combine does).
func Merge(parts []*Summary, metas []*outfile.Meta) *Summary {
	sum := &Summary{Mode: "summary"}
	type input struct{ rows, held int }
	inputs := map[string]*input{}
	var order []string
	for i, p := range parts {
		// The rows the file holds: every status counted but the rows not
		// sent and those of other shards, which have no line.
		held := p.accounted() - p.NotSent - p.OtherShards
		if m := metas[i]; m != nil && m.InputSHA256 != "" {
			in := inputs[m.InputSHA256]
			if in == nil {
				in = &input{rows: m.Rows}
				inputs[m.InputSHA256] = in
				order = append(order, m.InputSHA256)
				sum.RowsRead += m.Rows
			}
			in.held += held
		} else {
			sum.RowsRead += held
		}
		sum.add(p)
	}
	for _, sha := range order {
		if in := inputs[sha]; in.rows > in.held {
			sum.NotSent += in.rows - in.held
		}
	}
	return sum
}

// add adds the row counts and the report's tables of o to s.
func (s *Summary) add(o *Summary) {
	s.Counts.Add(o.Counts)
	s.Unknown += o.Unknown
	s.Qualified += o.Qualified
	s.BidCents += o.BidCents
	s.BidUnparseable += o.BidUnparseable
	s.APICalls += o.APICalls
	s.Retries += o.Retries
	s.TokensFetched += o.TokensFetched
	s.NoLeadID.merge(o.NoLeadID)
	s.KeptLeads.merge(o.KeptLeads)
	s.Deferred.merge(o.Deferred)
	s.ResultCodes = addByKey(s.ResultCodes, o.ResultCodes, func(c CodeCount) int { return c.Code },
		func(c *CodeCount, o CodeCount) { c.Count, c.BidCents = c.Count+o.Count, c.BidCents+o.BidCents })
	s.BidBuckets = addByKey(s.BidBuckets, o.BidBuckets, func(b BidBucket) int64 { return b.FromCents },
		func(b *BidBucket, o BidBucket) { b.Count, b.BidCents = b.Count+o.Count, b.BidCents+o.BidCents })
	s.MergeInvalidColumns(o.InvalidColumns)
	for _, f := range o.Failures {
		i := slices.IndexFunc(s.Failures, func(x Failure) bool { return x.Status == f.Status && x.Reason == f.Reason })
		if i < 0 {
			f.FirstRows, f.Notes = slices.Clone(f.FirstRows), slices.Clone(f.Notes)
			s.Failures = append(s.Failures, f)
			continue
		}
		m := &s.Failures[i]
		m.Count += f.Count
		for j, row := range f.FirstRows {
			if len(m.FirstRows) < maxFirstRows {
				m.FirstRows = append(m.FirstRows, row)
				if j < len(f.Notes) {
					m.Notes = append(m.Notes, f.Notes[j])
				}
			}
		}
	}
	slices.SortFunc(s.Failures, func(a, b Failure) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Status, b.Status), cmp.Compare(a.Reason, b.Reason))
	})
}

// merge adds the rows of o to l: the counts add up, the rows named stay
// the first maxNamedRows in row order.
func (l *RowList) merge(o RowList) {
	for _, r := range o.Rows {
		l.Add(r)
	}
	l.Count += o.Count - len(o.Rows)
	if len(l.Rows) > maxNamedRows {
		l.Rows = l.Rows[:maxNamedRows]
	}
}

// addByKey adds the entries of o to s, an entry whose key s has to that
// one (add), a new key as a new entry, and returns s sorted by key.
func addByKey[T any, K cmp.Ordered](s, o []T, key func(T) K, add func(*T, T)) []T {
	for _, x := range o {
		if i := slices.IndexFunc(s, func(y T) bool { return key(y) == key(x) }); i >= 0 {
			add(&s[i], x)
		} else {
			s = append(s, x)
		}
	}
	slices.SortFunc(s, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	return s
}
