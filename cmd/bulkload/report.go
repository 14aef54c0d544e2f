package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/bulkload/bulkload/report"
	"github.com/bulkload/bulkload/runreport"
)

// registerReportFlags registers the flags of "bulkload report".
func registerReportFlags(out *string) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		fs.StringVar(out, "o", "report.html", "file to write the HTML report to")
	}
}

// runReport renders the run report of results files after the fact: one
// results file's run from its summary beside it (report.SummaryPath), or
// several (the shards of a backfill, a night's runs) combined as
// `bulkload summary` combines them, with their timelines merged on one
// time axis and their invalid-column tables added up.
func runReport(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet("report", "report [flags] RESULTS...", e.stderr)
	var (
		out  string
		logs logOptions
	)
	registerReportFlags(&out)(fs)
	logs.register(fs)
	paths, _, err := parseSettings(fs, args, e, "report", -1)
	if err != nil {
		return exitFor(e.stderr, err)
	}
	log, err := e.logger(&logs)
	if err != nil {
		return exitFor(e.stderr, err)
	}
	outs := []report.Output{{Flag: "-o", Path: out}}
	for _, p := range paths {
		outs = append(outs, report.Output{Flag: "results file", Path: p, Continues: true})
	}
	// The results files are listed so that -o naming one of them is
	// refused; they are only read.
	if err := report.CheckOutputs("-", outs, false, ""); err != nil {
		return exitFor(e.stderr, usageErrorf("%v", err))
	}
	rep, err := loadReport(paths)
	if err != nil {
		return exitFor(e.stderr, usageErrorf("%v", err))
	}
	if err := runreport.Write(out, rep); err != nil {
		return exitFor(e.stderr, fmt.Errorf("-o: %w", err))
	}
	log.Info("report written", "path", out)
	return exitOK
}

// loadReport builds the report of results files. One file with its
// summary beside it is that run's report, exactly as --report wrote it.
// Otherwise the files are combined (report.Combine): counts, result codes,
// bids and failures from their rows; invalid columns, timelines and the
// manifest from the summaries beside them, where there are any.
func loadReport(paths []string) (*runreport.Report, error) {
	rep := &runreport.Report{Generated: time.Now()}
	for _, p := range paths {
		s, err := report.ReadSummary(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if _, serr := os.Stat(p); serr != nil {
			return nil, fmt.Errorf("results file: %w", serr)
		}
		rep.Parts = append(rep.Parts, runreport.Part{Results: p, Summary: s})
	}
	if len(rep.Parts) == 1 && rep.Parts[0].Summary != nil {
		rep.Summary = rep.Parts[0].Summary
		rep.Parts = nil
		return rep, nil
	}
	sum, err := report.Combine(paths)
	if err != nil {
		return nil, err
	}
	stampBuild(sum)
	sum.Settings = map[string]any{"results": paths}
	var timelines []*report.Timeline
	for _, p := range rep.Parts {
		ps := p.Summary
		if ps == nil {
			continue
		}
		sum.MergeInvalidColumns(ps.InvalidColumns)
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
	sum.Timeline = report.MergeTimelines(timelines)
	rep.Summary = sum
	return rep, nil
}
