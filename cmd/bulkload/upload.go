package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/report"
	"github.com/bulkload/bulkload/submitter"
)

// uploadOptions are the flags of upload beyond reading and authentication.
type uploadOptions struct {
	concurrency  int
	rate         float64
	maxAttempts  int
	timeout      time.Duration
	drainTimeout time.Duration
	resume       bool
	overwrite    bool
	noSubmit     bool
	createDoc    string
	submitDoc    string
	leadDoc      string
	progress     string
	// alreadySubmitted recognises a submitLead refusal that means the lead
	// is submitted already (an earlier attempt whose answer was lost, or a
	// partner with automatic submission). The interface does not show
	// submitLead's errors, so this is an assumption, and a setting.
	alreadySubmitted string
	alreadyRE        *regexp.Regexp
	// duplicateOf finds, in the note of a createLead answer, the id of the
	// lead it duplicates (the first submatch). The interface does not show
	// how the service reports a duplicate, so this too is a setting. The
	// lead is read back (leadDoc) to check it is the row's own.
	duplicateOf   string
	duplicateOfRE *regexp.Regexp
}

func runUpload(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet("upload", "upload [flags] FILE", e.stderr)
	var (
		in   inputOptions
		auth authOptions
		up   uploadOptions
		logs logOptions
	)
	in.register(fs)
	auth.register(fs)
	logs.register(fs)
	up.register(fs)

	pos, from, err := parseSettings(fs, args, e.getenv, "upload", 1)
	if err != nil {
		return exitFor(e.stderr, err)
	}
	if err := up.check(); err != nil {
		return exitFor(e.stderr, err)
	}
	log, err := logs.logger(e.stderr)
	if err != nil {
		return exitFor(e.stderr, err)
	}

	var creds resolved
	if auth.simulate {
		sim, err := startSim(ctx, log)
		if err != nil {
			return exitFor(e.stderr, err)
		}
		defer sim.close()
		creds = sim.credentials()
		log.Info("simulator started", "endpoint", creds.endpoint, "token_url", creds.tokenURL)
	} else if creds, err = auth.resolve(e.getenv, from, true); err != nil {
		return exitFor(e.stderr, err)
	}

	if auth.simulate && in.results == "" {
		// A simulated run has its own default results file: it can never
		// overwrite a real upload's journal, and, since every --simulate
		// starts a fresh simulator that cannot continue an earlier run, it
		// may overwrite its own.
		in.results = strings.TrimSuffix(in.resultsPath(pos[0]), ".results.csv") + ".simulated.results.csv"
		up.overwrite = !up.resume
	}
	u := &uploader{env: e, in: &in, up: &up, creds: creds, log: log, input: pos[0]}
	code := u.run(ctx)
	return code
}

func (up *uploadOptions) register(fs *flag.FlagSet) {
	fs.IntVar(&up.concurrency, "concurrency", 8, "calls in flight at once")
	fs.Float64Var(&up.rate, "rate", 20, "API calls per second across all workers, createLead, submitLead and retries together (0: unlimited). The service's limits are not published: 20/s is this tool's assumption; a 429 slows the rate automatically")
	fs.IntVar(&up.maxAttempts, "max-attempts", 5, "attempts per call, the first included, for retryable failures (network, 429, 502, 503, 504)")
	fs.DurationVar(&up.timeout, "timeout", 60*time.Second, "time limit of one HTTP attempt (createLead runs a credit pull before it answers)")
	fs.DurationVar(&up.drainTimeout, "drain-timeout", 30*time.Second, "on SIGINT/SIGTERM, how long calls in flight may take to finish")
	fs.BoolVar(&up.resume, "resume", false, "continue from the results file of an earlier run: skip finished rows, submit created ones, resend failed and missing ones")
	fs.BoolVar(&up.overwrite, "overwrite", false, "start over although the results file holds the outcomes of an earlier upload (its leads would be sent again)")
	fs.BoolVar(&up.noSubmit, "no-submit", false, "never call submitLead (partners configured for automatic submission)")
	fs.StringVar(&up.createDoc, "create-document", submitter.DefaultCreateDocument, "GraphQL document of createLead")
	fs.StringVar(&up.submitDoc, "submit-document", submitter.DefaultSubmitDocument, "GraphQL document of submitLead (the interface does not show its arguments: this default is an assumption; it must take $id: String!)")
	fs.StringVar(&up.alreadySubmitted, "already-submitted", `(?i)already submitted`, "regular expression: a submitLead error matching it means the lead is submitted already, so the row counts as submitted (the interface does not show submitLead's errors; empty disables)")
	fs.StringVar(&up.duplicateOf, "duplicate-of", `(?i)duplicate of lead ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`, "regular expression: when a createLead retried after a lost answer is answered as a duplicate, its first submatch is the id of the lead duplicated; if reading that lead (--lead-document) shows it under this row's leadId, it is the row's own and is submitted when qualified (the interface does not show how duplicates are reported; empty disables)")
	fs.StringVar(&up.leadDoc, "lead-document", submitter.DefaultLeadDocument, "GraphQL document that reads a lead by id (permission Lead.Read; the interface does not show it: an assumption; it must take $id: String! and name its result lead)")
	fs.StringVar(&up.progress, "progress", "auto", "progress display: auto (a bar on a terminal, a log line every 10s otherwise), bar, log or off")
}

