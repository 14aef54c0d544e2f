package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/bulkload/bulkload/htmlreport"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/report"
	"github.com/bulkload/bulkload/summary"
)

// ReportOptions are the flags of "bulkload report".
type ReportOptions struct {
	Out string
	// Run is --run: the report of a run the ledger recorded (0: none).
	Run    int64
	Ledger LedgerOptions
}

// NewReportOptions returns report's options with their defaults: -o
// report.html.
func NewReportOptions() *ReportOptions { return &ReportOptions{Out: "report.html"} }

// RunReport writes "bulkload report": of results files, or with --run of
// a run the ledger recorded.
func RunReport(ctx context.Context, e *Env, log *slog.Logger, o *ReportOptions, paths []string) error {
	switch {
	case o.Run != 0 && len(paths) > 0:
		return UsageErrorf("report: give --run ID or results files, not both")
	case o.Run != 0:
		return WriteLedgerReport(ctx, e, log, &o.Ledger, o.Out, o.Run)
	case len(paths) == 0:
		return UsageErrorf("report: give results files, or --run ID (bulkload history lists the runs)")
	}
	return WriteRunReport(log, o.Out, paths)
}

// checkReportOut proves -o writable and none of the files the report
// reads.
func checkReportOut(out string, paths []string) error {
	// The results files and the files beside them are only read (they may
	// be read-only): -o must name none of them, nor a temporary name of
	// any (checkReadOnly).
	if err := checkReadOnly("-o", out, paths); err != nil {
		return err
	}
	if err := outfile.CheckOutputs("-", []outfile.Output{{Flag: "-o", Path: out}}, false, report.Outcomes); err != nil {
		return UsageErrorf("%v", flagHint(err))
	}
	return nil
}

// WriteRunReport renders the run report of results files after the fact
// to out: one results file's run from its summary beside it
// (summary.Path), or several (the shards of a backfill, a night's
// runs) combined as `bulkload summary` combines them, with their timelines
// merged on one time axis and their invalid-column tables added up.
func WriteRunReport(log *slog.Logger, out string, paths []string) error {
	if err := checkReportOut(out, paths); err != nil {
		return err
	}
	rep, err := loadReport(paths)
	if err != nil {
		return UsageErrorf("%v", err)
	}
	if err := htmlreport.Write(out, rep); err != nil {
		return fmt.Errorf("-o: %w", err)
	}
	log.Info("report written", "path", out)
	return nil
}

// loadReport builds the report of results files. A file's summary beside
// it (summary.Path) is used only when it is at least as new as the
// file: a results file written after its summary was continued by a run
// that never finished (killed), and its summary describes an earlier run.
// One file with a fresh summary is that run's report, exactly as --report
// wrote it. Several, all with fresh summaries, are combined from those
// (summary.Merge), reading no row. Otherwise the files are
// combined from their rows (combine, as bulkload summary does): the
// counts, result codes, bids and failures; the invalid columns, timelines
// and manifest come from the fresh summaries there are. A combined page's
// exit status and notes are bulkload summary's (combinedVerdict).
func loadReport(paths []string) (*htmlreport.Report, error) {
	rep := &htmlreport.Report{Generated: time.Now(), Hints: cliHints()}
	parts, err := readParts(paths)
	if err != nil {
		return nil, err
	}
	allFresh := true
	var metas []*outfile.Meta
	for _, p := range parts {
		allFresh = allFresh && p.summary != nil
		metas = append(metas, p.meta)
		rep.Parts = append(rep.Parts, htmlreport.Part{Results: p.results, Summary: p.summary})
	}
	if len(rep.Parts) == 1 && allFresh {
		rep.Summary = rep.Parts[0].Summary
		rep.Parts = nil
		return rep, nil
	}
	var sum *summary.Summary
	if allFresh {
		ss := make([]*summary.Summary, len(parts))
		for i, p := range parts {
			ss[i] = p.summary
		}
		sum = summary.Merge(ss, metas)
	} else {
		var err error
		if sum, err = combine(paths); err != nil {
			return nil, err
		}
		for _, p := range parts {
			if p.summary != nil {
				sum.MergeInvalidColumns(p.summary.InvalidColumns)
			}
		}
	}
	// The page says what bulkload summary of the same files says.
	verr, reasons := combinedVerdict(sum, parts, false)
	code := StatusOf(verr)
	sum.ExitCode = &code
	sum.Notes = append(sum.Notes, reasons...)
	stampBuild(sum)
	sum.Settings = map[string]any{"results": paths}
	var timelines []*summary.Timeline
	for _, p := range rep.Parts {
		ps := p.Summary
		if ps == nil {
			continue
		}
		if ps.Timeline != nil {
			timelines = append(timelines, ps.Timeline)
		}
		if sum.Start.IsZero() || (!ps.Start.IsZero() && ps.Start.Before(sum.Start)) {
			sum.Start = ps.Start
		}
		if ps.End.After(sum.End) {
			sum.End = ps.End
		}
		if sum.Mode == "summary" || sum.Mode == ps.Mode {
			sum.Mode = ps.Mode
		}
	}
	sum.Timeline = summary.MergeTimelines(timelines)
	rep.Summary = sum
	return rep, nil
}

// checkReadOnly refuses an output (flag) of a command that only reads the
// results files at paths (bulkload report, bulkload summary) when it names
// one of them or a file kept beside one (outfile.Sidecars), or a temporary
// name of either, whether it exists yet or not.
func checkReadOnly(flag, out string, paths []string) error {
	outs := []outfile.Output{{Flag: flag, Path: out}}
	for _, p := range paths {
		outs = append(outs, outfile.Output{Flag: "results file", Path: p, Results: true})
	}
	if err := outfile.CheckSidecars(outs); err != nil {
		return UsageErrorf("%v", err)
	}
	return nil
}
