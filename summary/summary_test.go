package summary

import (
	"github.com/bulkload/bulkload/lead"

	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestParseBid(t *testing.T) {
	for _, tc := range []struct {
		in    string
		cents int64
		ok    bool
	}{
		{"$42.50", 4250, true},
		{"$1,042.50", 104250, true},
		{"42.50", 4250, true},
		{"$0.01", 1, true},
		{"$42", 4200, true},
		{"$42.5", 4250, true},
		{" $7.00 ", 700, true},
		{"$1,234,567.89", 123456789, true},
		{"$999,999,999,999,999.99", 99999999999999999, true},
		{"", 0, false},
		{"$", 0, false},
		{"garbage", 0, false},
		{"$42.505", 0, false},
		{"$42.", 0, false},
		{"$.50", 0, false},
		{"$1,04.50", 0, false},
		{"$,100", 0, false},
		{"$1000,000", 0, false},
		{"-$5.00", 0, false},
		{"$-5.00", 0, false},
		{"$4 2", 0, false},
		{"$42.5x", 0, false},
		{"1e3", 0, false},
		{"$9999999999999999", 0, false},
		{"€42.50", 0, false},
	} {
		got, err := ParseBid(tc.in)
		if tc.ok && (err != nil || got != tc.cents) {
			t.Errorf("ParseBid(%q) = %d, %v; want %d", tc.in, got, err, tc.cents)
		}
		if !tc.ok && !errors.Is(err, ErrBid) {
			t.Errorf("ParseBid(%q) = %d, %v; want ErrBid", tc.in, got, err)
		}
	}
}

func TestFormatCents(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{
		{0, "$0.00"}, {1, "$0.01"}, {4250, "$42.50"}, {104250, "$1,042.50"}, {123456789, "$1,234,567.89"}, {-4250, "-$42.50"}, {100000, "$1,000.00"},
	} {
		if got := FormatCents(tc.in); got != tc.want {
			t.Errorf("FormatCents(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// uploadSummary is a finished upload of 12 rows with every status, bids
// (one unparseable) and several reasons.
func uploadSummary() *Summary {
	s := &Summary{
		Mode: "upload", Version: "v1.2.3", InputSHA256: strings.Repeat("ab", 32),
		Settings: map[string]any{"concurrency": 8, "rate": 20.0, "resume": false, "drainTimeout": "30s"},
		Build:    Build{Version: "v1.2.3", Revision: "0123abcd", Time: "2026-11-20T10:00:00Z", GoVersion: "go1.26.8"},
		Start:    time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC),
		End:      time.Date(2026, 11, 22, 5, 1, 2, 500_000_000, time.UTC),
		RowsRead: 12, APICalls: 15, Retries: 3, TokensFetched: 2,
		Rate: &Rate{Auto: true, CallsPerSecond: 291, LimitFound: true, Attempts: 18, Status429: 1},
	}
	for _, r := range []lead.Row{
		{Row: 1, Status: lead.StatusInvalid, Invalid: lead.RowErrors{{Row: 1, Field: lead.ZipCode, Rule: "must be 5 digits"}, {Row: 1, Field: lead.Email, Rule: "not an e-mail address"}}},
		{Row: 2, Status: lead.StatusInvalid, Invalid: lead.RowErrors{{Row: 2, Field: lead.ZipCode, Rule: "must be 5 digits"}}},
		{Row: 3, Status: lead.StatusInvalid, Invalid: lead.RowErrors{{Row: 3, Field: lead.TermsConsent, Rule: "must be true"}, {Row: 3, Field: lead.ZipCode, Rule: "must be 5 digits"}}},
		{Row: 4, ID: "lead-4", Status: lead.StatusProcessed, ResultCode: 1020},
		{Row: 5, ID: "lead-5", Status: lead.StatusProcessed, ResultCode: 1020},
		{Row: 6, ID: "lead-6", Status: lead.StatusSubmitted, ResultCode: 1013, BidValue: "$1,042.50"},
		{Row: 7, ID: "lead-7", Status: lead.StatusSubmitted, ResultCode: 1017, BidValue: "$42.50"},
		{Row: 8, ID: "lead-8", Status: lead.StatusSubmitted, ResultCode: 1015, BidValue: "n/a"},
		{Row: 9, ID: "lead-9", Status: lead.StatusSubmitFailed, ResultCode: 1014, BidValue: "$0.05", Error: "submitLead: HTTP 500"},
		{Row: 10, Status: lead.StatusFailed, Error: "createLead: HTTP 503 after 5 attempts"},
		{Row: 11, Status: lead.StatusFailed, Error: "createLead: HTTP 503 after 5 attempts"},
		{Row: 12, ID: "lead-12", Status: lead.StatusProcessed, ResultCode: 1016, BidValue: "$10"},
	} {
		s.Count(r)
	}
	return s
}

func validateSummary() *Summary {
	s := &Summary{
		Mode: "validate", Version: "v1.2.3",
		Start: time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC),
		End:   time.Date(2026, 11, 22, 5, 0, 4, 0, time.UTC),
	}
	for i := range 1000 {
		s.RowsRead++
		r := lead.Row{Row: i + 1, Status: lead.StatusValid}
		if i%100 == 0 {
			r.Status, r.Invalid = lead.StatusInvalid, lead.RowErrors{{Row: i + 1, Field: lead.State, Rule: "must be a two-letter code"}}
		}
		s.Count(r)
	}
	return s
}

func TestCount(t *testing.T) {
	s := uploadSummary()
	want := map[string]int{"Invalid": 3, "Processed": 3, "Submitted": 3, "SubmitFailed": 1, "Failed": 2, "Qualified": 5, "BidUnparseable": 1}
	v := reflect.ValueOf(s).Elem()
	for field, n := range want {
		if got := int(v.FieldByName(field).Int()); got != n {
			t.Errorf("after Count, %s = %d, want %d", field, got, n)
		}
	}
	if s.BidCents != 104250+4250+5+1000 {
		t.Errorf("BidCents = %d, want %d", s.BidCents, 104250+4250+5+1000)
	}
	wantTop := []lead.ReasonCount{
		{Reason: "zipCode: must be 5 digits", Count: 3},
		{Reason: "createLead: HTTP 503 after 5 attempts", Count: 2},
		{Reason: "email: not an e-mail address", Count: 1},
		{Reason: "submitLead: HTTP 500", Count: 1},
		{Reason: "termsConsent: must be true", Count: 1},
	}
	if got := s.Reasons.Top(10); !reflect.DeepEqual(got, wantTop) {
		t.Errorf("Top(10) = %v, want %v", got, wantTop)
	}
	if got := s.Reasons.Top(2); !reflect.DeepEqual(got, wantTop[:2]) {
		t.Errorf("Top(2) = %v, want %v", got, wantTop[:2])
	}
}

// TestCountAlreadySent: a row the ledger says an earlier run created
// carries that run's result code and bid, which this run does not count
// again (neither qualified nor in bids, nor in the result-code table); a
// conflict is a failure, listed with its reason.
func TestCountAlreadySent(t *testing.T) {
	s := &Summary{Mode: "upload", RowsRead: 3}
	s.Count(lead.Row{Row: 1, Status: lead.StatusSubmitted, ID: "a", ResultCode: 1013, BidValue: "$10.00"})
	s.Count(lead.Row{Row: 2, Status: lead.StatusAlreadySent, ID: "b", ResultCode: 1014, BidValue: "$20.00", Note: "sent by run 3"})
	s.Count(lead.Row{Row: 3, Status: lead.StatusConflict, Error: "leadId X was sent by run 3 with other content"})
	s.FinishDetails()
	if s.Qualified != 1 || s.BidCents != 1000 || s.AlreadySent != 1 || s.Conflict != 1 {
		t.Errorf("Qualified %d, BidCents %d, AlreadySent %d, Conflict %d; want 1, 1000, 1, 1", s.Qualified, s.BidCents, s.AlreadySent, s.Conflict)
	}
	if len(s.ResultCodes) != 1 || s.ResultCodes[0].Code != 1013 {
		t.Errorf("ResultCodes = %+v, want only this run's 1013", s.ResultCodes)
	}
	if len(s.Failures) != 1 || s.Failures[0].Status != lead.StatusConflict {
		t.Errorf("Failures = %+v, want the conflict", s.Failures)
	}
	if err := s.Check(); err != nil {
		t.Error(err)
	}
	var b strings.Builder
	if err := s.WriteText(&b, flagHints()); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"already sent", "conflict", "3 read = ", "1 already_sent", "1 conflict"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("summary text lacks %q:\n%s", w, b.String())
		}
	}
}

// TestCountReasonsFromFields checks that reasons are counted from the
// errors' fields: a malformed record at different positions on two rows is
// one reason, and a text reason holding "; " is never split.
func TestCountReasonsFromFields(t *testing.T) {
	var s Summary
	for _, r := range []lead.Row{
		{Row: 1, Status: lead.StatusInvalid, Invalid: lead.RowErrors{{Row: 1, StartLine: 2, Line: 2, Column: 5, Field: lead.NoField, Rule: "a quote; double it"}}},
		{Row: 7, Status: lead.StatusInvalid, Invalid: lead.RowErrors{{Row: 7, StartLine: 9, Line: 10, Column: 1, Field: lead.NoField, Rule: "a quote; double it"}}},
		{Row: 8, Status: lead.StatusFailed, Error: "retry after the Retry-After delay; 20 attempts"},
	} {
		s.Count(r)
	}
	want := []lead.ReasonCount{{Reason: "malformed record: a quote; double it", Count: 2}, {Reason: "retry after the Retry-After delay; 20 attempts", Count: 1}}
	if got := s.Reasons.Top(10); !reflect.DeepEqual(got, want) {
		t.Errorf("Top(10) = %v, want %v", got, want)
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		adjust func(*Summary)
		ok     bool
		text   string
	}{
		{"upload ok", func(*Summary) {}, true, "accounting: 12 read = 3 invalid + 3 processed + 3 submitted + 1 submit_failed + 2 failed: OK"},
		{"row lost", func(s *Summary) { s.RowsRead = 13 }, false, "ACCOUNTING MISMATCH: 13 read != 3 invalid + 3 processed + 3 submitted + 1 submit_failed + 2 failed: 1 rows read have no final status"},
		{"row twice", func(s *Summary) { s.Count(lead.Row{Row: 4, Status: lead.StatusProcessed}) }, false, "ACCOUNTING MISMATCH: 12 read != 3 invalid + 4 processed"},
		{"unknown status", func(s *Summary) { s.RowsRead++; s.Count(lead.Row{Row: 13, Status: "weird"}) }, false, "+ 1 unknown: 1 rows with an unknown status"},
		{"created pending", func(s *Summary) {
			s.RowsRead++
			s.Count(lead.Row{Row: 13, Status: lead.StatusCreated, ResultCode: 1013})
		}, true, "+ 2 failed + 1 created: OK"},
		{"validate ok", nil, true, "accounting: 1000 read = 990 valid + 10 invalid: OK"},
		{"validate mismatch", func(s *Summary) { s.RowsRead = 0 }, false, "ACCOUNTING MISMATCH: 0 read != 990 valid + 10 invalid: 1000 more rows counted than read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := uploadSummary()
			if strings.HasPrefix(tc.name, "validate") {
				s = validateSummary()
			}
			if tc.adjust != nil {
				tc.adjust(s)
			}
			err := s.Check()
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrAccounting)) {
				t.Errorf("Check() = %v, want ok=%v", err, tc.ok)
			}
			var b bytes.Buffer
			if err := s.WriteText(&b, flagHints()); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tc.text) {
				t.Errorf("WriteText = %q, want it to contain %q", b.String(), tc.text)
			}
		})
	}
}

func TestSummaryGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		sum  func() *Summary
	}{
		{"upload", uploadSummary},
		{"validate", validateSummary},
		{"upload-interrupted-mismatch", func() *Summary {
			s := uploadSummary()
			s.Interrupted = true
			s.RowsRead = 14
			s.RowsRead++
			s.Count(lead.Row{Row: 13, ID: "lead-13", Status: lead.StatusCreated, ResultCode: 1013, BidValue: "$1.00"})
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.sum().WriteText(&b, flagHints()); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./summary -update to create it)", err)
			}
			if b.String() != string(want) {
				t.Errorf("WriteText =\n%s\nwant (%s)\n%s", b.String(), golden, want)
			}
		})
	}
}

func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.json")
	s := uploadSummary()
	s.Interrupted = true
	if err := s.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("summary mode = %v, %v; want 0600", st.Mode().Perm(), err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("summary JSON: %v", err)
	}
	for key, want := range map[string]any{
		"mode": "upload", "version": "v1.2.3", "inputSha256": strings.Repeat("ab", 32), "interrupted": true,
		"rowsRead": 12.0, "invalid": 3.0, "processed": 3.0, "qualified": 5.0, "submitted": 3.0, "submitFailed": 1.0, "failed": 2.0,
		"totalBidCents": 109505.0, "totalBidValue": "$1,095.05", "bidUnparseable": 1.0,
		"apiCalls": 15.0, "retries": 3.0, "tokensFetched": 2.0, "elapsedSeconds": 62.5, "rowsPerSecond": 12 / 62.5,
		"start": "2026-11-22T05:00:00Z", "end": "2026-11-22T05:01:02.5Z",
		"accountingOK": true, "distinctReasons": 5.0,
		"settings": map[string]any{"concurrency": 8.0, "rate": 20.0, "resume": false, "drainTimeout": "30s"},
		"build":    map[string]any{"version": "v1.2.3", "revision": "0123abcd", "time": "2026-11-20T10:00:00Z", "modified": false, "goVersion": "go1.26.8"},
		"rate":     map[string]any{"auto": true, "callsPerSecond": 291.0, "limitFound": true, "attempts": 18.0, "status429": 1.0},
	} {
		if !reflect.DeepEqual(got[key], want) {
			t.Errorf("summary JSON %q = %#v, want %#v", key, got[key], want)
		}
	}
	top, _ := got["topReasons"].([]any)
	if len(top) != 5 || !reflect.DeepEqual(top[0], map[string]any{"reason": "zipCode: must be 5 digits", "count": 3.0}) {
		t.Errorf("summary JSON topReasons = %v, want 5 with zipCode first", top)
	}
}

