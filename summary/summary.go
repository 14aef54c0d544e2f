// Package summary is a run's summary: the arithmetic over its rows (counts
// by status with the accounting check, invalid reasons and columns,
// failures, result codes, bids, rates, concurrency and the timeline), its
// text for the terminal and its JSON, the file beside the results file
// that keeps it (Path, Read), and the combining of several runs' summaries
// (Merge). It counts rows (lead.Row) as the engine gives them, or whoever
// reads a results file back (package app, through package report), and it
// reads and writes no row itself.
package summary

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/outfile"
)

// ErrAccounting is wrapped by Summary.Check's error: rows read and rows
// accounted for differ, so some row was lost or counted twice.
var ErrAccounting = errors.New("accounting mismatch")

// ErrBid is wrapped by ParseBid's error for a bid value it cannot read.
var ErrBid = errors.New("unparseable bid value")

// topReasons is how many failure reasons the summary lists.
const topReasons = 10

// Build identifies the binary that made a run, as the Go toolchain recorded
// it (runtime/debug.ReadBuildInfo): the main module's version, the VCS
// revision, its commit time and whether the tree was modified, and the Go
// version.
type Build struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"`
	Modified  bool   `json:"modified"`
	GoVersion string `json:"goVersion"`
	// BuildVCS is the -buildvcs setting the binary was built with, when
	// given ("false": no VCS revision recorded on purpose).
	BuildVCS string `json:"buildvcs,omitempty"`
}

