package main

import (
	"cmp"
	"flag"

	"github.com/bulkload/bulkload/app"
)

// The flags of each command, registered on the options app runs with
// (plain structs a test can build: app.NewUploadOptions and the others
// give their defaults, which the flags show in help). A command's flags
// are the registrations commands.go calls; completion and the config
// file's known keys list them through commands() and knownSettings.

// registerInput registers the reading and output flags validate and upload
// share.
func registerInput(fs *flag.FlagSet, o *app.InputOptions) {
	fs.StringVar(&o.Format, "format", o.Format, "input format: csv or jsonl (default: from the file name; required for stdin)")
	fs.StringVar(&o.Delimiter, "delimiter", o.Delimiter, `CSV delimiter: ",", ";", "|" or "tab" (default: sniffed from the header)`)
	fs.StringVar(&o.Encoding, "encoding", o.Encoding, "input text encoding: utf-8, latin1 or windows-1252")
	fs.StringVar(&o.DateOrder, "date-order", o.DateOrder, "order of slashed dates of birth: mdy (MM/DD/YYYY) or dmy (DD/MM/YYYY)")
	fs.StringVar(&o.Mapping, "mapping", o.Mapping, "YAML file of this partner's column renames and value maps")
	fs.StringVar(&o.Results, "results", o.Results, "results file, .csv or .jsonl (default: NAME"+cmp.Or(o.OutputSuffix, ".results.csv")+" beside the input)")
	fs.StringVar(&o.Rejects, "rejects", o.Rejects, "file for the rows that failed validation, .csv, .tsv or .jsonl, with an error column (mode 0600)")
	fs.StringVar(&o.SummaryJSON, "summary-json", o.SummaryJSON, `file to write the summary to as JSON ("-": standard output)`)
	fs.StringVar(&o.Report, "report", o.Report, "file to write the run report to: one HTML page (timeline, invalid columns, bids), opened with no network")
}

// registerRefusals registers upload's --refusals.
func registerRefusals(fs *flag.FlagSet, o *app.InputOptions) {
	fs.StringVar(&o.Refusals, "refusals", o.Refusals, "file for the rows the service refused: the input's columns and its reason, as --rejects (mode 0600)")
}

