// Package app runs bulkload's commands: it is the application behind the
// command line, which (cmd/bulkload) turns flags, the environment and the
// config file into the options here, calls one of the runs below, and maps
// the error it returns to the process's exit status.
//
// One file per command:
//   - upload.go: RunUploadJob, the upload's lifecycle (the results file's
//     lock, the check of every output before the first call, the engine,
//     package upload), with what it is made of beside it: identity.go (the
//     input read through, a file, or read ahead, a stream, and proven to be
//     the results file's own when resuming; the resume policy itself is
//     upload.MatchPrior, decided once a row: by the check for the rows it
//     reads, upload.Check, whose decisions the engine is handed, and by
//     the engine for a stream's rows after them), checks.go (what the rows must pass before the
//     first call), connect.go (the client, its token and the preflight),
//     finish.go (the summary's finish and the run's error), refusals.go,
//     progress.go, and concurrency.go and rate.go (what bound the run);
//   - validate.go: RunValidateJob, the dry run; memory.go holds its memory
//     budget and upload's;
//   - authcheck.go: AuthCheck;
//   - summary.go: Summarize, the combined summary of results files, read
//     back by combined.go (readParts, and combine from their rows);
//   - report.go: WriteRunReport, the HTML report after the fact;
//   - sim.go: Serve and StartSim, the built-in simulator.
//
// outputs.go writes every command's summary: printed, logged, as JSON,
// beside the results file, and as the HTML report.
//
// Env is the process's world (standard streams, the environment, the
// clock, the second signal); Env.Deps are the transport and the timings of
// the calls to the service, production's when zero and milliseconds in
// tests (deps.go).
//
// Errors carry their exit class (exit.go: ExitError, UsageErrorf; StatusOf
// is the one table from errors to statuses, which the summary JSON records
// too). The options (InputOptions, UploadOptions, CheckOptions,
// MetricsOptions, LedgerOptions and each command's own) are plain structs
// with exported fields, as the GitHub CLI's are: NewUploadOptions and the
// others give their defaults, the command line registers its flags on
// them (cmd/bulkload/flags.go), and a test builds them directly.
//
// The stages it wires together live in their own packages: source (the
// input read ahead, hashed and validated, over reader and mapper), upload
// (the engine), submitter (calls, classification, retries, the outage
// gate) with token, pace and redact, report (the results file and
// journal), summary (the run's figures), htmlreport (the HTML report),
// outfile, metrics, ledger and leadsim.
package app
