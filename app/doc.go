// Package app runs bulkload's commands: it is the application behind the
// command line, which (cmd/bulkload) turns flags, the environment and the
// config file into the options here, calls one of the runs below, and maps
// the error it returns to the process's exit status.
//
// One file per command:
//   - upload.go: RunUploadJob, the upload's lifecycle: the results file's
//     lock, the check of every output before the first call, the input read
//     through (a file) or read ahead (a stream) and judged (checks.go), the
//     resume identity, the client's connection and preflight, the engine
//     (package upload), and the summary's finish (summary JSON, report,
//     metrics);
//   - validate.go: RunValidateJob, the dry run, with its memory budget;
//   - authcheck.go: AuthCheck;
//   - summary.go: Summarize, the combined summary of results files;
//   - report.go: WriteRunReport, the HTML report after the fact;
//   - sim.go: Serve and StartSim, the built-in simulator.
//
// Errors carry their exit class (exit.go: ExitError, UsageErrorf; StatusOf
// is the one table from errors to statuses, which the summary JSON records
// too). The options (InputOptions, UploadOptions, CheckOptions,
// MetricsOptions) register their own flags, as Kubernetes' component
// options do; the command line decides which a command has.
//
// The stages it wires together live in their own packages: source (the
// input read ahead, hashed and validated, over reader and mapper), upload
// (the engine), submitter (auth, calls, retries, rate and concurrency),
// report (results file, journal, summary), outfile, metrics, runreport and
// leadsim.
package app