// Summary is the account of one run, printed on stderr (WriteText) and
// written for --summary-json (WriteJSON). The caller fills the run-level
// fields (Mode, Version, InputSHA256, Settings, Start, End, Interrupted,
// RowsRead, APICalls, Retries, TokensFetched) and calls Count once per row
// with the row's final line; Count fills the rest. RowsRead must be counted
// apart from Count (as rows come out of the reader): the accounting check
// compares the two. A Summary is not safe for concurrent use.
type Summary struct {
	Mode        string `json:"mode"`    // "validate" or "upload"
	Version     string `json:"version"` // Build.Version
	Build       Build  `json:"build"`
	InputSHA256 string `json:"inputSha256"`
	// Settings are the options that shaped the run, never a secret: keys
	// in camelCase like the summary's own, values typed (numbers as
	// numbers, booleans as booleans, durations as strings like "30s").
	Settings    map[string]any `json:"settings"`
	Start       time.Time      `json:"start"`
	End         time.Time      `json:"end"`
	Interrupted bool           `json:"interrupted"`
	// ExitCode is the run's exit status, the same the process returns; nil
	// until it is known (the summary printed or logged at the end of the
	// run comes before it), so only --summary-json's file carries it.
	ExitCode *int `json:"exitCode,omitempty"`
	// Stopped says why a run stopped before it read or sent its rows (the
	// message on stderr, without the "bulkload:" prefix); "" for a run
	// that went through its input. The counts of such a run are zero.
	Stopped string `json:"stopped,omitempty"`
	// InputBytes is how many bytes of the input InputSHA256 covers: the
	// bytes read. InputGrewBytes is how many more the file held at the end
	// of the run: appended while it ran, not read.
	InputBytes     int64 `json:"inputBytes"`
	InputGrewBytes int64 `json:"inputGrewBytes"`
	// UnknownColumns are the input's columns that match no LeadInput field
	// (ignored); MissingFields the LeadInput fields no column provides.
	// Both are listed always, empty or not: header drift shows here.
	UnknownColumns []string `json:"unknownColumns"`
	MissingFields  []string `json:"missingFields"`

	RowsRead int `json:"rowsRead"`
	// InputRows is the input's row count, when the check before the first
	// call read it through (a regular file); 0 when unknown (a stream).
	// NotReached counts its rows the run never read because it stopped
	// first (an outage, a signal): they have no line, and --resume sends
	// them. The accounting of the rows read stands apart from them.
	InputRows  int `json:"inputRows,omitempty"`
	NotReached int `json:"notReached"`
	// Resumed counts the rows read that an earlier run had finished
	// (--resume): counted by their status, not sent again.
	Resumed int `json:"resumedRows,omitempty"`

	// Counts are the rows by their final status (lead.Statuses), their
	// fields promoted to the summary's (Valid, SubmitFailed) and its JSON
	// ("valid", "submitFailed").
	lead.Counts
	// Unknown counts rows with a status Count does not know.
	Unknown int `json:"unknown"`
	// NotSent counts rows read but deliberately not sent because the run
	// stopped (interrupted, or a fatal error); the caller sets it, and
	// --resume sends them.
	NotSent int `json:"notSent"`
	// Deferred names the rows among NotSent that the service asked to
	// come back (Retry-After) later than the run waits for it: their call
	// was not retried, and --resume sends them. A row whose createLead may
	// have reached the service first is unverified instead, and one whose
	// lead was created stays created (its submitLead was the call asked).
	Deferred RowList `json:"deferred"`
	// OtherShards counts rows read that belong to another shard of a
	// sharded run (--shard): not sent by this one.
	OtherShards int `json:"skippedOtherShards"`

	// Qualified counts rows with a result code of 1013-1017, whatever their
	// status; BidCents sums their bid values exactly, in cents.
	Qualified      int   `json:"qualified"`
	BidCents       int64 `json:"totalBidCents"`
	BidUnparseable int   `json:"bidUnparseable"`

	APICalls      int `json:"apiCalls"`
	Retries       int `json:"retries"`
	TokensFetched int `json:"tokensFetched"`
	// Rate is how the calls were paced; nil when none were made.
	Rate *Rate `json:"rate,omitempty"`
	// Concurrency is how the calls in flight were limited, and BoundBy
	// what held the run back; nil when no calls were made.
	Concurrency *Concurrency `json:"concurrency,omitempty"`
	BoundBy     *BoundBy     `json:"boundBy,omitempty"`

	// NoLeadID names the rows whose createLead answer had a result code but
	// no lead id: the lead cannot be submitted or read by id, and nothing
	// in the results file can find it again; a person reconciles them by
	// leadId.
	NoLeadID RowList `json:"noLeadId"`
	// KeptLeads names the rows whose lead exists or may exist (an earlier
	// run created it, or may have) although their cells fail validation
	// now: the lead keeps its id and is submitted when qualified; one that
	// may exist without a known id is unverified; the edit was not sent.
	KeptLeads RowList `json:"keptLeads"`

	// The tables of the run report (bulkload report, --report), filled by
	// Count and sorted by FinishDetails: rows by result code with their
	// bids (ResultCodes), the bid distribution (BidBuckets), invalid rows
	// by the partner's column and rule (InvalidColumns: only from rows
	// validated in this run, which carry their errors as values; a
	// results file read back holds only their text), and failed,
	// submit_failed and unverified rows by reason (Failures). Each keeps
	// the first row numbers, so a partner can be told what to fix.
	ResultCodes    []CodeCount     `json:"resultCodes"`
	BidBuckets     []BidBucket     `json:"bidBuckets"`
	InvalidColumns []InvalidColumn `json:"invalidColumns"`
	Failures       []Failure       `json:"failures"`
	// Timeline is how an upload went over time (throughput, 429s and
	// 503s, retries, rows in flight, latency, the rate in force), one
	// sample a second, downsampled for long runs; nil for validate, for a
	// run that stopped before sending, and for a combined summary.
	Timeline *Timeline `json:"timeline,omitempty"`
	// Outages lists, in order, the spans of an upload in which the service
	// or its identity provider was away and the run waited (no new rows,
	// rows in flight not charged attempts); absent when there were none.
	// The HTML report marks them on its timeline.
	Outages []Outage `json:"outages,omitempty"`

	// Notes are what a combined summary (bulkload summary) could not
	// count or found missing: a shard without a results file, results
	// files without a summary beside them.
	Notes []string `json:"notes,omitempty"`

	Reasons lead.Reasons `json:"-"`
	details details
}

// maxNamedRows is how many rows a RowList names.
const maxNamedRows = 20

// RowList is a count of rows and the first maxNamedRows of them added,
// kept in row order, for the summary to name.
type RowList struct {
	Count int   `json:"count"`
	Rows  []int `json:"rows"`
}

// Add counts row, and names it while fewer than maxNamedRows are.
func (l *RowList) Add(row int) {
	l.Count++
	if len(l.Rows) < maxNamedRows {
		i, _ := slices.BinarySearch(l.Rows, row)
		l.Rows = slices.Insert(l.Rows, i, row)
	}
}

// String names the rows, e.g. "rows 3, 7" or "rows 3, 7, ... (25 in all)".
func (l RowList) String() string {
	var b strings.Builder
	b.WriteString("rows ")
	for i, r := range l.Rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(r))
	}
	if l.Count > len(l.Rows) {
		fmt.Fprintf(&b, ", ... (%d in all)", l.Count)
	}
	return b.String()
}

