package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/ledger"
	"github.com/bulkload/bulkload/metrics"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/pace"
	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/report"
	"github.com/bulkload/bulkload/source"
	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
	"github.com/bulkload/bulkload/upload"
)

// UploadOptions are the flags of upload beyond reading and authentication.
type UploadOptions struct {
	// Shard is --shard as given (K/N or auto); shardOf is it parsed.
	Shard                  string
	shardOf                upload.Shard
	Concurrency            Concurrency
	MaxConcurrency         int
	Rate                   Rate
	MaxRate                float64
	MaxAttempts            int
	Timeout                time.Duration
	DrainTimeout           time.Duration
	MaxConsecutiveFailures int
	OutageWait             time.Duration
	// MaxRetryWait is the most a call waits between its attempts (its
	// backoff and the service's Retry-After, summed): the interface shows
	// no Retry-After, so this is an assumption, and a setting.
	MaxRetryWait   time.Duration
	PreflightWait  time.Duration
	Resume         bool
	Overwrite      bool
	NoSubmit       bool
	CreateDocument string
	SubmitDocument string
	LeadDocument   string
	Progress       string
	// AlreadySubmitted recognises a submitLead refusal that means the lead
	// is submitted already (an earlier attempt whose answer was lost, or a
	// partner with automatic submission). The interface does not show
	// submitLead's errors, so this is an assumption, and a setting.
	AlreadySubmitted string
	alreadyRE        *regexp.Regexp
	// DuplicateOf recognises, in the note of a createLead answer, a
	// duplicate, and its first group finds the id of the lead it duplicates
	// (empty when the note names none). The interface does not show how the
	// service reports a duplicate, so this too is a setting. The lead is
	// read back (leadDoc) to check it is the row's own.
	DuplicateOf   string
	duplicateOfRE *regexp.Regexp
	// RefusalCodes are the GraphQL error codes, comma-separated, that mean
	// createLead was refused before the service did anything; any other
	// error in a 200 answer may follow a commit, and the row is ambiguous.
	// The interface does not show its codes: an assumption, and a setting.
	RefusalCodes string
	// DeniedCodes are the GraphQL error codes, comma-separated, that mean
	// the service refuses the application's access (Lead.Write revoked):
	// the run stops (exit 3). The interface shows only UNAUTHENTICATED:
	// an assumption, and a setting.
	DeniedCodes string
	// Ambiguous503 says which 503 answers may follow a commit (not-graphql,
	// all or none): the interface shows no HTTP status but 401, so this
	// too is an assumption, and a setting; amb503 is it parsed.
	Ambiguous503 string
	amb503       submitter.Ambiguous503
}

// DefaultDuplicateOf is --duplicate-of's default: the simulator's note
// of a duplicate, its first group the duplicated lead's id.
const DefaultDuplicateOf = `(?i)duplicate(?: of lead ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}))?`

// NewUploadOptions returns upload's options with their defaults:
// concurrency and rate auto, production's retries and waits, the
// documents and the assumptions of README.
func NewUploadOptions() *UploadOptions {
	return &UploadOptions{
		Concurrency:            Concurrency{Auto: true},
		MaxConcurrency:         pace.DefaultMaxConcurrency,
		Rate:                   Rate{Auto: true},
		MaxAttempts:            5,
		Timeout:                60 * time.Second,
		DrainTimeout:           30 * time.Second,
		MaxConsecutiveFailures: submitter.DefaultOutageThreshold,
		OutageWait:             submitter.DefaultOutageWait,
		MaxRetryWait:           submitter.DefaultMaxRetryWait,
		PreflightWait:          submitter.DefaultPreflightWait,
		CreateDocument:         submitter.DefaultCreateDocument,
		SubmitDocument:         submitter.DefaultSubmitDocument,
		LeadDocument:           submitter.DefaultLeadDocument,
		AlreadySubmitted:       `(?i)already submitted`,
		DuplicateOf:            DefaultDuplicateOf,
		RefusalCodes:           submitter.DefaultRefusalCodes,
		DeniedCodes:            submitter.DefaultDeniedCodes,
		Ambiguous503:           submitter.Ambiguous503NotGraphQL.String(),
		Progress:               "auto",
	}
}

