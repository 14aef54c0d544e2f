package main

import (
	"context"
	"flag"
	"log/slog"
	"time"

	"github.com/bulkload/bulkload/app"
)

// uploadFlags are upload's options as its flags fill them.
type uploadFlags struct {
	in     *app.InputOptions
	up     *app.UploadOptions
	checks *app.CheckOptions
	mets   *app.MetricsOptions
	led    *app.LedgerOptions
	auth   authOptions
	logs   logOptions
}

func newUploadFlags() *uploadFlags {
	return &uploadFlags{in: app.NewInputOptions(""), up: app.NewUploadOptions(), checks: app.NewCheckOptions(true),
		mets: app.NewMetricsOptions(), led: &app.LedgerOptions{}}
}

func (f *uploadFlags) register(fs *flag.FlagSet) {
	registerInput(fs, f.in)
	registerRefusals(fs, f.in)
	f.auth.register(fs)
	f.logs.register(fs)
	registerUpload(fs, f.up)
	registerChecks(fs, f.checks, true)
	registerMetrics(fs, f.mets)
	registerLedger(fs, f.led)
}

// runUpload is "bulkload upload": its flags and settings, then the run.
func runUpload(ctx context.Context, e *app.Env, args []string) int {
	fs := newFlagSet("upload", "upload [flags] FILE", e.Stderr)
	f := newUploadFlags()
	f.register(fs)
	auth, logs := &f.auth, &f.logs

	pos, from, err := parseSettings(fs, args, e, "upload", 1)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	job := &app.UploadJob{Input: pos[0], In: f.in, Up: f.up, Checks: f.checks, Metrics: f.mets, Ledger: f.led}
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
	log, err := newLogger(e, logs)
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

// validateFlags are validate's options as its flags fill them.
type validateFlags struct {
	job  app.ValidateJob
	logs logOptions
}

func newValidateFlags() *validateFlags {
	return &validateFlags{job: app.ValidateJob{In: app.NewInputOptions(".validation.csv"), Checks: app.NewCheckOptions(false), Metrics: app.NewMetricsOptions()}}
}

func (f *validateFlags) register(fs *flag.FlagSet) {
	registerInput(fs, f.job.In)
	registerValidate(fs, &f.job)
	registerChecks(fs, f.job.Checks, false)
	f.logs.register(fs)
	registerMetricsFile(fs, f.job.Metrics)
}

// runValidate is "bulkload validate": its flags and settings, then the
// dry run.
func runValidate(ctx context.Context, e *app.Env, args []string) int {
	fs := newFlagSet("validate", "validate [flags] FILE", e.Stderr)
	f := newValidateFlags()
	f.register(fs)
	job, logs := &f.job, &f.logs
	pos, _, err := parseSettings(fs, args, e, "validate", 1)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	job.Input = pos[0]
	if err := job.Prepare(e); err != nil {
		return exitFor(e.Stderr, err)
	}
	log, err := newLogger(e, logs)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	sum, err := app.RunValidateJob(ctx, e, log, job)
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
		opts = app.NewSimOptions()
		logs logOptions
	)
	registerSim(fs, opts)
	logs.register(fs)
	if _, _, err := parseSettings(fs, args, e, "sim", 0); err != nil {
		return exitFor(e.Stderr, err)
	}
	log, err := newLogger(e, &logs)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	return exitFor(e.Stderr, app.Serve(ctx, e, log, opts))
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
	registerSummary(fs, &opts)
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
		opts = app.NewReportOptions()
		logs logOptions
	)
	registerReport(fs, opts)
	logs.register(fs)
	paths, _, err := parseSettings(fs, args, e, "report", -2)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	log, err := newLogger(e, &logs)
	if err != nil {
		return exitFor(e.Stderr, err)
	}
	return exitFor(e.Stderr, app.RunReport(ctx, e, log, opts, paths))
}

// runHistory is "bulkload history": the runs the ledger recorded.
func runHistory(ctx context.Context, e *app.Env, args []string) int {
	fs := newFlagSet("history", "history [flags]", e.Stderr)
	var (
		opts app.HistoryOptions
		logs logOptions
	)
	registerHistory(fs, &opts)
	logs.register(fs)
	if _, _, err := parseSettings(fs, args, e, "history", 0); err != nil {
		return exitFor(e.Stderr, err)
	}
	if _, err := newLogger(e, &logs); err != nil {
		return exitFor(e.Stderr, err)
	}
	return exitFor(e.Stderr, app.History(ctx, e, &opts))
}
