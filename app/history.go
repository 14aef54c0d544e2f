package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bulkload/bulkload/htmlreport"
	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/ledger"
	"github.com/bulkload/bulkload/summary"
)

// HistoryOptions are the flags of "bulkload history".
type HistoryOptions struct {
	Ledger  LedgerOptions
	Since   string
	Partner string
	JSON    bool
}

// parseSince reads --since: Nd, a Go duration, or a date (UTC midnight).
func parseSince(v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	if d, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n >= 0 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	return time.Time{}, UsageErrorf("--since %q: want a duration back from now (7d, 36h) or a date (2026-11-20)", v)
}

// readLedger opens the ledger --ledger names (or the default one) to read
// it: it must exist.
func readLedger(ctx context.Context, e *Env, o *LedgerOptions) (*ledger.Ledger, error) {
	if o.Location == "off" {
		return nil, UsageErrorf("--ledger off: there is no ledger to read")
	}
	where, err := o.location(e.Getenv)
	if err != nil {
		return nil, err
	}
	l, err := openLedger(ctx, where, true)
	var xe *ExitError
	if errors.As(err, &xe) && xe.Code == ExitUnreachable {
		// A command that only reads the ledger has nothing to resume:
		// a ledger it cannot reach is one it cannot read (exit 2).
		return nil, UsageErrorf("%s", xe.Msg)
	}
	return l, err
}