// UploadJob is one upload: its input and the options that shape it.
type UploadJob struct {
	Input   string          // the input file, or "-" for standard input
	In      *InputOptions   // reading, validating, and the outputs
	Up      *UploadOptions  // calls: concurrency, rate, retries, resume
	Checks  *CheckOptions   // what the input must pass before the first call
	Metrics *MetricsOptions // the metrics file and Pushgateway
	Ledger  *LedgerOptions  // the ledger of leads sent and runs; nil: none
}

// Prepare checks the job's options and completes them from the input's
// name and the clock, before anything is opened or logged.
func (j *UploadJob) Prepare(e *Env) error {
	in, up := j.In, j.Up
	j.Checks.upload = true
	if err := errors.Join(up.check(), j.Checks.check()); err != nil {
		return err
	}
	if up.Shard != "" {
		var err error
		if up.shardOf, err = upload.ParseShard(up.Shard, e.Getenv); err != nil {
			return UsageErrorf("--shard: %v", err)
		}
		in.shard = fmt.Sprintf("%d-of-%d", up.shardOf.K, up.shardOf.N)
	}
	if err := checkInputKind("upload", j.Input); err != nil {
		return err
	}
	if in.Refusals != "" && streamed(j.Input) {
		return UsageErrorf("--refusals needs an input file: the refused rows are read again from it at the end, and standard input or a pipe cannot be read twice (the results file lists them: status failed)")
	}
	if err := in.expand(j.Input, e.Now()); err != nil {
		return err
	}
	return in.check()
}

// RunUploadJob runs the prepared job against the service creds name
// (simulated: the built-in simulator, which has its own default results
// file). It returns the run's summary, nil when it stopped before it had
// one, and the run's error, which says its exit class.
func RunUploadJob(ctx context.Context, e *Env, log *slog.Logger, j *UploadJob, creds Credentials, simulated bool) (*summary.Summary, error) {
	in, up := j.In, j.Up
	if simulated && in.Results == "" {
		// A simulated run has its own default results file: it can never
		// Overwrite a real upload's journal, and, since every --simulate
		// starts a fresh simulator that cannot continue an earlier run, it
		// may overwrite its own.
		in.Results = strings.TrimSuffix(in.resultsPath(j.Input), ".results.csv") + ".simulated.results.csv"
		up.Overwrite = !up.Resume
	}
	if !e.Deps.KeepRuntimeSettings {
		defer limitUploadMemory(e.Getenv)()
	}
	u := &uploader{env: e, in: in, up: up, checks: j.Checks, creds: creds, log: log, input: j.Input, mets: j.Metrics, simulated: simulated, refusedRows: map[int]string{},
		ledgerOpts: j.Ledger}
	u.metrics = j.Metrics.recorder(j.Input, in.shard)
	if !strings.Contains(up.LeadDocument, "partnerLeadId") {
		log.Warn("--lead-document selects no partnerLeadId: the own-lead check cannot tell a row's own lead from another's, so a row whose retry is answered as a duplicate ends unverified", "lead_document", up.LeadDocument)
	}
	err := u.run(ctx)
	if err != nil && u.summary == nil {
		// Stopped before its end: the summary JSON says why.
		u.stopped = strings.TrimPrefix(err.Error(), "usage: ")
	}
	u.foreign = errors.Is(err, errForeign)
	err = u.finishSummary(err)
	u.finishMetrics(ctx, StatusOf(err))
	u.endLedger(ctx, StatusOf(err))
	return u.summary, err
}