// Rate is how an upload paced its calls, for the operator to pin next
// time: "settled at 291 calls/s; 0.4% answered 429".
type Rate struct {
	// Auto is --rate auto; false: a fixed --rate.
	Auto bool `json:"auto"`
	// CallsPerSecond is, with Auto, the rate settled at (just under the
	// limit found) or, when LimitFound is false, the rate reached; else
	// the fixed rate (0: unlimited).
	CallsPerSecond float64 `json:"callsPerSecond"`
	LimitFound     bool    `json:"limitFound"`
	// Limit is, with Auto and LimitFound, the limit found (CallsPerSecond
	// is 97% of it at most): a --resume starts held just under it.
	Limit     float64 `json:"limit,omitempty"`
	Attempts  int     `json:"attempts"`  // HTTP attempts, retries included
	Status429 int     `json:"status429"` // attempts answered 429
}

// Outage is one span of an upload in which the lead endpoint or its
// identity provider was away and the run waited, as the summary and its
// JSON ("outages") report it.
type Outage struct {
	// Start is when the failure that began it happened.
	Start time.Time `json:"start"`
	// Seconds is how long it lasted: until an answer came again, or until
	// the run stopped waiting.
	Seconds float64 `json:"seconds"`
	// IdentityProvider reports an outage of the token endpoint; false: of
	// the lead endpoint.
	IdentityProvider bool `json:"identityProvider"`
	// Cause is its first failure, short: "503 temporarily_unavailable",
	// "502 Bad Gateway", "no reply within 2s", "connection refused".
	Cause string `json:"cause"`
	// StoppedRun reports that the run stopped in it (longer than
	// --outage-wait, or a signal while it waited); false: waited out.
	StoppedRun bool `json:"stoppedRun"`
}

// String is the summary's line, e.g. "02:31:07 the identity provider, 14 s
// (503 temporarily_unavailable): waited out".
func (o Outage) String() string {
	who, end := "the service", "waited out"
	if o.IdentityProvider {
		who = "the identity provider"
	}
	if o.StoppedRun {
		end = "the run stopped"
	}
	return fmt.Sprintf("%s %s, %.0f s (%s): %s", o.Start.Format(time.TimeOnly), who, o.Seconds, o.Cause, end)
}

// Share429 is the share of attempts answered 429, in percent.
func (r *Rate) Share429() float64 {
	if r.Attempts == 0 {
		return 0
	}
	return 100 * float64(r.Status429) / float64(r.Attempts)
}

// String is the summary's sentence, e.g. "settled at 291 calls/s; 0.4%
// answered 429".
func (r *Rate) String() string { return r.Text(Hints{}) }

// Text is String with the setting of an unlimited rate named by h.
func (r *Rate) Text(h Hints) string {
	var head string
	switch {
	case r.Auto && r.LimitFound:
		head = fmt.Sprintf("settled at %.0f calls/s", r.CallsPerSecond)
	case r.Auto && r.CallsPerSecond == 0:
		// No 429 showed a limit, and none was set: the calls went as
		// fast as the concurrency let them.
		head = "no limit: the service showed none (no 429)"
	case r.Auto:
		// No 429 showed a limit: the rate never held the calls back
		// past the rate it had reached (the "bound by" line says what did).
		head = fmt.Sprintf("no 429 seen; it allowed up to %.0f calls/s", r.CallsPerSecond)
	case r.CallsPerSecond == 0:
		head = "unlimited"
		if h.Rate != "" {
			head += " (" + h.Rate + " 0)"
		}
	default:
		head = fmt.Sprintf("fixed at %g calls/s", r.CallsPerSecond)
	}
	return fmt.Sprintf("%s; %.1f%% answered 429", head, r.Share429())
}