// TestSummaryUnverified: an unverified row is counted, accounted for, and
// shown with what to do, in the text and the JSON.
func TestSummaryUnverified(t *testing.T) {
	s := &Summary{Mode: "upload", RowsRead: 2}
	s.Count(lead.Row{Row: 1, Status: lead.StatusSubmitted, ResultCode: 1017, BidValue: "45.00"})
	s.Count(lead.Row{Row: 2, Status: lead.StatusUnverified, ResultCode: 1002, Note: "Duplicate of lead x"})
	if s.Unverified != 1 {
		t.Errorf("Unverified = %d, want 1", s.Unverified)
	}
	if err := s.Check(); err != nil {
		t.Errorf("Check() = %v, want nil", err)
	}
	var b strings.Builder
	if err := s.WriteText(&b, flagHints()); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{"unverified                  1", "by leadId", "+ 1 unverified: OK"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary text lacks %q:\n%s", want, text)
		}
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := s.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	var got struct{ Unverified int }
	b2, _ := os.ReadFile(path)
	if err := json.Unmarshal(b2, &got); err != nil || got.Unverified != 1 {
		t.Errorf("summary JSON unverified = %d (%v), want 1", got.Unverified, err)
	}
}

// TestConcurrencyString: the summary's concurrency line names the limit as
// a limit, not calls in flight ("at 68 in flight at the end (peak 65)"
// said the limit was in flight), the limit settled after the climb, and
// createLead's latency apart from the other calls' (a mean of both once
// read "latency 801 ms, base 997 ms").
func TestConcurrencyString(t *testing.T) {
	for _, tc := range []struct {
		c    Concurrency
		want string
	}{
		{Concurrency{Auto: true, Limit: 68, Max: 256, PeakInFlight: 65, Settled: 52, MeanLatencyMs: 801, BaseLatencyMs: 997, CreateLatencyMs: 1010, OtherLatencyMs: 35},
			"auto, settled at 52 in flight after its climb (limit 68 at the end, peak 65 in flight, cap 256); createLead 1.01 s (base 997 ms), other calls 35 ms"},
		{Concurrency{Auto: true, Limit: 64, Max: 256, PeakInFlight: 64, CreateLatencyMs: 40},
			"auto, still climbing: limit 64 at the end (peak 64 in flight, cap 256); createLead 40 ms"},
		{Concurrency{Limit: 8, PeakInFlight: 8, OtherLatencyMs: 12}, "fixed at 8 in flight (peak 8); other calls 12 ms"},
		{Concurrency{Auto: true, Limit: 9, Max: 256, PeakInFlight: 12, MeanLatencyMs: 21, BaseLatencyMs: 20},
			"auto, still climbing: limit 9 at the end (peak 12 in flight, cap 256); latency 21 ms, base 20 ms"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("%+v.String() =\n%q, want\n%q", tc.c, got, tc.want)
		}
	}
}

