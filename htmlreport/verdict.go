package htmlreport

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/summary"
)

// verdict is the page's first sentence: how the run ended (the exit status
// in words) and what to do next; and its level (ok, warn, bad) for the
// colour. The exit statuses are bulkload's one table (README, --help).
func verdict(s *summary.Summary, parts []Part, h summary.Hints) (string, string) {
	code := -1
	if s.ExitCode != nil {
		code = *s.ExitCode
	} else {
		// A combined report: the worst of its parts', else from the counts.
		for _, p := range parts {
			if p.Summary != nil && p.Summary.ExitCode != nil && *p.Summary.ExitCode > code {
				code = *p.Summary.ExitCode
			}
		}
	}
	unsettled := s.Total(func(i lead.StatusInfo) bool { return i.Action != lead.NoAction }) + s.NotSent + s.NotReached + s.Unknown
	if code == -1 {
		code = 0
		if unsettled > 0 {
			code = 1
		}
	}
	if code == 0 && s.NotSent > 0 {
		code = 1 // a combined report with a shard that did not run
	}
	why := func(what string) string {
		if s.Stopped != "" {
			return what + ": " + scrub(s.Stopped)
		}
		return what
	}
	switch code {
	case 0:
		if s.Invalid > 0 {
			// Within --max-invalid (without --strict): the run succeeded,
			// the invalid rows were not sent.
			return fmt.Sprintf("The run succeeded (exit 0): every valid row was settled; %s invalid rows were not sent. Next: send the partner the invalid columns below and have them fix the file.", group(int64(s.Invalid))), "warn"
		}
		if s.Mode == "validate" {
			return fmt.Sprintf("Every row is valid (exit 0): %s rows, ready to upload. Nothing to do.", group(int64(s.Valid))), "ok"
		}
		if s.AlreadySent > 0 && s.AlreadySent == s.Total(func(i lead.StatusInfo) bool { return i.Action == lead.NoAction }) {
			return fmt.Sprintf("Nothing was sent (exit 0): all %s rows of this export were sent by earlier runs (already sent, see the run history below): a re-drop of an export, or a rerun. Nothing to do, unless the partner meant new leads.", group(int64(s.AlreadySent))), "warn"
		}
		if s.AlreadySent > 0 {
			return fmt.Sprintf("Every row was processed or submitted (exit 0): %s leads qualified, %s in bids; %s rows were sent by earlier runs and not sent again. Nothing to do.", group(int64(s.Qualified)), summary.FormatCents(s.BidCents), group(int64(s.AlreadySent))), "ok"
		}
		return fmt.Sprintf("Every row was processed or submitted (exit 0): %s leads qualified, %s in bids. Nothing to do.", group(int64(s.Qualified)), summary.FormatCents(s.BidCents)), "ok"
	case 1:
		if s.Stopped != "" {
			return why("Nothing was sent (exit 1)") + ". Fix the input file (see the invalid columns below) and run the same command again.", "bad"
		}
		if s.Mode == "validate" && s.Invalid > 0 && s.Invalid+s.Valid == s.RowsRead {
			return fmt.Sprintf("%s of %s rows are invalid (exit 1). Next: send the partner the invalid columns below and have them fix the file; upload sends only the valid rows, and refuses the file when more than %s are invalid.", group(int64(s.Invalid)), group(int64(s.RowsRead)), cmp.Or(h.MaxInvalid, "its limit")), "warn"
		}
		var parts, next []string
		if _, ok := s.Accounting(); !ok {
			// The counts below count some row twice or miss one: no
			// figure of the page is to be trusted as it stands.
			parts = append(parts, "the accounting does not add up, so neither do the figures below")
			next = append(next, "read the accounting check and the notes below")
		}
		add := func(n int, what, todo string) {
			if n > 0 {
				parts = append(parts, group(int64(n))+" "+what)
				if todo != "" && !slices.Contains(next, todo) {
					next = append(next, todo)
				}
			}
		}
		add(s.Invalid, "invalid", "send the partner the invalid columns below and have them fix the file")
		again := h.ResumeRun("run the same command", "resume the run")
		add(s.Failed, "failed", again+" to send the failed rows again")
		add(s.SubmitFailed, "not submitted", again+" to submit them")
		add(s.Created, "created but not submitted", again+" to submit them")
		add(s.NotSent, "not sent", "run the shard or "+h.ResumeRun("run again", "resume the run")+" to send the rows not sent")
		add(s.Deferred.Count, "of them asked by the service to come back later than the run waits (Retry-After)", "")
		add(s.NotReached, "never read (the run stopped first)", h.ResumeRun("run again", "resume the run")+" to send the rows not reached")
		add(s.Unverified, "unverified", unverifiedNext(s, h))
		conflict := "compare the conflict rows with what was sent before (bulkload history)"
		if h.ResendChanged != "" {
			conflict += " and pass " + h.ResendChanged + " to send the new content"
		}
		add(s.Conflict, "in conflict with an earlier run (same leadId, other content)", conflict)
		add(s.Unknown, "with an unknown status", "")
		if len(parts) == 0 {
			// Every row is settled, but a run on one of the files did
			// not end well (the notes say which).
			return "Not every run ended well (exit 1): see the notes below, and " + h.ResumeRun("run the one that did not again", "resume the one that did not") + ".", "warn"
		}
		return fmt.Sprintf("The run finished, but not every row is settled (exit 1): %s. Next: %s.", strings.Join(parts, ", "), strings.Join(next, "; ")), "warn"
	case 2:
		return why("The run was refused before it sent anything (exit 2)") + ". Fix the setting or the input and run it again.", "bad"
	case 3:
		return why("Authentication was refused (exit 3)") + ". Check the client id, secret, scope and tenant, and that the application is granted Lead.Write; then run the same command again.", "bad"
	case 4:
		return why("The service or its token endpoint could not be reached (exit 4)") + fmt.Sprintf(". %s rows were not sent; once the service answers, %s.", group(int64(s.NotSent+s.NotReached)), h.ResumeRun("run the same command", "resume the run")), "bad"
	case 5:
		return why("Reading the input or writing an output failed during the run (exit 5)") + ". Fix the disk or file problem, then " + h.ResumeRun("run the same command", "resume the run") + ": what was written is valid.", "bad"
	case 130:
		return fmt.Sprintf("The run was interrupted by a signal (exit 130): %s rows were not sent. %s to finish.", group(int64(s.NotSent+s.NotReached)), h.ResumeRun("Run the same command", "Resume the run")), "warn"
	}
	return fmt.Sprintf("The run ended with exit status %d.", code), "bad"
}

