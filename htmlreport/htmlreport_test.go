package htmlreport

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/summary"
)

// bigSummary is the summary of a long run with every table full: the
// timeline at its bound, the most column/rule pairs and failure reasons
// the summary keeps, each with its first rows and notes.
func bigSummary() *summary.Summary {
	s := &summary.Summary{Mode: "upload", RowsRead: 1_000_000, Start: time.Unix(0, 0), End: time.Unix(8*3600, 0),
		Settings: map[string]any{"input": "acme.csv", "concurrency": 8}}
	tr := summary.NewTimelineRecorder(s.Start)
	for i := range 8 * 3600 {
		tr.Add(summary.Sample{Seconds: 1, Answered: int64(30 + i%50), Status429: int64(i % 3), InFlight: 8, ConcurrencyLimit: 8, LatencyP50Ms: 40, LatencyP95Ms: 90, RateLimit: 100})
	}
	tr.Mark(time.Unix(3600, 0), 20*time.Second, summary.MarkOutage, "no answer")
	s.Timeline = tr.Timeline()
	for i := range 1_000_000 {
		r := lead.Row{Row: i + 1, Status: lead.StatusSubmitted, ResultCode: 1013 + i%5, BidValue: "$15.00"}
		switch {
		case i%7 == 0:
			r.Status = lead.StatusInvalid
			r.ResultCode, r.BidValue = 0, ""
			r.Invalid = lead.RowErrors{{Row: i + 1, Field: lead.Field(i % int(lead.NumFields)), Header: fmt.Sprintf("col%d", i%150), Rule: fmt.Sprintf("rule %d", i%3), Value: "x"}}
		case i%11 == 0:
			r.Status, r.ResultCode, r.BidValue = lead.StatusFailed, 0, ""
			r.Error = fmt.Sprintf("createLead: HTTP 502 after 5 attempts (%d)", i%150)
			r.Note = strings.Repeat("a long note from the service ", 10)
		}
		s.Count(r)
	}
	return s
}

// TestRenderBounded: the page of a 1,000,000-row run with every table full
// stays under 1 MiB, carries the strict policy and no script.
func TestRenderBounded(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, &Report{Summary: bigSummary()}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if b.Len() > 1<<20 {
		t.Errorf("page is %d bytes, want at most 1 MiB", b.Len())
	}
	if !strings.Contains(page, `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;`) &&
		!strings.Contains(page, `content="default-src 'none'`) {
		t.Errorf("page lacks the strict Content-Security-Policy")
	}
	for _, bad := range []string{"<script", "<link", "@import", "url(", "<img", "<iframe"} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q: it must load nothing", bad)
		}
	}
}

// TestScrub: text from the service loses SSN-shaped numbers, e-mail
// addresses and phone numbers; lead ids and amounts stay.
func TestScrub(t *testing.T) {
	tests := []struct{ in, want string }{
		{"dup of 123-45-6789", "dup of [REDACTED]"},
		{"mail bob.smith@example.com now", "mail [REDACTED] now"},
		{"call (512) 323-4567 or 512.323.4567", "call [REDACTED] or [REDACTED]"},
		{"duplicate of lead 3f2504e0-4f89-11d3-9a0c-0305e82c3301, bid $42.50", "duplicate of lead 3f2504e0-4f89-11d3-9a0c-0305e82c3301, bid $42.50"},
	}
	for _, tc := range tests {
		if got := scrub(tc.in); got != tc.want {
			t.Errorf("scrub(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// BenchmarkRender1M renders the report of a 1,000,000-row run from its
// summary (what --report does at the end of a run).
func BenchmarkRender1M(b *testing.B) {
	s := bigSummary()
	b.ResetTimer()
	for b.Loop() {
		var w bytes.Buffer
		if err := Render(&w, &Report{Summary: s}); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(w.Len()), "bytes")
	}
}
