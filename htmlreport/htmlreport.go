// Package htmlreport renders a run's summary as one HTML page for a person:
// the run report of `--report run.html` and `bulkload report`. It comes
// after the report stage (package report), which counts the rows, keeps
// the detail tables and the timeline, and writes them in the summary JSON;
// htmlreport only draws what a Summary holds.
//
// The page answers the questions people ask the morning after: why the run
// was slow (the timeline: throughput, rows in flight against the limit,
// latency, 429s, 503s and retries, with signals and outages marked), which
// of the partner's columns are broken (invalid rows by column and rule,
// with the first row numbers), and how much the file brought in bids
// (result codes, the bid total and its distribution); and what to do next,
// in one sentence at the top.
//
// Why html/template and hand-written SVG rather than a charting library:
// the page must open with no network and, under a Content-Security-Policy
// that allows nothing external, read well with JavaScript off and print on
// A4. The charting libraries that inline everything (go-echarts with its
// assets, and the like) draw with JavaScript in the browser, so a page
// without script would be blank, and they bring hundreds of KiB of script
// into every report; gonum/plot's SVG output needs no script but brings a
// large dependency tree and fonts for four line charts and two bar charts.
// The charts here are lines and bars over at most summary.MaxSamples
// points: a hundred lines of SVG, static, small (a report stays far under
// 1 MiB whatever the input's size, since the summary's tables are bounded),
// and styled by one <style> block that the policy admits by its hash. The
// page carries no script at all.
//
// Personal data: the page shows what the summary holds, which never holds
// an SSN or a date of birth; the text that comes from the service (failure
// reasons, notes) was redacted before it was recorded, and is passed again
// through a redactor that removes SSN-shaped numbers, e-mail addresses and
// phone numbers; example values are shown only for the columns the summary
// keeps them for (never an SSN, date of birth, e-mail or phone).
package htmlreport

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/summary"
)

//go:embed report.css
var css string

//go:embed report.html.tmpl
var page string

// Report is what a page shows: a run's summary, or the combined summary of
// several results files with their parts.
type Report struct {
	// Summary is the run's (or the combined) summary; Render calls its
	// FinishDetails.
	Summary *summary.Summary
	// Parts are the runs a combined report covers (bulkload report with
	// several results files), each with its own summary when its sidecar
	// was found; empty for one run.
	Parts []Part
	// Generated is when the page was made.
	Generated time.Time
	// History is the run's place among the runs the ledger recorded of
	// the same job (oldest first, This marking the run itself); empty
	// without a ledger. HistoryOf names the job.
	History   []HistoryRun
	HistoryOf string
	// Hints name the settings the page's advice points to (the command
	// line's flags); zero names none.
	Hints summary.Hints
}

// HistoryRun is one run of a report's history.
type HistoryRun struct {
	ID      int64
	Started time.Time
	Input   string
	// Exit is the run's exit status; nil for a run that did not end
	// (killed, or still going).
	Exit        *int
	Rows        int
	AlreadySent int
	BidCents    int64
	This        bool
}

// Part is one results file of a combined report.
type Part struct {
	Results string
	// Summary is the run's summary from beside the results file; nil when
	// there is none (a file from before sidecars, or a run that stopped).
	Summary *summary.Summary
}

// Write renders r to path as a new file (outfile.Write: a temporary file
// renamed into place), mode 0600 like the run's other outputs.
func Write(path string, r *Report) error {
	var b bytes.Buffer
	if err := Render(&b, r); err != nil {
		return err
	}
	return outfile.Write(path, 0o600, b.Bytes())
}

// Render writes the page of r to w.
func Render(w io.Writer, r *Report) error {
	t, err := template.New("page").Funcs(template.FuncMap{
		"group":   group,
		"rows":    rowList,
		"i64":     func(n int) int64 { return int64(n) },
		"stampOf": stamp,
	}).Parse(page)
	if err != nil {
		return fmt.Errorf("run report template: %w", err)
	}
	v := build(r)
	if err := t.Execute(w, v); err != nil {
		return fmt.Errorf("render run report: %w", err)
	}
	return nil
}