func (o *UploadOptions) check() error {
	switch {
	case !o.Concurrency.Auto && o.Concurrency.N < 1:
		return UsageErrorf("--concurrency %d: want auto, or at least 1", o.Concurrency.N)
	case o.MaxConcurrency < 1:
		return UsageErrorf("--max-concurrency %d: want at least 1", o.MaxConcurrency)
	case o.MaxRate < 0 || math.IsNaN(o.MaxRate):
		return UsageErrorf("--max-rate %v: want 0 (no cap) or more", o.MaxRate)
	case o.MaxAttempts < 1:
		return UsageErrorf("--max-attempts %d: want at least 1", o.MaxAttempts)
	case o.Timeout <= 0:
		return UsageErrorf("--timeout %v: want a positive duration", o.Timeout)
	case o.MaxConsecutiveFailures < 0:
		return UsageErrorf("--max-consecutive-failures %d: want 0 (no count) or more", o.MaxConsecutiveFailures)
	case o.MaxRetryWait <= 0:
		return UsageErrorf("--max-retry-wait %v: want a positive duration", o.MaxRetryWait)
	case o.OutageWait < 0:
		return UsageErrorf("--outage-wait %v: want 0 (stop at once) or a positive duration", o.OutageWait)
	case o.PreflightWait < 0:
		return UsageErrorf("--preflight-wait %v: want 0 (ask once) or a positive duration", o.PreflightWait)
	case o.Resume && o.Overwrite:
		return UsageErrorf("--resume and --overwrite contradict each other: --resume continues the results file, --overwrite starts it over; give one")
	}
	switch o.Progress {
	case "auto", "bar", "log", "off":
	default:
		return UsageErrorf("--progress %q: want auto, bar, log or off", o.Progress)
	}
	if o.DuplicateOf != "" {
		re, err := regexp.Compile(o.DuplicateOf)
		if err != nil || re.NumSubexp() < 1 {
			return UsageErrorf("--duplicate-of %q: want a regular expression that matches a duplicate answer's note and whose first group captures the lead id", o.DuplicateOf)
		}
		o.duplicateOfRE = re
	}
	a, err := submitter.ParseAmbiguous503(o.Ambiguous503)
	if err != nil {
		return UsageErrorf("--ambiguous-503 %q: want not-graphql (every 503 but the service's own GraphQL errors may follow a commit), all or none", o.Ambiguous503)
	}
	o.amb503 = a
	if o.AlreadySubmitted != "" {
		re, err := regexp.Compile(o.AlreadySubmitted)
		if err != nil {
			return UsageErrorf("--already-submitted: %v", err)
		}
		o.alreadyRE = re
	}
	return nil
}

// uploader runs one upload.
type uploader struct {
	// first is a stream's first bytes and their hash (FirstBytes,
	// FirstSHA256), recorded in every meta file the run writes.
	first *outfile.Meta
	// earlier is a resumed stream's earlier record of its input.
	earlier *outfile.Meta
	// pace is where the pacing of the run a --resume continues settled.
	pace earlierPacing

	env    *Env
	in     *InputOptions
	up     *UploadOptions
	checks *CheckOptions
	creds  Credentials
	log    *slog.Logger
	input  string
	mets   *MetricsOptions
	// simulated: the built-in simulator's run, whose results are its
	// own (an earlier run's under another name is not looked for), and
	// which keeps no ledger unless --ledger names one.
	simulated bool

	// metrics records the run for a monitoring system; summary is the
	// run's summary once it has one, for the metrics' last write.
	metrics *metrics.Recorder
	summary *summary.Summary

	// start is when the run began; outputsChecked is set once its output
	// paths are proven (from then on --summary-json is written whatever
	// stops the run); stopped is why a run stopped before its end, for
	// that summary.
	start          time.Time
	outputsChecked bool
	stopped        string
	// metricsStarted is set once the metrics file is written for this
	// run; sending once the results journal is opened; foreign when the
	// run stopped because its results file belongs to another input
	// (errForeign).
	metricsStarted bool
	sending        bool
	foreign        bool
	// rows is the engine's input, timed for "bound by" (nil before the
	// sending).
	rows *timedSource

	// refusedRows holds, for --refusals, the rows the service refused, by
	// row number, with its (redacted) reason; refusedMu guards it.
	refusedMu   sync.Mutex
	refusedRows map[int]string

	// ledgerOpts are --ledger and its policy. ledger and lrun are the
	// open ledger and this run in it (nil: none); ledgerFailed is set
	// when the ledger could not be opened (the run stopped for it, its
	// metrics are still written).
	ledgerOpts   *LedgerOptions
	ledger       *ledger.Ledger
	lrun         *ledger.Run
	ledgerFailed bool
}