// Concurrency is how an upload limited its calls in flight: "auto,
// settled at 52 in flight (peak 60); latency 1.02 s, at its base 0.98 s".
type Concurrency struct {
	// Auto is --concurrency auto; false: a fixed --concurrency.
	Auto bool `json:"auto"`
	// Limit is the limit at the end: with Auto the one learned, else the
	// fixed one; Max is auto's cap (--max-concurrency).
	Limit int `json:"limit"`
	Max   int `json:"max,omitempty"`
	// PeakInFlight is the most calls in flight at once.
	PeakInFlight int `json:"peakInFlight"`
	// Settled is, with Auto, the limit to pin with --concurrency: the
	// median of the limit over the run's steady part (after the climb),
	// never below its mean there; 0 when the run had no steady part. A
	// --resume starts there.
	Settled int `json:"settled,omitempty"`
	// LatencyCuts and BackPressureCuts count auto's cuts for a rising
	// latency (a queue in the service) and for 503s, 504s, timeouts and
	// 429s.
	LatencyCuts      int `json:"latencyCuts"`
	BackPressureCuts int `json:"backPressureCuts"`
	// MeanLatencyMs is the calls' mean latency (each attempt, from the
	// request sent to the reply), BaseLatencyMs the latency auto compared
	// it with (the service's without a queue; createLead's when there were
	// any). CreateLatencyMs and OtherLatencyMs are the mean latencies of
	// the answers to createLead and to the other calls (submitLead, lead
	// reads) apart: the mean of both mixes a credit pull with a status
	// change.
	MeanLatencyMs   float64 `json:"meanLatencyMs"`
	BaseLatencyMs   float64 `json:"baseLatencyMs,omitempty"`
	CreateLatencyMs float64 `json:"createLatencyMs,omitempty"`
	OtherLatencyMs  float64 `json:"otherLatencyMs,omitempty"`
}

// String is the summary's sentence, e.g. "auto, settled at 52 in flight
// after its climb (limit 50 at the end, peak 60 in flight, cap 256);
// createLead 1.02 s (base 0.98 s), other calls 35 ms".
func (c *Concurrency) String() string {
	var b strings.Builder
	switch {
	case c.Auto && c.Settled > 0:
		fmt.Fprintf(&b, "auto, settled at %d in flight after its climb (limit %d at the end, peak %d in flight, cap %d)", c.Settled, c.Limit, c.PeakInFlight, c.Max)
	case c.Auto:
		fmt.Fprintf(&b, "auto, still climbing: limit %d at the end (peak %d in flight, cap %d)", c.Limit, c.PeakInFlight, c.Max)
	default:
		fmt.Fprintf(&b, "fixed at %d in flight (peak %d)", c.Limit, c.PeakInFlight)
	}
	if c.CreateLatencyMs == 0 && c.OtherLatencyMs == 0 {
		// A summary from before the calls' latencies were kept apart.
		fmt.Fprintf(&b, "; latency %s", seconds(c.MeanLatencyMs))
		if c.Auto && c.BaseLatencyMs > 0 {
			fmt.Fprintf(&b, ", base %s", seconds(c.BaseLatencyMs))
		}
		return b.String()
	}
	sep := "; "
	if c.CreateLatencyMs > 0 {
		fmt.Fprintf(&b, "; createLead %s", seconds(c.CreateLatencyMs))
		if c.Auto && c.BaseLatencyMs > 0 {
			fmt.Fprintf(&b, " (base %s)", seconds(c.BaseLatencyMs))
		}
		sep = ", "
	}
	if c.OtherLatencyMs > 0 {
		fmt.Fprintf(&b, "%sother calls %s", sep, seconds(c.OtherLatencyMs))
	}
	return b.String()
}

// seconds formats milliseconds for a sentence: "850 ms", "1.25 s".
func seconds(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.2f s", ms/1000)
}

// Bound-by kinds (BoundBy.Kind): what held an upload back.
const (
	BoundRateLimit        = "rate-limit"        // the service's rate limit (429s), found by --rate auto
	BoundCapacity         = "capacity"          // the service's capacity: latency rose, or 503s, past a concurrency
	BoundMaxConcurrency   = "max-concurrency"   // --max-concurrency
	BoundMaxRate          = "max-rate"          // --max-rate
	BoundRate             = "rate"              // a fixed --rate
	BoundConcurrency      = "concurrency"       // a fixed --concurrency
	BoundInput            = "input"             // rows came slower than the service took them
	BoundLatency          = "latency"           // no limit held the calls back and every row was at hand: the calls' own time (a short file's slowest answers) or the client's work set the pace
	BoundErrors           = "errors"            // the service's errors (503s, 429s, timeouts) and the retries' waits cost the rows a quarter or more of their time, and the input kept them waiting less than half of it
	BoundRateClimb        = "rate-climb"        // --rate auto still climbing when the run ended
	BoundConcurrencyClimb = "concurrency-climb" // --concurrency auto still climbing when the run ended
	BoundOutage           = "outage"            // the run stopped in an outage: the service (or its identity provider) was away
)