// registerUpload registers upload's own flags: calls, pacing, retries,
// resume and the service's assumptions.
func registerUpload(fs *flag.FlagSet, o *app.UploadOptions) {
	fs.Var(&o.Concurrency, "concurrency", "calls in flight at once: auto (learn what the service takes, up to --max-concurrency) or a number")
	fs.IntVar(&o.MaxConcurrency, "max-concurrency", o.MaxConcurrency, "with --concurrency auto, never more calls in flight than this")
	fs.StringVar(&o.Shard, "shard", o.Shard, "send only the rows of shard K of N: K/N, or auto (from a Kubernetes Indexed Job)")
	fs.Var(&o.Rate, "rate", "API calls per second, retries included: auto (find the service's limit), a number, or 0 (unlimited)")
	fs.Float64Var(&o.MaxRate, "max-rate", o.MaxRate, "with --rate auto, never above this many calls per second (0: no cap)")
	fs.IntVar(&o.MaxAttempts, "max-attempts", o.MaxAttempts, "attempts per call for network errors, 502, 503 and 504, the first included; 429s do not count")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "time limit of one HTTP attempt")
	fs.DurationVar(&o.DrainTimeout, "drain-timeout", o.DrainTimeout, "how long calls in flight may take to finish after SIGINT/SIGTERM/SIGHUP")
	fs.IntVar(&o.MaxConsecutiveFailures, "max-consecutive-failures", o.MaxConsecutiveFailures, "an outage begins after this many attempts in a row failed as if the service were gone (0: no count)")
	fs.DurationVar(&o.OutageWait, "outage-wait", o.OutageWait, "how long to wait out an outage of the service or identity provider before stopping (exit 4)")
	fs.DurationVar(&o.MaxRetryWait, "max-retry-wait", o.MaxRetryWait, "the most a call waits to retry (backoff and Retry-After, summed); past it the row is left for --resume")
	fs.DurationVar(&o.PreflightWait, "preflight-wait", o.PreflightWait, "before the first row, how long to ask again while a gateway answers 502, 503 or 504, before exit 4")
	fs.BoolVar(&o.Resume, "resume", o.Resume, "continue the run recorded in the results file, sending only what is unfinished")
	fs.BoolVar(&o.Overwrite, "overwrite", o.Overwrite, "start over on a results file of outcomes (a lead the ledger holds is sent again only with --resend)")
	fs.BoolVar(&o.NoSubmit, "no-submit", o.NoSubmit, "never call submitLead (for partners with automatic submission)")
	fs.StringVar(&o.CreateDocument, "create-document", o.CreateDocument, "GraphQL document of createLead")
	fs.StringVar(&o.SubmitDocument, "submit-document", o.SubmitDocument, "GraphQL document of submitLead, taking $id: String! (an assumption: see README)")
	fs.StringVar(&o.AlreadySubmitted, "already-submitted", o.AlreadySubmitted, "regular expression for a submitLead error that means the lead is submitted already (empty: off)")
	fs.StringVar(&o.DuplicateOf, "duplicate-of", o.DuplicateOf, "regular expression for a duplicate createLead note, its first group the duplicated lead's id (empty: off)")
	fs.StringVar(&o.RefusalCodes, "refusal-codes", o.RefusalCodes, "GraphQL error codes (comma-separated) refusing a createLead before anything is created (see README)")
	fs.StringVar(&o.DeniedCodes, "denied-codes", o.DeniedCodes, "GraphQL error codes (comma-separated) refusing the application's access: the run stops, exit 3 (see README)")
	fs.StringVar(&o.Ambiguous503, "ambiguous-503", o.Ambiguous503, "503 answers that may follow a commit: not-graphql (a proxy's page, not the service's errors), all or none")
	fs.StringVar(&o.LeadDocument, "lead-document", o.LeadDocument, "GraphQL document that reads a lead by $id: String!, for the own-lead check (an assumption: see README)")
	fs.StringVar(&o.Progress, "progress", o.Progress, "progress display: auto (a bar on a terminal, else a log line every 10 s), bar, log or off")
}

// registerChecks registers the checks' flags; upload adds upload's own
// (--max-invalid, --strict, --allow-no-ssn).
func registerChecks(fs *flag.FlagSet, o *app.CheckOptions, upload bool) {
	fs.StringVar(&o.RequireColumns, "require-columns", o.RequireColumns, "fields the input must have a column for, besides dateOfBirth and termsConsent (eg socialSecurityNumber)")
	fs.BoolVar(&o.AllowEmpty, "allow-empty", o.AllowEmpty, "exit 0 for an input with a header and no rows (default: exit 1, \"no rows\")")
	if upload {
		fs.StringVar(&o.MaxInvalid, "max-invalid", o.MaxInvalid, "send nothing when more rows than this are invalid, a share (5%) or a count (50); fewer do not fail the run")
		fs.BoolVar(&o.Strict, "strict", o.Strict, "exit 1 on any invalid row, even within --max-invalid (default: reported, not failed)")
		fs.BoolVar(&o.AllowNoSSN, "allow-no-ssn", o.AllowNoSSN, "upload an input with no socialSecurityNumber column (a partner that sends none: no credit pull)")
	}
}

// registerMetrics registers upload's metrics flags: the textfile, the
// Pushgateway and the job name.
func registerMetrics(fs *flag.FlagSet, o *app.MetricsOptions) {
	fs.StringVar(&o.File, "metrics-file", o.File, "write Prometheus metrics to this file for node_exporter's textfile collector, every 10s and at the end")
	fs.StringVar(&o.Pushgateway, "pushgateway", o.Pushgateway, "push Prometheus metrics to this Pushgateway URL at the end of the run")
	fs.StringVar(&o.PushJob, "pushgateway-job", o.PushJob, "the Pushgateway job the metrics are pushed under")
	fs.StringVar(&o.JobName, "job-name", o.JobName, "the job_name label of the metrics (default: the input's base name without dates: acme_20261122.csv is acme)")
}