func (o *uploadOptions) check() error {
	switch {
	case o.concurrency < 1:
		return usageErrorf("--concurrency %d: want at least 1", o.concurrency)
	case o.rate < 0:
		return usageErrorf("--rate %v: want 0 (unlimited) or more", o.rate)
	case o.maxAttempts < 1:
		return usageErrorf("--max-attempts %d: want at least 1", o.maxAttempts)
	case o.timeout <= 0:
		return usageErrorf("--timeout %v: want a positive duration", o.timeout)
	}
	switch o.progress {
	case "auto", "bar", "log", "off":
	default:
		return usageErrorf("--progress %q: want auto, bar, log or off", o.progress)
	}
	if o.duplicateOf != "" {
		re, err := regexp.Compile(o.duplicateOf)
		if err != nil || re.NumSubexp() < 1 {
			return usageErrorf("--duplicate-of %q: want a regular expression whose first group captures the lead id", o.duplicateOf)
		}
		o.duplicateOfRE = re
	}
	if o.alreadySubmitted != "" {
		re, err := regexp.Compile(o.alreadySubmitted)
		if err != nil {
			return usageErrorf("--already-submitted: %v", err)
		}
		o.alreadyRE = re
	}
	return nil
}

// uploader runs one upload.
type uploader struct {
	env   *env
	in    *inputOptions
	up    *uploadOptions
	creds resolved
	log   *slog.Logger
	input string

	client  *submitter.Client
	done    atomic.Int64 // rows with a final status, for the progress display
	skipped atomic.Int64 // rows a resumed run found finished
	// read counts the rows the producer took from the input: every one of
	// them must end with exactly one final status, or the summary's
	// accounting says how many did not (after an interrupt: the rows read
	// but not sent, which --resume sends).
	read atomic.Int64
	// notSent counts rows read but deliberately not sent because the run
	// stopped; the accounting adds them, so that it stays a real check.
	notSent atomic.Int64
}

// job is one valid row for the workers.
type job struct {
	row   report.Row
	input lead.Input
	// prior is the row's last line in the results file of an earlier run
	// when that run created the lead but did not finish submitting it.
	prior *report.Row
}

// line is one line for the results journal. A worker that must not go on
// before the line is on disk (a created lead, before submitLead) waits on
// written.
type line struct {
	row       report.Row
	countOnly bool       // a row finished in an earlier run: count it, write nothing
	written   chan error // when set, the writer answers once the line is written (or not)
}