// refused reports whether the run was refused before its first call
// because its files belong to another run or input (a re-drop under a
// {date} pattern with --resume): such a run leaves every output as it was,
// the summary JSON, the metrics and the report, so that the day's good
// figures are never replaced by a zero-count record. (Refusals found
// before the outputs are checked, such as a lock held or an output holding
// another upload's outcomes, write nothing anyway.)
func (u *uploader) refused() bool { return u.foreign && !u.sending }

// startMetrics writes the metrics file for this run and keeps it current
// (once; later calls do nothing). It is called once the checks that may
// refuse the run are behind it, so that a refused run never replaces the
// figures of the run before.
func (u *uploader) startMetrics() error {
	if u.metricsStarted || !u.metrics.Enabled() {
		return nil
	}
	u.metricsStarted = true
	if err := u.metrics.Start(); err != nil {
		return UsageErrorf("--metrics-file %s: %v", u.mets.File, err)
	}
	return nil
}

// logStarted is the run's first line, logged at once, before the input is
// read: a run killed in its first seconds still leaves what it was doing
// In the log.
func (u *uploader) logStarted(resultsPath string) {
	rate := "auto"
	if !u.up.Rate.Auto {
		rate = strconv.FormatFloat(u.up.Rate.PerSecond, 'f', -1, 64)
	}
	attrs := []any{"input", u.input, "endpoint", redact.URL(u.creds.Endpoint), "results", resultsPath,
		"rate", rate, "max_rate", u.up.MaxRate, "concurrency", u.settings(resultsPath)["concurrency"], "resume", u.up.Resume}
	if u.up.Shard != "" {
		attrs = append(attrs, "shard", u.up.shardOf.String())
	}
	if st, err := os.Stat(u.input); err == nil && st.Mode().IsRegular() {
		attrs = append(attrs, "bytes", st.Size())
	}
	u.log.Info("started", attrs...)
}