// unverifiedNext is what to do about unverified rows: look them up by
// leadId; and when bulkload could not read the duplicated lead, grant the
// application Lead.Read so that a resumed run can check them itself.
func unverifiedNext(s *summary.Summary, h summary.Hints) string {
	for _, f := range s.Failures {
		if f.Status != lead.StatusUnverified {
			continue
		}
		for _, n := range f.Notes {
			if strings.Contains(n, "could not read lead") {
				return "grant the application Lead.Read and " + h.ResumeRun("run", "resume the run") + " to check the unverified rows, or look each up by leadId"
			}
		}
	}
	return "look each unverified row up by leadId (the results file) and submit it if it is this run's and qualified; " + cmp.Or(h.Resume, "a resumed run") + " checks them again"
}

// why says, from the timeline, what set the run's pace: the throughput,
// the time nothing was answered (outages), the service's rate limit (429s),
// a full pool (rows in flight at the concurrency limit), and latency. It
// answers "why was last night slow?" in words; the charts show the detail.
func why(s *summary.Summary, tl *summary.Timeline, h summary.Hints) []string {
	var out []string
	var secs, answered, atLimit, atRate, dark, busySecs float64
	var peak, p95 float64
	var lats []float64
	for _, x := range tl.Samples {
		if x.Seconds <= 0 {
			continue
		}
		secs += x.Seconds
		answered += float64(x.Answered)
		perSec := float64(x.Answered) / x.Seconds
		peak = max(peak, perSec)
		if x.Answered == 0 && x.Unanswered > 0 {
			dark += x.Seconds
			continue
		}
		if x.InFlight > 0 {
			busySecs += x.Seconds
			if x.ConcurrencyLimit > 0 && x.InFlight >= 0.9*x.ConcurrencyLimit {
				atLimit += x.Seconds
			}
			if x.RateLimit > 0 && perSec >= 0.8*x.RateLimit {
				atRate += x.Seconds
			}
		}
		if x.Answered > 0 {
			lats = append(lats, x.LatencyP50Ms)
			p95 = max(p95, x.LatencyP95Ms)
		}
	}
	if secs <= 0 {
		return nil
	}
	// The summary's own figures where it has them (its API calls and
	// elapsed time, as its text prints them): the timeline starts after
	// the preflight call, and its seconds are whole intervals.
	if el := s.Elapsed(); s.APICalls > 0 && el > 0 {
		out = append(out, fmt.Sprintf("%s API calls in %s: %s a second on average (the busiest second: %s answered).",
			group(int64(s.APICalls)), el.Round(time.Millisecond), num(float64(s.APICalls)/el.Seconds()), num(peak)))
	} else {
		out = append(out, fmt.Sprintf("%s calls answered per second on average over %s (peak %s/s).", num(answered/secs), clock(secs), num(peak)))
	}
	// The outages marked (recorded by the run, or seen in the samples) say
	// how long the service was away; seconds without an answer count
	// where nothing is marked.
	n, away := 0, 0.0
	for _, m := range tl.Marks {
		if m.Kind == summary.MarkOutage {
			n++
			away += m.Seconds
		}
	}
	if away == 0 {
		away = dark
	}
	if away > 0 {
		out = append(out, fmt.Sprintf("For %s the service was away (%d outage(s), marked on the charts): the rows waited.", clock(away), n))
	}
	if s.Rate != nil && s.Rate.Status429 > 0 {
		out = append(out, fmt.Sprintf("The service's rate limit: %s attempts were answered 429 (%.1f%%) and bulkload kept to the limit it found (%s).", group(int64(s.Rate.Status429)), s.Rate.Share429(), s.Rate.Text(h)))
	}
	switch {
	case s.BoundBy != nil && s.BoundBy.Text != "":
		// The run's own reading (the summary's "bound by" line) is better
		// than a guess from the samples.
		out = append(out, "What bound the throughput: "+s.BoundBy.Text+".")
	case busySecs > 0 && atRate/busySecs >= 0.5:
		out = append(out, fmt.Sprintf("Throughput was at the rate limit in force %.0f%% of the time: the rate, not the calls in flight, set the pace.", 100*atRate/busySecs))
	case busySecs > 0 && atLimit/busySecs >= 0.5:
		out = append(out, fmt.Sprintf("Calls in flight were at the concurrency limit %.0f%% of the time: the service's latency times the limit set the pace.", 100*atLimit/busySecs))
	}
	if len(lats) > 0 {
		slices.Sort(lats)
		out = append(out, fmt.Sprintf("Latency: median of the per-second medians %s ms, highest p95 %s ms.", num(lats[len(lats)/2]), num(p95)))
	}
	if s.Retries > 0 {
		out = append(out, fmt.Sprintf("%s retries (%s API calls).", group(int64(s.Retries)), group(int64(s.APICalls))))
	}
	return out
}