func (u *uploader) run(ctx context.Context) int {
	e := u.env
	resultsPath := u.in.resultsPath(u.input)

	if err := checkOutputs(u.input, map[string]string{"--results": resultsPath, "--rejects": u.in.rejects, "--summary-json": u.in.summaryJSON}); err != nil {
		return exitFor(e.stderr, err)
	}
	var state *report.State
	if u.up.resume {
		st, err := report.LoadState(resultsPath)
		switch {
		case errors.Is(err, os.ErrNotExist):
			u.log.Warn("--resume: no results file yet, starting from the first row", "path", resultsPath)
		case err != nil:
			return exitFor(e.stderr, usageErrorf("--resume: %v", err))
		default:
			state = st
			defer st.Close()
			if n := st.IgnoredPartialLines(); n > 0 {
				u.log.Warn("--resume: ignored a half-written last line of the results file", "lines", n)
			}
			u.log.Info("--resume: results of the earlier run loaded", "rows", st.Len())
		}
	}

	if !u.up.resume && !u.up.overwrite {
		if err := refuseToOverwrite(resultsPath); err != nil {
			return exitFor(e.stderr, err)
		}
	}

	// Calls in flight outlive the first signal by up to --drain-timeout:
	// workCtx is cut loose from ctx and cancelled only after the drain.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	var drainer sync.WaitGroup
	defer drainer.Wait()
	defer cancelWork()
	drainer.Go(func() {
		select {
		case <-ctx.Done():
		case <-workCtx.Done():
			return
		}
		u.log.Warn("interrupted: no new rows are taken; waiting for calls in flight", "drain_timeout", u.up.drainTimeout)
		t := time.NewTimer(u.up.drainTimeout)
		defer t.Stop()
		select {
		case <-t.C:
			cancelWork()
		case <-workCtx.Done():
		}
	})

	client, err := submitter.New(workCtx, submitter.Config{
		Endpoint:       u.creds.endpoint,
		TokenURL:       u.creds.tokenURL,
		ClientID:       u.creds.clientID,
		ClientSecret:   u.creds.secret,
		Scope:          u.creds.scope,
		Rate:           u.up.rate,
		MaxAttempts:    u.up.maxAttempts,
		CallTimeout:    u.up.timeout,
		CreateDocument: u.up.createDoc,
		SubmitDocument: u.up.submitDoc,
		LeadDocument:   u.up.leadDoc,
		Logger:         u.log,
	})
	if err != nil {
		return exitFor(e.stderr, usageErrorf("%v", err))
	}
	defer client.Close()
	u.client = client

	// A bad credential stops the run before the first row is read.
	authCtx, cancelAuth := context.WithTimeout(ctx, 2*u.up.timeout)
	_, err = client.CheckAuth(authCtx)
	cancelAuth()
	if err != nil {
		return u.authFailure(ctx, err)
	}

	src, err := openSource(ctx, u.input, e.stdin, u.in, u.log)
	if err != nil {
		return exitFor(e.stderr, err)
	}
	defer src.close()

	journal, err := report.OpenJournal(resultsPath, u.up.resume && state != nil)
	if err != nil {
		return exitFor(e.stderr, fmt.Errorf("results file: %w", err))
	}

	sum := &report.Summary{Mode: "upload", Version: version, Start: time.Now(), Settings: u.settings(resultsPath)}
	prog := newProgress(u.env.stderr, u.up.progress, u.log, &u.done, src.estimatedRows)
	prog.start()

	runErr := u.pipeline(ctx, workCtx, src, state, journal, sum)
	prog.stop()

	interrupted := ctx.Err() != nil
	if cerr := journal.Compact(); cerr != nil {
		u.log.Error("compacting the results file failed; the journal is intact and valid for --resume", "path", resultsPath, "err", cerr)
		if runErr == nil {
			runErr = cerr
		}
	}
	if err := src.close(); err != nil && runErr == nil {
		runErr = err
	}

	st := client.Stats()
	sum.RowsRead = int(u.read.Load())
	sum.NotSent = int(u.notSent.Load())
	sum.End = time.Now()
	sum.Interrupted = interrupted
	sum.InputSHA256 = src.inputSHA256()
	sum.APICalls = int(st.Calls)
	sum.Retries = int(st.Retries)
	sum.TokensFetched = int(st.TokensFetched)
	if werr := writeSummary(e.stderr, sum, u.in.summaryJSON); werr != nil && runErr == nil {
		runErr = werr
	}
	if u.up.resume {
		u.log.Info("--resume: rows finished in an earlier run were not sent again", "rows", u.skipped.Load())
	}
	u.log.Info("results written", "path", resultsPath)

	switch {
	case submitter.IsFatal(runErr):
		return u.authFailure(ctx, runErr)
	case interrupted:
		fmt.Fprintf(e.stderr, "bulkload: interrupted; run the same command with --resume to finish\n")
		return exitInterrupted
	case runErr != nil:
		return exitFor(e.stderr, runErr)
	}
	return rowsStatus(sum)
}