func (u *uploader) run(ctx context.Context) error {
	u.start = time.Now()
	resultsPath := u.in.resultsPath(u.input)

	u.logStarted(resultsPath)
	if err := u.beginLedger(ctx, resultsPath); err != nil {
		u.ledgerFailed = true
		return err
	}
	lock, err := lockResults(resultsPath, "upload")
	if err != nil {
		return err
	}
	defer func() { lock.Unlock() }()
	if err := u.in.checkOutputs(u.input, resultsPath, u.up.Resume, u.up.Overwrite, "pass --resume to continue it, --results to write elsewhere (a nightly export under a fixed name: "+u.in.redropHint(u.input)+"), or --overwrite to start over ("+u.overwriteSends()+")", u.mets.outputs()...); err != nil {
		if errors.Is(err, outfile.ErrHoldsOutcomes) {
			err = cmp.Or(newInputError(resultsPath, u.input, u.in.redropHint(u.input)), err)
		}
		return err
	}
	u.outputsChecked = true
	if !u.simulated {
		// A results path that moved ({date} after midnight, {sha} after
		// rows were appended, another --shard) must not hide an earlier
		// run of this input: continue it, or refuse. (An earlier run the
		// ledger recorded is the ledger's to settle: earlierResults
		// leaves it out.)
		p, err := u.earlierResults(ctx, resultsPath)
		if err != nil {
			return err
		}
		if p != resultsPath {
			lock.Unlock()
			if lock, err = lockResults(p, "upload"); err != nil {
				return err
			}
			resultsPath, u.in.Results = p, p
		}
	}
	state, err := u.loadPrior(resultsPath)
	if err != nil {
		return err
	}
	if state != nil {
		defer state.Close()
		u.pace = readEarlierPacing(resultsPath, u.up, u.log)
	}

	ic, err := u.prove(ctx, resultsPath, state)
	if err != nil {
		return err
	}
	var limit int64
	var verify *source.Blocks
	if sc := ic.scan; sc != nil {
		limit, verify = sc.Bytes, sc.Blocks
	}

	// A file with no data rows needs no call: the run ends with "no rows"
	// (or exit 0 under --allow-empty) without asking for a token or
	// proving the endpoint.
	empty := ic.scan != nil && ic.scan.Rows == 0
	client, closeClient, err := u.connect(ctx, !empty)
	if err != nil {
		return err
	}
	defer closeClient()
	u.metrics.SetAPI(client.Stats)

	src, err := u.in.open(ctx, u.input, u.env.Stdin, u.log, limit, verify, ic.earlier)
	if err != nil {
		return err
	}
	defer src.Close()

	rows, err := u.streamChecks(ctx, src, ic, state, resultsPath)
	if err != nil {
		return err
	}
	if err := u.startMetrics(); err != nil {
		return err
	}

	var stopMeta func()
	if ic.scan == nil {
		// A stream's identity is on disk before the first call and kept
		// current, so that a run killed at any point leaves it.
		if stopMeta, err = u.streamIdentity(src, ic, resultsPath); err != nil {
			return err
		}
	}

	u.sending = true
	journal, err := report.OpenJournal(resultsPath, u.up.Resume && state != nil)
	if err != nil {
		if stopMeta != nil {
			stopMeta()
		}
		return fmt.Errorf("results file: %w", err)
	}

	res, runErr := u.send(ctx, client, rows, src, resumeFrom{state, ic.decided}, journal)
	if stopMeta != nil {
		stopMeta()
	}
	return u.finish(ctx, res, runErr, src, client, ic, state, resultsPath)
}

// prove reads a file through before the first call (checkInput: every row
// validated, its columns and checksum checked, its identity compared with
// the results file's when resuming) and, once it passes, starts the
// metrics and records the file's identity beside the results file. A
// stream is judged once it is open (streamChecks).
func (u *uploader) prove(ctx context.Context, resultsPath string, state *report.State) (*inputCheck, error) {
	ic, err := u.checkInput(ctx, resultsPath, state)
	if errors.Is(err, errTooManyInvalid) {
		if merr := u.startMetrics(); merr != nil {
			return nil, merr
		}
	}
	if err != nil {
		return nil, tooManyInvalid(err)
	}
	if sc := ic.scan; sc != nil {
		// A file's checks are behind: its metrics start (standard
		// input's once the rows read ahead are judged, streamChecks).
		if err := u.startMetrics(); err != nil {
			return nil, err
		}
		u.log.Info("input checked", "rows", sc.Rows, "invalid", sc.Invalid, "sha256", short(sc.SHA256))
		u.earlierRuns(ctx, sc.SHA256, resultsPath)
		if err := u.writeMeta(resultsPath, &outfile.Meta{Input: u.input, InputSHA256: sc.SHA256, InputBytes: sc.Bytes, Rows: sc.Rows, AllLeadIDs: sc.AllLeadIDs}); err != nil {
			return nil, err
		}
	}
	return ic, nil
}

// finish completes a run the engine has ended with runErr: the input
// closed, --refusals and the summary written; it returns the run's error.
func (u *uploader) finish(ctx context.Context, res upload.Result, runErr error, src *source.Source, client *submitter.Client, ic *inputCheck, state *report.State, resultsPath string) error {
	if err := src.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if errors.Is(runErr, upload.ErrForeignJournal) {
		runErr = UsageErrorf("--resume: %v", runErr)
	}

	sum := &res.Summary
	sum.Resumed = res.Skipped
	u.summary = sum
	if err := u.flushLedger(ctx); err != nil && runErr == nil {
		runErr = err
	}
	if err := u.writeRefusals(ctx); err != nil && runErr == nil {
		runErr = err
	}
	if err := u.writeSummary(sum, src, client.Stats(), client.Outages(), ic, state, resultsPath); err != nil && runErr == nil {
		runErr = err
	}
	if u.up.Resume && res.Skipped > 0 {
		u.log.Info("--resume: rows finished in an earlier run were not sent again", "rows", res.Skipped)
	}
	if res.Compacted {
		u.log.Info("results written", "path", resultsPath)
	}
	return u.exitStatus(ctx, sum, runErr, resultsPath)
}

