package htmlreport

import (
	"strings"
	"testing"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/summary"
)

// flagHints are the command line's hints (package app's cliHints).
func flagHints() summary.Hints {
	return summary.Hints{Resume: "--resume", ResendChanged: "--resend-changed", MaxInvalid: "--max-invalid", Rate: "--rate", Concurrency: "--concurrency"}
}

// TestVerdict: the first sentence names the exit status and what to do.
func TestVerdict(t *testing.T) {
	code := func(n int) *int { return &n }
	tests := []struct {
		name  string
		s     summary.Summary
		want  []string
		level string
	}{
		{"all done", summary.Summary{Mode: "upload", ExitCode: code(0), RowsRead: 5, Counts: lead.Counts{Submitted: 5}, Qualified: 5, BidCents: 7500}, []string{"exit 0", "$75.00", "Nothing to do"}, "ok"},
		{"invalid within --max-invalid", summary.Summary{Mode: "upload", ExitCode: code(0), RowsRead: 5, Counts: lead.Counts{Submitted: 4, Invalid: 1}}, []string{"exit 0", "1 invalid", "partner"}, "warn"},
		{"failed and unverified, lead not readable", summary.Summary{Mode: "upload", ExitCode: code(1), RowsRead: 5, Counts: lead.Counts{Failed: 1, Unverified: 1},
			Failures: []summary.Failure{{Status: lead.StatusUnverified, Notes: []string{"x [bulkload: ...; could not read lead 1 to tell ...]"}}}},
			[]string{"exit 1", "--resume", "Lead.Read"}, "warn"},
		{"validate", summary.Summary{Mode: "validate", ExitCode: code(1), RowsRead: 10, Counts: lead.Counts{Valid: 7, Invalid: 3}}, []string{"3 of 10 rows are invalid (exit 1)", "partner", "more than --max-invalid are invalid"}, "warn"},
		{"stopped: too many invalid", summary.Summary{Mode: "upload", ExitCode: code(1), Stopped: "12 of 40 rows invalid"}, []string{"Nothing was sent (exit 1)", "12 of 40"}, "bad"},
		{"credentials", summary.Summary{Mode: "upload", ExitCode: code(3), Stopped: "authentication failed"}, []string{"exit 3", "secret"}, "bad"},
		{"outage", summary.Summary{Mode: "upload", ExitCode: code(4), NotSent: 12, NotReached: 30}, []string{"exit 4", "42 rows were not sent", "--resume"}, "bad"},
		{"signal", summary.Summary{Mode: "upload", ExitCode: code(130), NotSent: 3}, []string{"exit 130", "--resume"}, "warn"},
		{"a re-dropped export", summary.Summary{Mode: "upload", ExitCode: code(0), RowsRead: 5, Counts: lead.Counts{AlreadySent: 5}}, []string{"Nothing was sent (exit 0)", "all 5 rows", "earlier runs"}, "warn"},
		{"a cumulative export", summary.Summary{Mode: "upload", ExitCode: code(0), RowsRead: 5, Counts: lead.Counts{AlreadySent: 3, Submitted: 2}, Qualified: 2, BidCents: 500}, []string{"exit 0", "$5.00", "3 rows were sent by earlier runs"}, "ok"},
		{"a conflict", summary.Summary{Mode: "upload", ExitCode: code(1), RowsRead: 5, Counts: lead.Counts{AlreadySent: 4, Conflict: 1}}, []string{"exit 1", "1 in conflict", "--resend-changed"}, "warn"},
		{"combined, rows counted twice", summary.Summary{Mode: "upload", ExitCode: code(1), RowsRead: 5, Counts: lead.Counts{Submitted: 10}, Qualified: 10, BidCents: 18000},
			[]string{"exit 1", "the accounting does not add up", "accounting check and the notes below"}, "warn"},
		{"combined, every row settled but a run ended with exit 5", summary.Summary{Mode: "upload", ExitCode: code(1), RowsRead: 5, Counts: lead.Counts{Submitted: 5}, Notes: []string{"the last run on r.csv ended with exit 5"}},
			[]string{"exit 1", "Not every run ended well", "notes below"}, "warn"},
		{"rows asked to come back later", summary.Summary{Mode: "upload", ExitCode: code(1), RowsRead: 10, Counts: lead.Counts{Submitted: 7}, NotSent: 3, Deferred: summary.RowList{Count: 3, Rows: []int{2, 5, 9}}},
			[]string{"exit 1", "3 not sent, 3 of them asked by the service to come back later than the run waits (Retry-After)", "--resume"}, "warn"},
		{"combined, a shard missing", summary.Summary{Mode: "upload", RowsRead: 10, Counts: lead.Counts{Submitted: 5}, NotSent: 5}, []string{"exit 1", "5 not sent"}, "warn"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Without hints, the advice names no flag: the words about
			// flags are the command line's.
			if plain, _ := verdict(&tc.s, nil, summary.Hints{}); strings.Contains(plain, "--") {
				t.Errorf("verdict(Hints{}) = %q, names a flag", plain)
			}
			got, level := verdict(&tc.s, nil, flagHints())
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("verdict = %q, want it to say %q", got, w)
				}
			}
			if level != tc.level {
				t.Errorf("level %q, want %q", level, tc.level)
			}
		})
	}
}

// TestRenderHints: the page names the command line's flags only through
// Report.Hints: the rows not reached, the rate, the verdict.
func TestRenderHints(t *testing.T) {
	code := 4
	s := func() *summary.Summary {
		return &summary.Summary{Mode: "upload", ExitCode: &code, InputRows: 40, RowsRead: 10, NotReached: 30,
			Counts: lead.Counts{Submitted: 10}, Rate: &summary.Rate{Attempts: 20, Status429: 2}}
	}
	var plain, flags strings.Builder
	if err := Render(&plain, &Report{Summary: s()}); err != nil {
		t.Fatal(err)
	}
	if err := Render(&flags, &Report{Summary: s(), Hints: flagHints()}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"the run stopped first; --resume sends them", "unlimited (--rate 0)", "run the same command with --resume."} {
		if !strings.Contains(flags.String(), w) {
			t.Errorf("Render with flagHints() lacks %q", w)
		}
	}
	for _, w := range []string{"the run stopped first; a resumed run sends them", "once the service answers, resume the run."} {
		if !strings.Contains(plain.String(), w) {
			t.Errorf("Render without hints lacks %q", w)
		}
	}
	if i := strings.Index(plain.String(), "--r"); i >= 0 {
		t.Errorf("Render without hints names a flag: %q", plain.String()[max(0, i-60):i+20])
	}
}