// CSP is the page's Content-Security-Policy: nothing may be loaded or
// sent anywhere; only the page's own style block (by its hash) applies.
func CSP() string {
	h := sha256.Sum256([]byte(css))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'; img-src 'none'; base-uri 'none'; form-action 'none'"
}

// view is what the template reads.
type view struct {
	Title, Mode, Input string
	CSP                string
	CSS                template.CSS
	Verdict            string
	Level              string // ok, warn, bad: the verdict's colour
	Notes              []string
	ExitCode           string
	Generated          string
	S                  *summary.Summary
	Accounting         string
	AccountingOK       bool
	Terms              []summary.Term
	Outcomes           template.HTML
	Bid                string
	Codes              []codeRow
	Bids               template.HTML
	HasTimeline        bool
	Charts             []template.HTML
	Why                []string
	Marks              []string
	TimelineNote       string
	Invalid            []invalidRow
	InvalidNote        string
	Failures           []failureRow
	Manifest           []kv
	Settings           []kv
	Parts              []partRow
	History            []historyRow
	HistoryOf          string
	TopReasons         []lead.ReasonCount
	Resumer            string // what sends the rows left: a run with --resume
}

type kv struct{ K, V string }

type codeRow struct {
	Code, Meaning string
	Count         int
	Bid           string
}

type invalidRow struct {
	Column, Field, Rule string
	Count               int
	FirstRows           []int
	Examples            []string
}

type failureRow struct {
	Status, Reason string
	Count          int
	First          []noted
}

type noted struct {
	Row  int
	Note string
}

type partRow struct {
	Results, Input, SHA, Shard, Start, End, Exit string
	Rows                                         int
}

// rowList formats first row numbers: "3, 17, 42".
func rowList(rows []int) string {
	s := make([]string, len(rows))
	for i, r := range rows {
		s[i] = strconv.Itoa(r)
	}
	return strings.Join(s, ", ")
}