// tooManyInvalid is err with its exit class: errTooManyInvalid fails the
// run with exit 1 (nothing was sent; the partner's file or mapping is
// broken), any other error is returned as it is.
func tooManyInvalid(err error) error {
	if errors.Is(err, errTooManyInvalid) {
		return &ExitError{Code: ExitRowsFailed, Msg: err.Error()}
	}
	return err
}

// resumeFrom is what a resumed run hands the engine: the earlier run's
// results and what the check before the first call decided of the rows
// it read against them (inputCheck.decided); zero when not resuming.
type resumeFrom struct {
	state   *report.State
	decided *upload.Decided
}

// send runs the engine over rows with the progress display and the
// metrics' row counts, and the first signal's message.
func (u *uploader) send(ctx context.Context, client *submitter.Client, rows upload.Source, src *source.Source, prior resumeFrom, journal *report.Journal) (upload.Result, error) {
	var done, earlier atomic.Int64
	mode := u.up.Progress
	if u.env.JSONLogs && mode == "bar" {
		// --log-format json: nothing on stderr is plain text, a bar
		// included; progress goes out as log records.
		mode = "log"
	}
	prog := newProgress(u.env.Stderr, mode, u.log, &done, src.EstimatedRows)
	prog.earlier = &earlier
	prog.rate = func() *summary.Rate { return rateReport(client.Stats(), u.up.Rate) }
	u.rows = &timedSource{Source: rows}
	rows = u.rows
	prog.bound = (&boundTracker{stats: client.Stats, input: u.rows.Waited, up: u.up}).note
	prog.outage = func() string {
		if o, ok := client.CurrentOutage(); ok {
			return o.Waiting(time.Now())
		}
		return ""
	}
	prog.start()
	cfg := upload.Config{
		Shard:            u.up.shardOf,
		Concurrency:      u.up.workers(),
		DrainTimeout:     u.up.DrainTimeout,
		Gate:             client,
		Abort:            u.env.Abort,
		NoSubmit:         u.up.NoSubmit,
		AlreadySubmitted: u.up.alreadyRE,
		DuplicateOf:      u.up.duplicateOfRE,
		Log:              u.log,
		Stats:            client.Stats,
		OnFinal: func(r lead.Row, before bool) {
			if before {
				earlier.Add(1)
			}
			done.Add(1)
			u.metrics.Observe(r)
			if r.Status == lead.StatusFailed && r.Refused && u.in.Refusals != "" {
				u.refusedMu.Lock()
				u.refusedRows[r.Row] = r.Error
				u.refusedMu.Unlock()
			}
		},
	}
	if prior.state != nil {
		cfg.Prior, cfg.Decided = prior.state, prior.decided
	}
	if u.lrun != nil {
		cfg.Ledger = u.lrun
	}
	defer context.AfterFunc(ctx, func() {
		u.log.Warn("signal received: no new rows are taken; the calls in flight finish (up to --drain-timeout), then the results file and summary are written. " +
			"A second signal cancels the calls in flight at once. Run the same command with --resume to finish the job")
	})()
	defer prog.stop()
	return upload.Run(ctx, cfg, rows, client, journal)
}

// timedSource is the engine's input, timed: Waited is how long the
// engine's reader has waited in Next for the input's rows (reading,
// parsing, and a feed's pauses), what tells a slow input from rows held
// back by the service (boundBy). Next is called by the one reader;
// Waited is safe for concurrent use.
type timedSource struct {
	upload.Source
	waited atomic.Int64 // nanoseconds
}