func TestRateString(t *testing.T) {
	for _, tc := range []struct {
		r    Rate
		want string
	}{
		{Rate{Auto: true, CallsPerSecond: 291.4, LimitFound: true, Attempts: 1000, Status429: 4}, "settled at 291 calls/s; 0.4% answered 429"},
		{Rate{Auto: true, CallsPerSecond: 158.2, Attempts: 500}, "no 429 seen; it allowed up to 158 calls/s; 0.0% answered 429"},
		{Rate{Auto: true, Attempts: 500}, "no limit: the service showed none (no 429); 0.0% answered 429"},
		{Rate{CallsPerSecond: 20, Attempts: 100, Status429: 3}, "fixed at 20 calls/s; 3.0% answered 429"},
		{Rate{}, "unlimited (--rate 0); 0.0% answered 429"},
	} {
		if got := tc.r.Text(flagHints()); got != tc.want {
			t.Errorf("%+v.Text(flagHints()) = %q, want %q", tc.r, got, tc.want)
		}
		// String names no setting.
		if got, want := tc.r.String(), strings.Replace(tc.want, " (--rate 0)", "", 1); got != want {
			t.Errorf("%+v.String() = %q, want %q", tc.r, got, want)
		}
	}
}

// flagHints are the command line's hints (package app's cliHints), with
// which the golden texts were written.
func flagHints() Hints {
	return Hints{Resume: "--resume", ResendChanged: "--resend-changed", MaxInvalid: "--max-invalid", Rate: "--rate", Concurrency: "--concurrency"}
}