func build(r *Report) *view {
	sc := newScrubber()
	s := r.Summary
	s.FinishDetails()
	v := &view{S: s, CSP: CSP(), CSS: template.CSS(css), Mode: cmp.Or(s.Mode, "upload")}
	v.Input = settingString(s, "input")
	if len(r.Parts) > 1 {
		v.Input = fmt.Sprintf("%d results files", len(r.Parts))
	}
	v.Resumer = cmp.Or(r.Hints.Resume, "a resumed run")
	v.Title = "bulkload " + v.Mode + " report: " + cmp.Or(filepath.Base(v.Input), "run")
	v.Verdict, v.Level = verdict(s, r.Parts, r.Hints)
	for _, n := range s.Notes {
		v.Notes = append(v.Notes, sc.scrub(n))
	}
	if s.ExitCode != nil {
		v.ExitCode = strconv.Itoa(*s.ExitCode)
	}
	if !r.Generated.IsZero() {
		v.Generated = r.Generated.UTC().Format(time.RFC3339)
	}
	v.Accounting, v.AccountingOK = s.Accounting()
	v.Terms = s.Terms()
	v.Outcomes = outcomesChart(s)
	v.Bid = summary.FormatCents(s.BidCents)
	for _, c := range s.ResultCodes {
		row := codeRow{Code: strconv.Itoa(c.Code), Count: c.Count, Meaning: codeMeaning(c.Code)}
		if c.Code == 0 {
			row.Code = "none"
		}
		if c.BidCents != 0 {
			row.Bid = summary.FormatCents(c.BidCents)
		}
		v.Codes = append(v.Codes, row)
	}
	v.Bids = bidChart(s)
	if tl := withOutages(s, s.Timeline); tl != nil && len(tl.Samples) > 0 {
		v.HasTimeline = true
		v.Charts = timelineCharts(s, tl)
		v.Why = why(s, tl, r.Hints)
		for _, m := range tl.Marks {
			v.Marks = append(v.Marks, markText(m))
		}
		if tl.IntervalSeconds > 1 {
			v.TimelineNote = fmt.Sprintf("One point per %s (a long run is downsampled).", time.Duration(tl.IntervalSeconds*float64(time.Second)))
		}
	}
	for _, c := range s.InvalidColumns {
		row := invalidRow{Column: c.Column, Field: c.Field, Rule: c.Rule, Count: c.Count, FirstRows: c.FirstRows}
		for _, ex := range c.Examples {
			if safe := sc.scrub(ex); safe == ex {
				row.Examples = append(row.Examples, ex)
			}
		}
		if row.Column == "" {
			row.Column = "(whole record)"
		}
		v.Invalid = append(v.Invalid, row)
	}
	if s.Invalid > 0 && len(v.Invalid) == 0 {
		v.InvalidNote = "The invalid rows' columns and rules were not recorded (a results file without its summary beside it): the results file's error column says, row by row."
	}
	for _, f := range s.Failures {
		row := failureRow{Status: string(f.Status), Reason: sc.scrub(f.Reason), Count: f.Count}
		for i, n := range f.FirstRows {
			note := ""
			if i < len(f.Notes) {
				note = sc.scrub(f.Notes[i])
			}
			row.First = append(row.First, noted{n, note})
		}
		v.Failures = append(v.Failures, row)
	}
	if len(s.Failures) == 0 {
		for _, rc := range s.Reasons.Top(10) {
			if s.Total(lead.StatusInfo.Failure) > 0 {
				v.TopReasons = append(v.TopReasons, lead.ReasonCount{Reason: sc.scrub(rc.Reason), Count: rc.Count})
			}
		}
	}
	v.Manifest = manifest(s, r.Hints)
	v.Settings = settings(s)
	v.HistoryOf = r.HistoryOf
	for _, h := range r.History {
		row := historyRow{ID: h.ID, Started: stamp(h.Started), Input: h.Input, Exit: "did not end", Rows: h.Rows, AlreadySent: h.AlreadySent, Bids: summary.FormatCents(h.BidCents), This: h.This}
		if h.Exit != nil {
			row.Exit = strconv.Itoa(*h.Exit)
		}
		v.History = append(v.History, row)
	}
	for _, p := range r.Parts {
		pr := partRow{Results: p.Results}
		if ps := p.Summary; ps != nil {
			pr.Input, pr.SHA, pr.Shard, pr.Rows = settingString(ps, "input"), ps.InputSHA256, settingString(ps, "shard"), ps.RowsRead
			pr.Start, pr.End = stamp(ps.Start), stamp(ps.End)
			if ps.ExitCode != nil {
				pr.Exit = strconv.Itoa(*ps.ExitCode)
			}
		}
		v.Parts = append(v.Parts, pr)
	}
	return v
}