func (u *uploader) authFailure(ctx context.Context, err error) int {
	switch {
	case submitter.IsFatal(err):
		fmt.Fprintf(u.env.stderr, "bulkload: authentication failed: %v\n", err)
		return exitAuth
	case ctx.Err() != nil:
		return exitInterrupted
	default:
		fmt.Fprintf(u.env.stderr, "bulkload: cannot get an access token: %v\n", err)
		return exitAuth
	}
}

// pipeline reads rows, sends the valid ones through a pool of workers and
// journals every outcome. ctx ends on the first signal (stop reading);
// workCtx ends when the drain time is over or on a fatal error.
func (u *uploader) pipeline(ctx, workCtx context.Context, src *source, state *report.State, journal *report.Journal, sum *report.Summary) error {
	// runCtx ends at the first fatal error, wherever it happens: refused
	// credentials (a worker), an unreadable input (the producer), an
	// unwritable results file (the writer).
	runCtx, failRun := context.WithCancelCause(workCtx)
	defer failRun(nil)
	g, gctx := errgroup.WithContext(runCtx)
	jobs := make(chan job, u.up.concurrency)
	lines := make(chan line, 4*u.up.concurrency)

	// Producer: the only reader of the input. It stops taking rows at the
	// first signal or when the run fails; readCtx ends on either, so that an
	// idle standard input holds off neither.
	readCtx, cancelRead := context.WithCancel(gctx)
	defer cancelRead()
	defer context.AfterFunc(ctx, cancelRead)()
	g.Go(func() error {
		defer close(jobs)
		for {
			if ctx.Err() != nil || gctx.Err() != nil {
				return nil
			}
			it, err := src.next(readCtx)
			if errors.Is(err, io.EOF) || ctx.Err() != nil || gctx.Err() != nil {
				return nil // end of input, or interrupted: calls in flight drain
			}
			if err != nil {
				return err
			}
			u.read.Add(1)
			j, l, err := u.plan(it, state)
			if err != nil {
				return err
			}
			if l != nil {
				lines <- *l
				continue
			}
			select {
			case jobs <- j:
			case <-gctx.Done():
				u.notSent.Add(1)
				return nil
			}
		}
	})

	// Pool: an errgroup of exactly --concurrency long-lived workers (a
	// goroutine per row would grow a fresh stack through the HTTP path for
	// every row). A row's failure is a value; only a fatal error is
	// returned, and it cancels the others.
	g.Go(func() error {
		defer close(lines)
		pool, pctx := errgroup.WithContext(gctx)
		pool.SetLimit(u.up.concurrency)
		for range u.up.concurrency {
			pool.Go(func() error {
				for j := range jobs {
					if ctx.Err() != nil || pctx.Err() != nil {
						u.notSent.Add(1) // interrupted or failing: --resume sends it
						continue
					}
					if err := u.work(pctx, j, lines); err != nil {
						return err
					}
				}
				return nil
			})
		}
		err := pool.Wait()
		for range jobs {
			// A worker that failed left jobs behind: drain them so the
			// producer never blocks.
			u.notSent.Add(1)
		}
		return err
	})

	// Writer: the one goroutine that owns the results journal. Every line
	// goes to the OS as it comes (a write syscall is nothing next to an API
	// call), so neither a stall nor a kill loses a finished row. A write
	// error fails the run at once; the writer drains what is still coming so
	// that no worker blocks, but counts none of it: it was not recorded.
	g.Go(func() error {
		var writeErr error
		for l := range lines {
			if writeErr == nil && !l.countOnly {
				if err := journal.AppendDurable(l.row); err != nil {
					writeErr = fmt.Errorf("write results file: %w (the run stops: an outcome that cannot be recorded would be sent again by --resume)", err)
					failRun(writeErr)
				}
			}
			if l.written != nil {
				l.written <- writeErr
			}
			if writeErr != nil || !l.row.Status.Final() {
				continue
			}
			sum.Count(l.row)
			u.done.Add(1)
		}
		return writeErr
	})
	return g.Wait()
}