// adviceSummary is a summary with every line that advises a setting: rows
// not reached, unverified, created, in conflict, a rate found and one
// unlimited, an input that grew.
func adviceSummary(auto bool) *Summary {
	s := uploadSummary()
	s.InputRows, s.RowsRead = 20, 16
	s.NotReached = 4
	s.Count(lead.Row{Row: 13, Status: lead.StatusUnverified})
	s.Count(lead.Row{Row: 14, Status: lead.StatusCreated, ID: "lead-14"})
	s.Count(lead.Row{Row: 15, Status: lead.StatusConflict})
	s.Count(lead.Row{Row: 16, Status: lead.StatusFailed})
	s.Rate = &Rate{Auto: auto, LimitFound: auto, CallsPerSecond: 40}
	if !auto {
		s.Rate.CallsPerSecond = 0
	}
	s.InputGrewBytes, s.InputBytes = 10, 1000
	return s
}

// TestWriteTextHints: the summary's advice names a setting only as the
// caller's Hints word it: with none, no flag of the command line appears
// (a library speaks of what to do); with the command line's, each does.
func TestWriteTextHints(t *testing.T) {
	for _, auto := range []bool{true, false} {
		var plain, flags bytes.Buffer
		if err := adviceSummary(auto).WriteText(&plain, Hints{}); err != nil {
			t.Fatal(err)
		}
		if err := adviceSummary(auto).WriteText(&flags, flagHints()); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(plain.String(), "--") {
			t.Errorf("WriteText(Hints{}) names a flag:\n%s", plain.String())
		}
		want := []string{
			"the run stopped first; --resume sends them",
			"submit it if it is yours and qualified; --resume checks them again",
			"submission pending: rerun with --resume",
			"check the rows and pass --resend-changed to send the new content",
			"rerun with --resume to send the rows appended",
			"4 not reached, left for --resume",
		}
		if auto {
			want = append(want, "(pin it with --rate 40)")
		} else {
			want = append(want, "unlimited (--rate 0)")
		}
		for _, w := range want {
			if !strings.Contains(flags.String(), w) {
				t.Errorf("WriteText(flagHints()) lacks %q:\n%s", w, flags.String())
			}
		}
	}
}