// registerMetricsFile registers validate's part of them: the file and its
// job_name (no Pushgateway: a dry run pushing into the upload's group
// would hide the upload's figures).
func registerMetricsFile(fs *flag.FlagSet, o *app.MetricsOptions) {
	fs.StringVar(&o.File, "metrics-file", o.File, "write Prometheus metrics to this file for node_exporter's textfile collector, at the end")
	fs.StringVar(&o.JobName, "job-name", o.JobName, "the job_name label of the metrics (default: the input's base name without dates)")
}

// registerLedger registers the ledger's flags for upload.
func registerLedger(fs *flag.FlagSet, o *app.LedgerOptions) {
	registerLedgerLocation(fs, o)
	fs.BoolVar(&o.Resend, "resend", o.Resend, "send every row, even one whose lead the ledger says an earlier run created")
	fs.BoolVar(&o.ResendChanged, "resend-changed", o.ResendChanged, "send a row whose leadId an earlier run sent with other content (default: a conflict, not sent)")
}

// registerLedgerLocation registers --ledger alone (history, report,
// summary).
func registerLedgerLocation(fs *flag.FlagSet, o *app.LedgerOptions) {
	fs.StringVar(&o.Location, "ledger", o.Location, "ledger of leads sent and runs: a file (default in $XDG_STATE_HOME/bulkload), a postgres:// URL, or off")
}

// registerValidate registers validate's own --overwrite.
func registerValidate(fs *flag.FlagSet, j *app.ValidateJob) {
	fs.BoolVar(&j.Overwrite, "overwrite", j.Overwrite, "write the results although the file holds an upload's outcomes (its lead ids and bids are lost)")
}

// registerSummary registers the flags of "bulkload summary".
func registerSummary(fs *flag.FlagSet, o *app.SummaryOptions) {
	fs.StringVar(&o.JSONPath, "summary-json", o.JSONPath, `file to write the combined summary to as JSON ("-": standard output)`)
	fs.BoolVar(&o.Strict, "strict", o.Strict, "exit 1 on any invalid row, as upload --strict")
	fs.Int64Var(&o.Run, "run", o.Run, "the summary of this run as the ledger recorded it (bulkload history lists the runs)")
	registerLedgerLocation(fs, &o.Ledger)
}

// registerReport registers the flags of "bulkload report".
func registerReport(fs *flag.FlagSet, o *app.ReportOptions) {
	fs.StringVar(&o.Out, "o", o.Out, "file to write the HTML report to")
	fs.Int64Var(&o.Run, "run", o.Run, "the report of this run as the ledger recorded it (bulkload history lists the runs)")
	registerLedgerLocation(fs, &o.Ledger)
}

// registerHistory registers the flags of "bulkload history".
func registerHistory(fs *flag.FlagSet, o *app.HistoryOptions) {
	registerLedgerLocation(fs, &o.Ledger)
	fs.StringVar(&o.Since, "since", o.Since, "only runs started since then: a duration back from now (7d, 36h) or a date (2026-11-20)")
	fs.StringVar(&o.Partner, "partner", o.Partner, "only the runs of this job (its --job-name: by default the input's name without dates)")
	fs.BoolVar(&o.JSON, "json", o.JSON, "print the runs as JSON, each with its summary")
}

// registerSim registers sim's own flags and the simulator's knobs
// (leadsim's own registration: they are the simulator's settings).
func registerSim(fs *flag.FlagSet, o *app.SimOptions) {
	fs.StringVar(&o.Addr, "addr", o.Addr, "listen address (keep it on loopback: the simulator's credentials are public)")
	o.Sim.RegisterFlags(fs)
}