// plan decides what to do with one row: a line to journal now (invalid, or
// finished in an earlier run) or a job for the workers.
func (u *uploader) plan(it item, state *report.State) (job, *line, error) {
	var prior report.Row
	var hasPrior bool
	if state != nil {
		prior, hasPrior = state.Get(it.row.Row)
	}
	if hasPrior && prior.LeadID != it.row.LeadID {
		return job{}, nil, usageErrorf("--resume: the results file does not belong to this input: row %d has leadId %q there but %q here", it.row.Row, prior.LeadID, it.row.LeadID)
	}
	if it.row.Status == report.StatusInvalid {
		if hasPrior && prior.Status == report.StatusInvalid {
			// Written by the earlier run; counted by this run's errors,
			// which are values (the file holds only their text).
			return job{}, &line{row: it.row, countOnly: true}, nil
		}
		return job{}, &line{row: it.row}, nil
	}
	if hasPrior {
		switch prior.Status {
		case report.StatusProcessed, report.StatusSubmitted:
			u.skipped.Add(1)
			return job{}, &line{row: prior, countOnly: true}, nil
		case report.StatusCreated, report.StatusSubmitFailed:
			p := prior
			return job{row: it.row, input: it.input, prior: &p}, nil, nil
		}
	}
	return job{row: it.row, input: it.input}, nil, nil
}

// work sends one row: createLead, then submitLead for a qualified lead. It
// returns an error only when the run must stop.
func (u *uploader) work(ctx context.Context, j job, lines chan<- line) error {
	row := j.row
	row.Status, row.Error = "", ""
	if j.prior != nil {
		// Created by an earlier run: never create it again.
		row.ID, row.ResultCode, row.BidValue, row.Note = j.prior.ID, j.prior.ResultCode, j.prior.BidValue, j.prior.Note
		row.Attempts = j.prior.Attempts
	} else {
		res, call, err := u.client.Create(ctx, j.input)
		row.Attempts = call.Attempts
		if err != nil {
			if submitter.IsFatal(err) {
				return err
			}
			row.Status, row.Error = report.StatusFailed, err.Error()
			u.log.Debug("createLead failed", "row", row.Row, "leadId", row.LeadID, "err", err)
			lines <- line{row: row}
			return nil
		}
		if call.Ambiguous {
			if res, err = u.ownLead(ctx, row.LeadID, res, call.Attempts); err != nil {
				return err
			}
		}
		row.ID, row.ResultCode, row.Note = res.ID, res.ResultCode, res.Note
		if res.BidValue != nil {
			row.BidValue = *res.BidValue
		}
		if !lead.NeedsSubmission(res.ResultCode) || u.up.noSubmit {
			row.Status = report.StatusProcessed
			lines <- line{row: row}
			return nil
		}
		// The lead is worth a bid: its id is on disk before submitLead.
		created := row
		created.Status = report.StatusCreated
		written := make(chan error, 1)
		lines <- line{row: created, written: written}
		if err := <-written; err != nil {
			// Not on disk: submitting now could lose track of the lead. Its
			// id goes to the log, the one record left, for reconciliation.
			u.log.Error("lead created but its results line could not be written", "row", row.Row, "leadId", row.LeadID, "id", row.ID, "resultCode", row.ResultCode)
			return err
		}
	}
	if u.up.noSubmit {
		row.Status = report.StatusProcessed
		lines <- line{row: row}
		return nil
	}
	res, _, err := u.client.Submit(ctx, row.ID)
	if err != nil && u.submittedAlready(err) {
		row.Status = report.StatusSubmitted
		row.Note = "submitted (submitLead answered that the lead already was: an earlier attempt's answer was lost, or the partner submits automatically)"
		lines <- line{row: row}
		return nil
	}
	if err != nil {
		if submitter.IsFatal(err) {
			// Record what is known so that --resume submits it later.
			row.Status, row.Error = report.StatusSubmitFailed, err.Error()
			lines <- line{row: row}
			return err
		}
		row.Status, row.Error = report.StatusSubmitFailed, err.Error()
		lines <- line{row: row}
		return nil
	}
	row.Status = report.StatusSubmitted
	if res.Note != "" {
		row.Note = res.Note
	}
	lines <- line{row: row}
	return nil
}

