package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

// runUpload is "bulkload upload": its flags and settings, then the run.
func runUpload(ctx context.Context, e *app.Env, args []string) int {
	fs := newFlagSet("upload", "upload [flags] FILE", e.Stderr)
	var (
		in     app.InputOptions
		auth   authOptions
		up     app.UploadOptions
		logs   logOptions
		checks app.CheckOptions
		mets   app.MetricsOptions
		led    app.LedgerOptions
	)
	in.Register(fs)
	in.RegisterRefusals(fs)
	auth.register(fs)
	logs.register(fs)
	up.Register(fs)
	checks.Register(fs, true)
	mets.Register(fs)
	led.Register(fs)

	pos, from, err := parseSettings(fs, args, e, "upload", 1)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	job := &app.UploadJob{Input: pos[0], In: &in, Up: &up, Checks: &checks, Metrics: &mets, Ledger: &led}
	// A run that stops before it begins (a setting, an input it cannot
	// open, no credentials) still writes its metrics and its record in
	// the ledger: a night whose file never came is seen by the alert.
	stopped := func(log *slog.Logger, err error) int {
		if !auth.simulate {
			app.StoppedUpload(ctx, e, log, job, auth.account(), err)
		}
		return exitFor(e.Stderr, err)
	}
	prepErr := job.Prepare(e)
	log, err := newLogger(e, &logs)
	if err != nil {
		return stopped(nil, err)
	}
	if prepErr != nil {
		return stopped(log, prepErr)
	}
	creds, release, err := auth.credentials(ctx, e, from, true, log)
	if err != nil {
		return stopped(log, err)
	}
	defer release()
	if auth.simulate {
		log.Info("simulator started", "endpoint", creds.Endpoint, "token_url", creds.TokenURL)
	}
	sum, err := app.RunUploadJob(ctx, e, log, job, creds, auth.simulate)
	code := exitFor(e.Stderr, err)
	if sum != nil {
		app.LogSummary(e, log, sum, code) // the last record, with --log-format json
	}
	return code
}

// runValidate is "bulkload validate": its flags and settings, then the
// dry run.
func runValidate(ctx context.Context, e *app.Env, args []string) int {
	fs := newFlagSet("validate", "validate [flags] FILE", e.Stderr)
	var (
		in     = app.InputOptions{OutputSuffix: ".validation.csv"}
		logs   logOptions
		checks app.CheckOptions
		mets   app.MetricsOptions
		job    = app.ValidateJob{In: &in, Checks: &checks, Metrics: &mets}
	)
	in.Register(fs)
	app.RegisterValidateOverwrite(&job.Overwrite)(fs)
	checks.Register(fs, false)
	logs.register(fs)
	mets.RegisterFile(fs)
	pos, _, err := parseSettings(fs, args, e, "validate", 1)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	job.Input = pos[0]
	if err := job.Prepare(e); err != nil {
		return exitFor(e.Stderr, err)
	}
	log, err := newLogger(e, &logs)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	sum, err := app.RunValidateJob(ctx, e, log, &job)
	code := exitFor(e.Stderr, err)
	if sum != nil {
		app.LogSummary(e, log, sum, code)
	}
	return code
}

// runAuthCheck is "bulkload auth check": its flags and settings, then the
// check.
func runAuthCheck(ctx context.Context, e *app.Env, args []string) int {
	fs := newFlagSet("auth check", "auth check [flags]", e.Stderr)
	var (
		auth    authOptions
		logs    logOptions
		timeout time.Duration
	)
	auth.register(fs)
	logs.register(fs)
	registerAuthTimeout(&timeout)(fs)
	_, from, err := parseSettings(fs, args, e, "auth check", 0)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	log, err := newLogger(e, &logs)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	cfg, release, err := auth.credentials(ctx, e, from, false, log)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	defer release()
	return exitFor(e.Stderr, app.AuthCheck(ctx, e, log, cfg, timeout))
}

// runSim is "bulkload sim": it serves the simulator until interrupted.
func runSim(ctx context.Context, e *app.Env, args []string) int {
	fs := newFlagSet("sim", "sim [flags]", e.Stderr)
	var (
		opts leadsim.Options
		logs logOptions
		addr string
	)
	app.RegisterSimFlags(&app.SimOptions{Addr: &addr, Opts: &opts})(fs)
	logs.register(fs)
	if _, _, err := parseSettings(fs, args, e, "sim", 0); err != nil {
		return exitFor(e.Stderr, err)
	}
	log, err := newLogger(e, &logs)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	return exitFor(e.Stderr, app.Serve(ctx, e, log, addr, opts))
}

// runSummary is "bulkload summary": it prints the combined summary of
// results files and exits as an upload of them all would: 0 only when
// every row of every input is settled.
func runSummary(ctx context.Context, e *app.Env, args []string) int {
	fs := newFlagSet("summary", "summary [flags] RESULTS...", e.Stderr)
	var (
		opts app.SummaryOptions
		logs logOptions
	)
	app.RegisterSummaryFlags(&opts)(fs)
	logs.register(fs)
	paths, _, err := parseSettings(fs, args, e, "summary", -2)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	log, err := newLogger(e, &logs)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	sum, err := app.Summarize(ctx, e, &opts, paths)
	code := exitFor(e.Stderr, err)
	if sum != nil {
		app.LogSummary(e, log, sum, code)
	}
	return code
}

// runReport is "bulkload report": it writes the run report of results
// files after the fact.
func runReport(ctx context.Context, e *app.Env, args []string) int {
	fs := newFlagSet("report", "report [flags] RESULTS...", e.Stderr)
	var (
		opts app.ReportOptions
		logs logOptions
	)
	app.RegisterReportFlags(&opts)(fs)
	logs.register(fs)
	paths, _, err := parseSettings(fs, args, e, "report", -2)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	log, err := newLogger(e, &logs)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	return exitFor(e.Stderr, app.RunReport(ctx, e, log, &opts, paths))
}

// runHistory is "bulkload history": the runs the ledger recorded.
func runHistory(ctx context.Context, e *app.Env, args []string) int {
	fs := newFlagSet("history", "history [flags]", e.Stderr)
	var (
		opts app.HistoryOptions
		logs logOptions
	)
	app.RegisterHistoryFlags(&opts)(fs)
	logs.register(fs)
	if _, _, err := parseSettings(fs, args, e, "history", 0); err != nil {
		return exitFor(e.Stderr, err)
	}
	if _, err := newLogger(e, &logs); err != nil {
		return exitFor(e.Stderr, err)
	}
	return exitFor(e.Stderr, app.History(ctx, e, &opts))
}