// History prints the runs the ledger recorded: when, which input and job,
// the exit status, the rows by status, the bids and what bound the run.
func History(ctx context.Context, e *Env, o *HistoryOptions) error {
	since, err := parseSince(o.Since, e.Now())
	if err != nil {
		return err
	}
	l, err := readLedger(ctx, e, &o.Ledger)
	if err != nil {
		return err
	}
	defer l.Close()
	runs, err := l.History(ctx, ledger.Filter{Since: since, JobName: o.Partner})
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if o.JSON {
		return historyJSON(e, runs)
	}
	if len(runs) == 0 {
		fmt.Fprintf(e.Stdout, "no runs in the ledger %s%s\n", l, filterText(o))
		return nil
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tstarted (UTC)\tpartner\texit\trows\tsent\talready sent\tinvalid\tnot settled\tbids\t")
	var notes []string
	for _, r := range runs {
		exit := "killed"
		switch {
		case r.ExitCode != nil:
			exit = strconv.Itoa(*r.ExitCode)
		case r.Alive:
			exit = "running"
		}
		row := []string{strconv.FormatInt(r.ID, 10), r.Started.UTC().Format(time.DateTime), cmp.Or(r.JobName, "-") + shardText(r.Shard), exit}
		s, _ := summaryOf(r)
		var note string
		if s != nil {
			sent := s.Total(func(i lead.StatusInfo) bool { return i.Sent && i.Final })
			unsettled := s.Total(func(i lead.StatusInfo) bool { return i.Action == lead.OperatorAction }) + s.NotSent + s.NotReached + s.Unknown
			row = append(row, strconv.Itoa(s.RowsRead), strconv.Itoa(sent), strconv.Itoa(s.AlreadySent), strconv.Itoa(s.Invalid), strconv.Itoa(unsettled), summary.FormatCents(s.BidCents))
			switch {
			case s.Stopped != "":
				note = "stopped: " + oneLine(s.Stopped, 120)
			case s.BoundBy != nil:
				note = "bound by " + s.BoundBy.Text
			case s.AlreadySent > 0 && sent == 0:
				note = "nothing sent: every row sent by an earlier run"
			}
		} else {
			row = append(row, "", "", "", "", "", "")
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		notes = append(notes, fmt.Sprintf("run %d: %s -> %s%s", r.ID, r.Input, r.Results, prefixed("; ", note)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(e.Stdout, n)
	}
	return nil
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func shardText(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}

// oneLine is s on one line, cut to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func filterText(o *HistoryOptions) string {
	var f []string
	if o.Since != "" {
		f = append(f, "since "+o.Since)
	}
	if o.Partner != "" {
		f = append(f, "of "+o.Partner)
	}
	if len(f) == 0 {
		return ""
	}
	return " " + strings.Join(f, " ")
}

// historyJSON prints runs as a JSON array, each with its summary.
func historyJSON(e *Env, runs []ledger.RunRecord) error {
	type runJSON struct {
		ID       int64           `json:"id"`
		Started  time.Time       `json:"started"`
		Ended    *time.Time      `json:"ended,omitempty"`
		Alive    bool            `json:"alive"`
		Endpoint string          `json:"endpoint"`
		ClientID string          `json:"clientId"`
		Host     string          `json:"host"`
		Input    string          `json:"input"`
		Results  string          `json:"results"`
		Partner  string          `json:"partner"`
		Shard    string          `json:"shard,omitempty"`
		ExitCode *int            `json:"exitCode"`
		Summary  json.RawMessage `json:"summary,omitempty"`
	}
	out := make([]runJSON, 0, len(runs))
	for _, r := range runs {
		j := runJSON{ID: r.ID, Started: r.Started.UTC(), Alive: r.Alive, Endpoint: r.Account.Endpoint, ClientID: r.Account.ClientID, Host: r.Host,
			Input: r.Input, Results: r.Results, Partner: r.JobName, Shard: r.Shard, ExitCode: r.ExitCode, Summary: r.Summary}
		if !r.Ended.IsZero() {
			t := r.Ended.UTC()
			j.Ended = &t
		}
		out = append(out, j)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = e.Stdout.Write(append(b, '\n'))
	return err
}

// historyAround is the run's place among the ledger's runs of its job:
// up to 10 runs before it and 3 after, for the run report.
func historyAround(ctx context.Context, l *ledger.Ledger, id int64, job string) []htmlreport.HistoryRun {
	runs, err := l.History(ctx, ledger.Filter{JobName: job})
	if err != nil {
		return nil
	}
	at := -1
	for i, r := range runs {
		if r.ID == id {
			at = i
		}
	}
	if at < 0 {
		return nil
	}
	var out []htmlreport.HistoryRun
	for _, r := range runs[max(0, at-10):min(len(runs), at+4)] {
		h := htmlreport.HistoryRun{ID: r.ID, Started: r.Started, Input: r.Input, Exit: r.ExitCode, This: r.ID == id}
		if s, _ := summaryOf(r); s != nil {
			h.Rows, h.AlreadySent, h.BidCents = s.RowsRead, s.AlreadySent, s.BidCents
		}
		out = append(out, h)
	}
	return out
}

// runHistory is the history for the report this run writes at its end
// (--report), nil without a ledger. The run is not ended yet: it shows
// as this run, with the counts of sum.
func (u *uploader) runHistory(ctx context.Context, sum *summary.Summary, code int) []htmlreport.HistoryRun {
	if u.ledger == nil || u.lrun == nil {
		return nil
	}
	h := historyAround(ctx, u.ledger, u.lrun.ID, u.metrics.Job())
	for i := range h {
		if h[i].This {
			h[i].Exit = &code
			h[i].Rows, h[i].AlreadySent, h[i].BidCents = sum.RowsRead, sum.AlreadySent, sum.BidCents
		}
	}
	return h
}

// WriteLedgerReport writes the run report of run id from the ledger (its
// summary as the run recorded it, whatever ran after), with the run's
// place in the history of its job.
func WriteLedgerReport(ctx context.Context, e *Env, log *slog.Logger, o *LedgerOptions, out string, id int64) error {
	l, err := readLedger(ctx, e, o)
	if err != nil {
		return err
	}
	defer l.Close()
	r, err := l.Run(ctx, id)
	if err != nil {
		return UsageErrorf("--run %d: %v", id, err)
	}
	s, err := summaryOf(r)
	if err != nil {
		return UsageErrorf("--run %d: %v", id, err)
	}
	if err := checkReportOut(out, nil); err != nil {
		return err
	}
	rep := &htmlreport.Report{Summary: s, Generated: time.Now(), History: historyAround(ctx, l, id, r.JobName), HistoryOf: r.JobName, Hints: cliHints()}
	if err := htmlreport.Write(out, rep); err != nil {
		return fmt.Errorf("-o: %w", err)
	}
	log.Info("report written", "path", out, "run", id)
	return nil
}

// ledgerCalls replaces a combined summary's API calls, retries and tokens
// (summed from the summaries beside the results files: each file's last
// run) with the sums over every run the ledger recorded for those files:
// a file that a rerun or a resume wrote again keeps the calls of all its
// runs. It does nothing when no ledger is there or it knows none of them.
func ledgerCalls(ctx context.Context, e *Env, o *LedgerOptions, sum *summary.Summary, paths []string) error {
	if o.Location == "off" {
		return nil
	}
	where, err := o.location(e.Getenv)
	if err != nil {
		if o.Location == "" {
			return nil // no state folder: no default ledger to read
		}
		return err
	}
	l, err := openLedger(ctx, where, true)
	if err != nil {
		if o.Location == "" && strings.Contains(err.Error(), ledger.ErrNoLedger.Error()) {
			return nil
		}
		return err
	}
	defer l.Close()
	abs := make([]string, len(paths))
	for i, p := range paths {
		abs[i], _ = filepath.Abs(p)
	}
	runs, err := l.History(ctx, ledger.Filter{Results: abs})
	if err != nil {
		return err
	}
	var calls, retries, tokens, n int
	for _, r := range runs {
		s, err := summaryOf(r)
		if err != nil {
			continue
		}
		calls, retries, tokens, n = calls+s.APICalls, retries+s.Retries, tokens+s.TokensFetched, n+1
	}
	if n == 0 {
		return nil
	}
	sum.APICalls, sum.Retries, sum.TokensFetched = calls, retries, tokens
	sum.Notes = append(sum.Notes, fmt.Sprintf("API calls, retries and tokens fetched: the %d runs the ledger %s recorded for these results files (every run, not only each file's last)", n, l))
	return nil
}