// refuseToOverwrite fails when the results file holds the outcomes of an
// earlier upload: starting over would send its leads again. The results of a
// validate run (valid, invalid) may be overwritten.
func refuseToOverwrite(path string) error {
	st, err := report.LoadState(path)
	if err != nil {
		return nil // missing or not a results file: nothing to lose
	}
	defer st.Close()
	sent := 0
	for status, n := range st.Counts() {
		if status != report.StatusValid && status != report.StatusInvalid {
			sent += n
		}
	}
	if sent > 0 {
		return usageErrorf("results file %s holds the outcomes of an earlier upload (%d rows sent): pass --resume to continue it, --results to write elsewhere, or --overwrite to start over and send its leads again", path, sent)
	}
	return nil
}

// duplicateID returns the id of the lead a createLead answer says this one
// duplicates, or "" when it says no such thing.
func (u *uploader) duplicateID(res lead.Result) string {
	if u.up.duplicateOfRE == nil || lead.NeedsSubmission(res.ResultCode) {
		return ""
	}
	m := u.up.duplicateOfRE.FindStringSubmatch(res.Note)
	if len(m) < 2 || m[1] == res.ID {
		return ""
	}
	return m[1]
}

// ownLead settles a createLead that was sent again after an answer was
// lost. If the answer says the lead duplicates lead X, and X is this row's
// own (the service holds it under this row's leadId), then X is what the
// first attempt created: its result, perhaps qualified and worth a bid, is
// the row's, and the caller goes on to journal and submit it. Otherwise the
// answer stands, with a note for a person to reconcile. An error is returned
// only when the run must stop.
func (u *uploader) ownLead(ctx context.Context, leadID string, res lead.Result, attempts int) (lead.Result, error) {
	sent := "bulkload: createLead was sent " + strconv.Itoa(attempts) + " times after an answer was lost"
	orig := u.duplicateID(res)
	if orig == "" || leadID == "" {
		res.Note += " [" + sent + "; a duplicate result may be this row's own earlier attempt: reconcile by leadId]"
		return res, nil
	}
	own, _, err := u.client.Lead(ctx, orig)
	switch {
	case submitter.IsFatal(err):
		return res, err
	case err != nil:
		res.Note += " [" + sent + "; could not read lead " + orig + " to tell whether it is this row's (" + err.Error() + "): reconcile by leadId]"
		return res, nil
	case own.PartnerLeadID != leadID:
		res.Note += " [" + sent + "; lead " + orig + " belongs to leadId " + own.PartnerLeadID + ", not to this row: a genuine duplicate]"
		return res, nil
	}
	own.Note += " [" + sent + "; this is the lead the first attempt created, answered as a duplicate on the retry]"
	return own, nil
}

// submittedAlready reports whether a submitLead error says the lead is
// submitted already.
func (u *uploader) submittedAlready(err error) bool {
	var ce *submitter.CallError
	if u.up.alreadyRE == nil || !errors.As(err, &ce) {
		return false
	}
	for _, ge := range ce.Errors {
		if u.up.alreadyRE.MatchString(ge.Message) {
			return true
		}
	}
	return false
}

// settings records what shaped the run, secrets excluded.
func (u *uploader) settings(results string) map[string]string {
	s := u.in.settings(u.input, results)
	s["endpoint"] = u.creds.endpoint
	s["token_url"] = u.creds.tokenURL
	s["client_id"] = u.creds.clientID
	s["scope"] = u.creds.scope
	s["concurrency"] = strconv.Itoa(u.up.concurrency)
	s["rate"] = strconv.FormatFloat(u.up.rate, 'f', -1, 64)
	s["max_attempts"] = strconv.Itoa(u.up.maxAttempts)
	s["timeout"] = u.up.timeout.String()
	s["resume"] = strconv.FormatBool(u.up.resume)
	s["no_submit"] = strconv.FormatBool(u.up.noSubmit)
	s["drain_timeout"] = u.up.drainTimeout.String()
	s["create_document"] = u.up.createDoc
	s["submit_document"] = u.up.submitDoc
	s["already_submitted"] = u.up.alreadySubmitted
	s["duplicate_of"] = u.up.duplicateOf
	s["lead_document"] = u.up.leadDoc
	return s
}