// BoundBy is what held an upload back: the limit calls waited for most.
type BoundBy struct {
	Kind string `json:"kind"`
	// Text is the summary's sentence: "the service's capacity: latency
	// rose past 52 in flight".
	Text string `json:"text"`
	// ConcurrencyWaitShare and RateWaitShare are the shares of the
	// sending time during which every place in flight was taken (or calls
	// waited for one) and calls waited for the rate. The rate binds only
	// if the calls also used 70% of it.
	ConcurrencyWaitShare float64 `json:"concurrencyWaitShare"`
	RateWaitShare        float64 `json:"rateWaitShare"`
	// ErrorShare is the share of the rows' time with the service that
	// its errors cost them (waiting out retries, failed attempts on the
	// wire); InputWaitShare the share of the sending time the reader
	// waited for the input's rows. The errors bind when neither limit
	// does, ErrorShare is a quarter or more and InputWaitShare under
	// half.
	ErrorShare     float64 `json:"errorShare"`
	InputWaitShare float64 `json:"inputWaitShare"`
}

// Count tallies one row by its final line: its status, its bid if the lead
// qualified, and its failure reasons (lead.Reasons.AddRow).
func (s *Summary) Count(r lead.Row) {
	if !s.Counts.Count(r.Status) {
		s.Unknown++
	}
	if i, _ := r.Status.Info(); i.Answered && r.ID == "" && r.ResultCode != 0 {
		s.NoLeadID.Add(r.Row)
	}
	// A row this run did not send (already_sent) carries the earlier
	// run's result code and bid: that run counted them.
	if i, ok := r.Status.Info(); (!ok || i.Sent) && lead.NeedsSubmission(r.ResultCode) {
		s.Qualified++
		if r.BidValue != "" {
			if c, err := ParseBid(r.BidValue); err == nil {
				s.BidCents += c
			} else {
				s.BidUnparseable++
			}
		}
	}
	s.Reasons.AddRow(&r)
	s.countDetails(r)
}

type term struct {
	name string
	n    int
}

// Term is one final status of the accounting ("submitted", "not sent")
// and how many rows ended with it.
type Term struct {
	Name  string
	Count int
}

// Terms are the statuses the accounting adds up, in its order: those of
// the mode, and any other that occurred.
func (s *Summary) Terms() []Term {
	var out []Term
	for _, t := range s.terms() {
		out = append(out, Term{t.name, t.n})
	}
	return out
}

// terms are the statuses the accounting adds up: those of the mode, and any
// other that occurred.
func (s *Summary) terms() []term {
	var out []term
	add := func(name string, n int, always bool) {
		if always || n != 0 {
			out = append(out, term{name, n})
		}
	}
	for _, i := range lead.Statuses() {
		var always bool
		switch {
		case i.Rare:
		case i.Status == lead.StatusValid:
			always = s.Mode == "validate"
		case i.Status == lead.StatusInvalid:
			always = true
		default:
			always = s.Mode != "validate"
		}
		add(string(i.Status), s.Of(i), always)
	}
	add("unknown", s.Unknown, false)
	add("not sent", s.NotSent, false)
	add("skipped (other shards)", s.OtherShards, false)
	return out
}

func (s *Summary) accounted() int {
	return s.Total(nil) + s.Unknown + s.NotSent + s.OtherShards
}

// accounting is the check's sentence, e.g. "1000 read = 990 valid + 10
// invalid: OK".
func (s *Summary) accounting() (string, bool) {
	var b strings.Builder
	total := s.accounted()
	ok := total == s.RowsRead && s.Unknown == 0
	rel := "="
	if total != s.RowsRead {
		rel = "!="
	}
	fmt.Fprintf(&b, "%d read %s ", s.RowsRead, rel)
	for i, t := range s.terms() {
		if i > 0 {
			b.WriteString(" + ")
		}
		fmt.Fprintf(&b, "%d %s", t.n, t.name)
	}
	if ok {
		b.WriteString(": OK")
		return b.String(), true
	}
	switch {
	case total < s.RowsRead:
		fmt.Fprintf(&b, ": %d rows read have no final status", s.RowsRead-total)
	case total > s.RowsRead:
		fmt.Fprintf(&b, ": %d more rows counted than read", total-s.RowsRead)
	default:
		fmt.Fprintf(&b, ": %d rows with an unknown status", s.Unknown)
	}
	return b.String(), false
}

// Accounting is the accounting check's sentence, e.g. "1000 read = 990
// valid + 10 invalid: OK", and whether it holds.
func (s *Summary) Accounting() (string, bool) { return s.accounting() }