func (s *timedSource) Next(ctx context.Context) (source.Item, error) {
	start := time.Now()
	it, err := s.Source.Next(ctx)
	s.waited.Add(int64(time.Since(start)))
	return it, err
}

// Waited is the time spent in Next so far; 0 for a nil s.
func (s *timedSource) Waited() time.Duration {
	if s == nil {
		return 0
	}
	return time.Duration(s.waited.Load())
}

// loadPrior loads the results of the earlier run for --resume; nil without
// --resume or when there is no results file yet. The caller closes it.
func (u *uploader) loadPrior(resultsPath string) (*report.State, error) {
	if !u.up.Resume {
		return nil, nil
	}
	st, err := report.LoadState(resultsPath)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// The first run of each night of a nightly job: nothing to warn
		// about.
		u.log.Info("--resume: no results file yet, starting from the first row", "path", resultsPath)
		return nil, nil
	case err != nil:
		return nil, UsageErrorf("--resume: %v", err)
	}
	if n := st.IgnoredPartialLines(); n > 0 {
		u.log.Warn("--resume: ignored a half-written last line of the results file", "lines", n)
	}
	u.log.Info("--resume: results of the earlier run loaded", "rows", st.Len())
	return st, nil
}

// settings records what shaped the run, secrets excluded: camelCase keys,
// typed values (durations as text such as "30s"; the rate "auto" or a
// number).
func (u *uploader) settings(results string) map[string]any {
	s := u.in.settings(u.input, results)
	// User info and query values may be credentials.
	s["endpoint"] = redact.URL(u.creds.Endpoint)
	s["tokenUrl"] = redact.URL(u.creds.TokenURL)
	s["clientId"] = u.creds.ClientID
	s["scope"] = u.creds.Scope
	if u.up.Concurrency.Auto {
		s["concurrency"] = "auto"
	} else {
		s["concurrency"] = u.up.Concurrency.N
	}
	s["maxConcurrency"] = u.up.MaxConcurrency
	if u.up.Rate.Auto {
		s["rate"] = "auto"
	} else {
		s["rate"] = u.up.Rate.PerSecond
	}
	s["maxRate"] = u.up.MaxRate
	s["maxAttempts"] = u.up.MaxAttempts
	s["timeout"] = u.up.Timeout.String()
	s["resume"] = u.up.Resume
	s["overwrite"] = u.up.Overwrite
	s["noSubmit"] = u.up.NoSubmit
	s["drainTimeout"] = u.up.DrainTimeout.String()
	s["maxConsecutiveFailures"] = u.up.MaxConsecutiveFailures
	s["outageWait"] = u.up.OutageWait.String()
	s["maxRetryWait"] = u.up.MaxRetryWait.String()
	s["preflightWait"] = u.up.PreflightWait.String()
	s["createDocument"] = u.up.CreateDocument
	s["submitDocument"] = u.up.SubmitDocument
	s["alreadySubmitted"] = u.up.AlreadySubmitted
	s["duplicateOf"] = u.up.DuplicateOf
	s["leadDocument"] = u.up.LeadDocument
	s["refusalCodes"] = u.up.RefusalCodes
	s["ambiguous503"] = u.up.amb503.String()
	s["shard"] = u.up.shardOf.String()
	s["jobName"] = u.metrics.Job()
	s["ledger"] = "off"
	if o := u.ledgerOpts; o != nil && !o.off(u.simulated) {
		s["ledger"] = redactLedger(cmp.Or(o.Location, "default"))
		if u.ledger != nil {
			s["ledger"] = u.ledger.String()
		}
		s["resend"] = o.Resend
		s["resendChanged"] = o.ResendChanged
	}
	if u.lrun != nil {
		s["ledgerRun"] = u.lrun.ID
	}
	return s
}

// splitCodes is --refusal-codes as a list: never nil, so that an empty
// flag means no code refuses.
func splitCodes(v string) []string {
	codes := []string{}
	for _, c := range strings.Split(v, ",") {
		if c = strings.TrimSpace(c); c != "" {
			codes = append(codes, c)
		}
	}
	return codes
}