// historyRow is one line of the run's history, as the page shows it.
type historyRow struct {
	ID                   int64
	Started, Input, Exit string
	Rows, AlreadySent    int
	Bids                 string
	This                 bool
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func settingString(s *summary.Summary, key string) string {
	if v, ok := s.Settings[key]; ok && v != nil {
		if str, ok := v.(string); ok {
			return str
		}
		return fmt.Sprint(v)
	}
	return ""
}

// manifest is the run's identity: version, input, hash, rows, shard, times.
func manifest(s *summary.Summary, h summary.Hints) []kv {
	out := []kv{
		{"bulkload version", strings.TrimSpace(s.Build.Version + " " + s.Build.Revision)},
		{"Go", s.Build.GoVersion},
		{"mode", s.Mode},
		{"input", settingString(s, "input")},
		{"input SHA-256", s.InputSHA256},
		{"input bytes", group(s.InputBytes)},
		{"rows read", group(int64(s.RowsRead))},
		{"shard", settingString(s, "shard")},
		{"results file", settingString(s, "results")},
		{"start", stamp(s.Start)},
		{"end", stamp(s.End)},
	}
	if el := s.Elapsed(); el > 0 {
		out = append(out, kv{"elapsed", el.Round(time.Millisecond).String()}, kv{"rows per second", num(s.RowsPerSecond())})
	}
	if s.ExitCode != nil {
		out = append(out, kv{"exit status", strconv.Itoa(*s.ExitCode)})
	}
	if s.Stopped != "" {
		out = append(out, kv{"stopped", scrub(s.Stopped)})
	}
	if s.Rate != nil {
		out = append(out, kv{"rate", s.Rate.Text(h)})
	}
	if c := s.Concurrency; c != nil {
		mode := "fixed"
		if c.Auto {
			mode = "auto"
		}
		out = append(out, kv{"concurrency", fmt.Sprintf("%s: limit %d, peak %d in flight, mean latency %s ms", mode, c.Limit, c.PeakInFlight, num(c.MeanLatencyMs))})
	}
	if b := s.BoundBy; b != nil && b.Text != "" {
		out = append(out, kv{"bound by", b.Text})
	}
	return slices.DeleteFunc(out, func(x kv) bool { return x.V == "" })
}

// settings lists the run's settings (never a secret: the summary holds
// none), sorted by name.
func settings(s *summary.Summary) []kv {
	keys := make([]string, 0, len(s.Settings))
	for k := range s.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []kv
	for _, k := range keys {
		v := s.Settings[k]
		if v == nil {
			continue
		}
		out = append(out, kv{k, fmt.Sprint(v)})
	}
	return out
}

// codeMeaning names a result code's range, as the interface describes it.
func codeMeaning(code int) string {
	switch {
	case code == 0:
		return "no answer: failed or not created"
	case code >= 1013 && code <= 1017:
		return "qualified: submitted for a bid"
	}
	return "not qualified"
}

func outcomesChart(s *summary.Summary) template.HTML {
	type o struct {
		label, key, class string
		n                 int
	}
	all := []o{
		{"valid", "valid", "good", s.Valid},
		{"submitted", "submitted", "good", s.Submitted},
		{"processed", "processed", "good", s.Processed},
		{"invalid", "invalid", "bad", s.Invalid},
		{"failed", "failed", "bad", s.Failed},
		{"submit_failed", "submitFailed", "bad", s.SubmitFailed},
		{"unverified", "unverified", "warn", s.Unverified},
		{"created (pending)", "created", "warn", s.Created},
		{"already sent (earlier run)", "alreadySent", "muted", s.AlreadySent},
		{"conflict", "conflict", "bad", s.Conflict},
		{"not sent", "notSent", "warn", s.NotSent},
		{"not reached", "notReached", "warn", s.NotReached},
		{"other shards", "skippedOtherShards", "muted", s.OtherShards},
	}
	var bars []bar
	for _, x := range all {
		switch x.key {
		case "valid":
			if s.Mode != "validate" && x.n == 0 {
				continue
			}
		case "submitted", "processed", "failed", "submitFailed", "notSent":
			if s.Mode == "validate" && x.n == 0 {
				continue
			}
		default:
			if x.n == 0 && x.key != "invalid" {
				continue
			}
		}
		bars = append(bars, bar{label: x.label, key: x.key, n: float64(x.n), text: group(int64(x.n)), class: x.class})
	}
	return barChart("chart-outcomes", "Outcomes: rows by final status", bars)
}

func bidChart(s *summary.Summary) template.HTML {
	if len(s.BidBuckets) == 0 {
		return ""
	}
	last := 0
	for i, bb := range s.BidBuckets {
		if bb.Count > 0 {
			last = i
		}
	}
	var bars []bar
	for _, bb := range s.BidBuckets[:last+1] {
		label := summary.FormatCents(bb.FromCents) + " and more"
		if bb.ToCents > 0 {
			label = summary.FormatCents(bb.FromCents) + " to " + summary.FormatCents(bb.ToCents)
		}
		bars = append(bars, bar{label: label, n: float64(bb.Count), text: group(int64(bb.Count)) + " leads, " + summary.FormatCents(bb.BidCents), class: "good"})
	}
	return barChart("chart-bids", "Bid distribution: qualified leads by bid", bars)
}

func timelineCharts(s *summary.Summary, tl *summary.Timeline) []template.HTML {
	n := len(tl.Samples)
	per := func(f func(summary.Sample) float64) []float64 {
		out := make([]float64, n)
		for i, s := range tl.Samples {
			out[i] = f(s)
		}
		return out
	}
	rate := func(f func(summary.Sample) int64) func(summary.Sample) float64 {
		return func(s summary.Sample) float64 {
			if s.Seconds <= 0 {
				return 0
			}
			return float64(f(s)) / s.Seconds
		}
	}
	answered := per(rate(func(s summary.Sample) int64 { return s.Answered }))
	// The rate in force is drawn up to twice the peak throughput: --rate
	// auto climbs while nothing pushes back (an outage, a slow service),
	// and a line at 100,000 calls/s would flatten the throughput to zero.
	peak := 0.0
	for _, v := range answered {
		peak = max(peak, v)
	}
	rateLine := per(func(s summary.Sample) float64 {
		if s.RateLimit > 2*max(peak, 1) {
			return math.NaN()
		}
		return s.RateLimit
	})
	return []template.HTML{
		lineChart("chart-throughput", "Throughput: calls answered per second, and the rate limit in force", "calls/s", tl, []series{
			{"answered calls/s", "s1", answered, nil},
			{"rate limit in force (0: unlimited; not drawn above twice the peak throughput)", "s2", rateLine, nil},
		}),
		lineChart("chart-inflight", "Calls in flight, and the concurrency limit", "calls", tl, []series{
			{"in flight (mean over each second; peak: the most at once)", "s1", per(func(s summary.Sample) float64 { return s.InFlight }), peakInFlight(s)},
			{"concurrency limit", "s2", per(func(s summary.Sample) float64 { return s.ConcurrencyLimit }), nil},
		}),
		lineChart("chart-latency", "Latency of answered calls (gaps: nothing answered)", "ms", tl, []series{
			{"p50", "s1", per(answeredOnly(func(s summary.Sample) float64 { return s.LatencyP50Ms })), nil},
			{"p95", "s3", per(answeredOnly(func(s summary.Sample) float64 { return s.LatencyP95Ms })), nil},
		}),
		lineChart("chart-errors", "429s, 503s, no answer and retries per second", "per second", tl, []series{
			{"429 Too Many Requests", "s3", per(rate(func(s summary.Sample) int64 { return s.Status429 })), nil},
			{"503 Service Unavailable", "s4", per(rate(func(s summary.Sample) int64 { return s.Status503 })), nil},
			{"no answer (other 5xx, network)", "s5", per(rate(func(s summary.Sample) int64 { return s.Unanswered })), nil},
			{"retries", "s2", per(rate(func(s summary.Sample) int64 { return s.Retries })), nil},
		}),
	}
}

// peakInFlight is the summary's peak of calls in flight at once, for the
// legend of the in-flight chart (whose line is each second's mean), or nil
// when the summary has none.
func peakInFlight(s *summary.Summary) *float64 {
	if s == nil || s.Concurrency == nil {
		return nil
	}
	p := float64(s.Concurrency.PeakInFlight)
	return &p
}

// answeredOnly is f where the sample had answers, else NaN: a gap.
func answeredOnly(f func(summary.Sample) float64) func(summary.Sample) float64 {
	return func(s summary.Sample) float64 {
		if s.Answered == 0 {
			return math.NaN()
		}
		return f(s)
	}
}

// Patterns scrub removes besides the SSN-shaped numbers the redactor
// knows: e-mail addresses and phone numbers (10 or 11 digits in the usual
// groups), which a report for people does not show.
const (
	emailPattern = `[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}`
	phonePattern = `(?:\+?1[ .\-]?)?\(?\b[0-9]{3}\)?[ .\-]?[0-9]{3}[ .\-]?[0-9]{4}\b`
)

// scrubber removes personal data from text that came from the service or
// the input: SSN-shaped numbers (the redactor), e-mail addresses and phone
// numbers. Made once per page.
type scrubber struct {
	red          *redact.Redactor
	email, phone *regexp.Regexp
}

func newScrubber() *scrubber {
	return &scrubber{red: &redact.Redactor{}, email: regexp.MustCompile(emailPattern), phone: regexp.MustCompile(phonePattern)}
}

func (sc *scrubber) scrub(s string) string {
	if s == "" {
		return s
	}
	s = sc.red.String(s)
	s = sc.email.ReplaceAllString(s, "[REDACTED]")
	return sc.phone.ReplaceAllString(s, "[REDACTED]")
}

// scrub is a one-off scrubber's scrub.
func scrub(s string) string { return newScrubber().scrub(s) }