// Check returns an error wrapping ErrAccounting unless every row read has
// exactly one known status counted.
func (s *Summary) Check() error {
	msg, ok := s.accounting()
	if ok {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrAccounting, msg)
}

// InvalidShare is the share (0 to 1) of the run's rows that were invalid:
// Invalid over the rows read that belong to this run (other shards' rows
// left out), or, before RowsRead is known (a run going on), over the rows
// counted so far; 0 without rows. It is what an alert on partner data
// quality compares with a threshold.
func (s *Summary) InvalidShare() float64 {
	rows := s.RowsRead - s.OtherShards
	if s.RowsRead == 0 {
		rows = s.accounted() - s.OtherShards
	}
	if rows <= 0 {
		return 0
	}
	return float64(s.Invalid) / float64(rows)
}

// Elapsed is the run's duration, End minus Start (0 if either is unset).
func (s *Summary) Elapsed() time.Duration {
	if s.Start.IsZero() || s.End.IsZero() {
		return 0
	}
	return s.End.Sub(s.Start)
}

// minRateElapsed is the shortest run whose rows per second mean
// something: below it the figure is the start-up cost over a handful of
// rows (a no-op resume of a few milliseconds would show an absurd rate;
// the example measured is in bench/README.md).
const minRateElapsed = time.Second

// RowsPerSecond is the rows this run worked (RowsRead less the rows an
// earlier run finished, Resumed) over Elapsed; 0, shown as no rate, when
// it means nothing: under a second elapsed, or no row worked.
func (s *Summary) RowsPerSecond() float64 {
	el := s.Elapsed()
	rows := s.RowsRead - s.Resumed
	if el < time.Second || rows <= 0 {
		return 0
	}
	return float64(rows) / el.Seconds()
}

// invalidNote is the summary's note on an upload's invalid rows: not sent,
// their share, and where they are listed for the partner.
func invalidNote(s *Summary) string {
	if s.Invalid == 0 {
		return "not sent"
	}
	note := fmt.Sprintf("not sent (%.1f%% of rows): the partner's to fix", 100*s.InvalidShare())
	if r, _ := s.Settings["rejects"].(string); r != "" {
		note += ", listed in " + r
	}
	return note
}

// Hints name the settings that the summary's advice points to, in the
// words of the interface the run was started from: the command line's
// flags (package app) or none. A zero Hints leaves every setting unnamed:
// the advice says what to do, not which setting does it.
type Hints struct {
	Resume        string // continues a run from its results file
	ResendChanged string // sends the rows whose content changed since an earlier run
	MaxInvalid    string // the limit on invalid rows
	Rate          string // the rate of calls
	Concurrency   string // the limit on calls in flight
	RetryWait     string // the most a call waits to retry
}

// ResumeRun words "run the same command again, resumed": cmd with the
// Resume setting, or fallback when h names none.
func (h Hints) ResumeRun(cmd, fallback string) string {
	if h.Resume == "" {
		return fallback
	}
	return cmd + " with " + h.Resume
}

