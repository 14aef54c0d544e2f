package summary

import (
	"strings"
	"testing"

	"github.com/bulkload/bulkload/outfile"
)

// TestDeferredRows: the rows the service asked to come back later than
// the run waits are named in the text, with the setting that bounds the
// wait and what sends them, and a combined summary adds them up.
func TestDeferredRows(t *testing.T) {
	var s Summary
	for _, r := range []int{9, 3} {
		s.Deferred.Add(r)
	}
	var b strings.Builder
	if err := s.WriteText(&b, Hints{Resume: "--resume", RetryWait: "--max-retry-wait"}); err != nil {
		t.Fatal(err)
	}
	want := "2  rows 3, 9: the service asked them to come back (Retry-After) later than the run waits for it (--max-retry-wait); not retried: --resume sends them"
	if !strings.Contains(b.String(), "  deferred   ") || !strings.Contains(b.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, b.String())
	}
	var none Summary
	b.Reset()
	none.WriteText(&b, Hints{})
	if strings.Contains(b.String(), "deferred") {
		t.Errorf("a summary without deferred rows has the line:\n%s", b.String())
	}
	if err := s.Validate(); err != nil {
		t.Errorf("Validate() = %v, want nil", err)
	}
	for _, bad := range []RowList{{Count: -1}, {Count: 1, Rows: []int{1, 2}}} {
		b := Summary{Deferred: bad}
		if err := b.Validate(); err == nil || !strings.Contains(err.Error(), "deferred.") {
			t.Errorf("Validate() of deferred %+v = %v, want it refused", bad, err)
		}
	}
	other := Summary{}
	other.Deferred.Add(5)
	m := Merge([]*Summary{&s, &other}, make([]*outfile.Meta, 2))
	if m.Deferred.Count != 3 || len(m.Deferred.Rows) != 3 || m.Deferred.Rows[1] != 5 {
		t.Errorf("merged deferred = %+v, want rows 3, 5, 9", m.Deferred)
	}
}