// WriteText prints the summary for a person: counts, bid total, calls,
// timing, top failure reasons and the accounting check, which on a mismatch
// reads "ACCOUNTING MISMATCH".
func (s *Summary) WriteText(w io.Writer, h Hints) error {
	var b strings.Builder
	mode := cmp.Or(s.Mode, "upload")
	state := "finished"
	if s.Interrupted {
		state = "INTERRUPTED"
	}
	fmt.Fprintf(&b, "bulkload %s %s\n", mode, state)
	line := func(name string, n int, note string) {
		fmt.Fprintf(&b, "  %-16s %12d", name, n)
		if note != "" {
			b.WriteString("  " + note)
		}
		b.WriteByte('\n')
	}
	line("rows read", s.RowsRead, "")
	if s.NotReached > 0 {
		line("not reached", s.NotReached, fmt.Sprintf("of %d rows in the input, never read: the run stopped first; %s sends them", s.InputRows, cmp.Or(h.Resume, "a resumed run")))
	}
	if s.Mode == "validate" {
		line("valid", s.Valid, "")
		line("invalid", s.Invalid, "")
	} else {
		line("invalid", s.Invalid, invalidNote(s))
		if s.Valid != 0 {
			// A results file of validate's: its rows were never uploaded.
			line("valid", s.Valid, "only validated, never uploaded: not sent")
		}
		line("processed", s.Processed, "")
		line("qualified", s.Qualified, "result codes 1013-1017")
		line("submitted", s.Submitted, "")
		line("submit_failed", s.SubmitFailed, "lead created, submission failed")
		line("failed", s.Failed, "")
		if s.Unverified != 0 {
			line("unverified", s.Unverified, "may be a lead of this run that nobody submitted: look each up by leadId (results file) and submit it if it is yours and qualified; "+cmp.Or(h.Resume, "a resumed run")+" checks them again")
		}
		if s.Created != 0 {
			line("created", s.Created, "submission pending: "+h.ResumeRun("rerun", "resume the run"))
		}
		if s.AlreadySent != 0 {
			line("already sent", s.AlreadySent, "created by an earlier run (the ledger says; bulkload history): not sent again, their bids not counted again")
		}
		if s.Conflict != 0 {
			note := "an earlier run sent their leadId with other content: not sent; check the rows"
			if h.ResendChanged != "" {
				note += " and pass " + h.ResendChanged + " to send the new content"
			}
			line("conflict", s.Conflict, note)
		}
		if s.Deferred.Count != 0 {
			note := s.Deferred.String() + ": the service asked them to come back (Retry-After) later than the run waits for it"
			if h.RetryWait != "" {
				note += " (" + h.RetryWait + ")"
			}
			line("deferred", s.Deferred.Count, note+"; not retried: "+cmp.Or(h.Resume, "a resumed run")+" sends them")
		}
		if s.NoLeadID.Count != 0 {
			line("no lead id", s.NoLeadID.Count, s.NoLeadID.String()+": the service answered with a result code but no lead id, so the lead cannot be submitted or read by id; reconcile by leadId")
		}
		if s.KeptLeads.Count != 0 {
			line("kept leads", s.KeptLeads.Count, s.KeptLeads.String()+": their cells fail validation now, but an earlier run created their lead, or may have; it keeps its id and is submitted when qualified, or is unverified when its id is unknown (the edit was not sent)")
		}
		fmt.Fprintf(&b, "  %-16s %12s", "total bid value", FormatCents(s.BidCents))
		if s.BidUnparseable != 0 {
			fmt.Fprintf(&b, "  plus %d unparseable bid value(s), not included", s.BidUnparseable)
		}
		b.WriteByte('\n')
		line("API calls", s.APICalls, fmt.Sprintf("%d retries", s.Retries))
		line("tokens fetched", s.TokensFetched, "")
		if s.Rate != nil {
			fmt.Fprintf(&b, "  %-16s %s", "rate", s.Rate.Text(h))
			if s.Rate.Auto && s.Rate.LimitFound && h.Rate != "" {
				fmt.Fprintf(&b, " (pin it with %s %.0f)", h.Rate, s.Rate.CallsPerSecond)
			}
			b.WriteByte('\n')
		}
		if s.Concurrency != nil {
			fmt.Fprintf(&b, "  %-16s %s\n", "concurrency", s.Concurrency)
		}
		if s.BoundBy != nil {
			fmt.Fprintf(&b, "  %-16s %s\n", "bound by", s.BoundBy.Text)
		}
	}
	for _, o := range s.Outages {
		fmt.Fprintf(&b, "  %-16s %s\n", "outage", o)
	}
	if s.Unknown != 0 {
		line("unknown status", s.Unknown, "")
	}
	if !s.Start.IsZero() {
		// A combined summary of results files (bulkload summary) has no
		// run of its own to time.
		el := s.Elapsed().Round(time.Millisecond)
		fmt.Fprintf(&b, "  %-16s %12s", "elapsed", el)
		if r := s.RowsPerSecond(); r > 0 {
			fmt.Fprintf(&b, "  %.1f rows/s", r)
		}
		b.WriteByte('\n')
	}
	list := func(v []string) string {
		if len(v) == 0 {
			return "none"
		}
		return strings.Join(v, ", ")
	}
	if s.Mode != "summary" {
		// The columns are the input's: a combined summary of results
		// files does not read an input.
		fmt.Fprintf(&b, "  %-16s %s\n", "unknown columns", list(s.UnknownColumns))
		fmt.Fprintf(&b, "  %-16s %s\n", "fields missing", list(s.MissingFields))
	}
	if s.InputGrewBytes > 0 {
		fmt.Fprintf(&b, "  %-16s the input grew by %d bytes during the run; they were not read (input hash covers the first %d bytes): %s to send the rows appended\n", "input grew", s.InputGrewBytes, s.InputBytes, h.ResumeRun("rerun", "resume the run"))
	}
	if top := s.Reasons.Top(topReasons); len(top) > 0 {
		fmt.Fprintf(&b, "top failure reasons (%d distinct):\n", len(s.Reasons))
		for _, r := range top {
			fmt.Fprintf(&b, "  %12d  %s\n", r.Count, r.Reason)
		}
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if msg, ok := s.accounting(); ok {
		if s.NotReached > 0 {
			msg += fmt.Sprintf("; %d not reached, left for %s", s.NotReached, cmp.Or(h.Resume, "a resumed run"))
		}
		fmt.Fprintf(&b, "accounting: %s\n", msg)
	} else {
		fmt.Fprintf(&b, "ACCOUNTING MISMATCH: %s\n", msg)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the summary as one JSON object to path, a new file
// (outfile.Write) of mode 0600 like
// the results file (it names the partner's files; it holds no secret and no
// lead data). Reasons are written as the top ten with their counts.
func (s *Summary) WriteJSON(path string) error {
	b, err := json.MarshalIndent(s.JSON(), "", "  ")
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	if err := outfile.Write(path, 0o600, append(b, '\n')); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// JSON is the summary as WriteJSON writes it, for encoding elsewhere (one
// JSON log record).
func (s *Summary) JSON() any {
	s.FinishDetails()
	msg, ok := s.accounting()
	return struct {
		*Summary
		InvalidShare    float64            `json:"invalidShare"`
		ElapsedSeconds  float64            `json:"elapsedSeconds"`
		RowsPerSecond   float64            `json:"rowsPerSecond"`
		TotalBidValue   string             `json:"totalBidValue"`
		TopReasons      []lead.ReasonCount `json:"topReasons"`
		DistinctReasons int                `json:"distinctReasons"`
		AccountingOK    bool               `json:"accountingOK"`
		Accounting      string             `json:"accounting"`
	}{s, s.InvalidShare(), s.Elapsed().Seconds(), s.RowsPerSecond(), FormatCents(s.BidCents),
		s.Reasons.Top(topReasons), len(s.Reasons), ok, msg}
}

// ParseBid reads a bid value, a currency string such as "$42.50",
// "$1,042.50" or "42.50", as a whole number of cents, exactly (no floats). It
// accepts an optional "$", digits with optional thousands commas (groups of
// three), and an optional point with one or two decimals.
func ParseBid(s string) (int64, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimPrefix(t, "$")
	whole, frac, hasPoint := strings.Cut(t, ".")
	if hasPoint && (len(frac) == 0 || len(frac) > 2 || !allDigits(frac)) {
		return 0, ErrBid
	}
	if strings.Contains(whole, ",") {
		groups := strings.Split(whole, ",")
		if len(groups[0]) == 0 || len(groups[0]) > 3 {
			return 0, ErrBid
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return 0, ErrBid
			}
		}
		whole = strings.Join(groups, "")
	}
	if len(whole) == 0 || len(whole) > 15 || !allDigits(whole) {
		return 0, ErrBid
	}
	dollars, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, ErrBid
	}
	var cents int64
	if hasPoint {
		c, _ := strconv.ParseInt(frac, 10, 64)
		if len(frac) == 1 {
			c *= 10
		}
		cents = c
	}
	return dollars*100 + cents, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatCents writes an amount in cents as dollars, e.g. "$1,042.50".
func FormatCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	d := strconv.FormatInt(c/100, 10)
	var b strings.Builder
	for i, ch := range d {
		if i > 0 && (len(d)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	return fmt.Sprintf("%s$%s.%02d", sign, b.String(), c%100)
}

// Path is the summary file beside the results file at path:
// path + ".summary.json", the run's summary JSON (Summary.WriteJSON) with
// its timeline and detail tables, written at the end of every run that has
// a summary, for `bulkload report`. A later run on the same results file
// replaces it: it describes the last run, whose summary covers every row
// of the file (a resumed run counts the rows an earlier run finished).
func Path(path string) string { return outfile.SummaryPath(path) }

// Read reads the summary file beside the results file at path
// (Path). A missing file is an error wrapping fs.ErrNotExist; one that
// holds what no run writes (Validate) an error wrapping ErrNotWritten. The
// summary's Reasons are not restored (the file keeps only the top ones).
func Read(path string) (*Summary, error) {
	b, err := os.ReadFile(Path(path))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", Path(path), err)
	}
	s, err := Decode(b)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", Path(path), err)
	}
	return s, nil
}

// Decode reads a summary from its JSON (WriteJSON's) and checks it
// (Validate): an error wrapping ErrNotWritten for one that holds what no
// run writes.
func Decode(b []byte) (*Summary, error) {
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}
