package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/report"
	"github.com/bulkload/bulkload/source"
	"github.com/bulkload/bulkload/upload"
)

// streamChecks judges an input that was not read through before the first
// call (standard input, a pipe): its first rows are read ahead and checked
// (columns, invalid share, the results file's rows when resuming), unless
// --max-invalid 100% turns that off, and a CSV header is checked for the
// required columns. It returns the rows to upload, or the exit status when
// the run must stop (ok false).
func (u *uploader) streamChecks(ctx context.Context, src *source.Source, ic *inputCheck, state *report.State, resultsPath string) (upload.Source, error) {
	if ic.scan == nil && (u.checks.readAhead() || ic.earlier != nil) {
		// Standard input cannot be read twice: its first rows are read
		// and judged before the first call (unless --max-invalid 100%
		// turns that off: then rows stream from the first).
		ahead, err := source.ReadAhead(ctx, src, stdinCheckRows)
		if err != nil {
			return nil, err
		}
		if err := ahead.Err(); err != nil {
			return nil, UsageErrorf("%v; nothing was sent", err)
		}
		kept := 0
		if state != nil {
			// The rows read ahead are decided against the results file
			// before the first call, as a file's are, and the engine is
			// handed the decisions: a foreign journal's error comes alone.
			check := upload.NewCheck(state)
			for _, it := range ahead.Items() {
				_, err := check.Match(it.Row)
				var fe *upload.ForeignRowError
				if errors.As(err, &fe) {
					return nil, foreignErrorf("--resume: the results file %s does not belong to this input: %s. Nothing was sent. Give each run its own results file: %s; or pass --overwrite instead of --resume to start over", resultsPath, fe.Detail(), u.in.redropHint(u.input))
				}
			}
			kept, ic.decided = check.Kept(), check.Decided()
		}
		if err := u.checks.judge(u.input, src.Provided(), src.Unknown(), ahead.Rows(), ahead.Invalid()-kept, ahead.Reasons(), " (the first rows)"); err != nil {
			return nil, tooManyInvalid(err)
		}
		return ahead, nil
	} else if ic.scan == nil && len(src.Provided()) > 0 {
		// Streamed as it comes: a CSV header is all there is to check.
		if err := u.checks.missingRequired(u.input, src.Provided(), src.Unknown()); err != nil {
			return nil, err
		}
	}

	return src, nil
}

// metaEvery is how often a streamed input's identity is brought up to
// date beside the results file while the run reads it.
const metaEvery = 2 * time.Second

// streamIdentity proves, for a resumed stream, that its first bytes hash
// as the earlier run's did, and then records the stream's identity beside
// the results file before the first call (its first bytes and their hash,
// kept for later resumes) and keeps it current every metaEvery until the
// returned stop is called (before src is closed). It returns a nil stop
// and the run's error when it must not go on: nothing was sent.
func (u *uploader) streamIdentity(src *source.Source, ic *inputCheck, resultsPath string) (stop func(), err error) {
	n, sha, prefix := src.Identity()
	first := &outfile.Meta{FirstBytes: n, FirstSHA256: sha}
	if e := ic.earlier; e != nil {
		if prefix != e.FirstSHA256 {
			return nil, UsageErrorf("--resume: the results file %s does not belong to this input: its first %d bytes hash otherwise than those of the earlier run's (written for %s, %d rows read, %s). Nothing was sent. For a new export under the same name, give each run its own results file (--results 'runs/{name}-{date}.results.csv'), or pass --overwrite instead of --resume to start over ("+u.overwriteSends()+")",
				resultsPath, e.FirstBytes, e.Input, e.Rows, e.Written.Local().Format(time.DateTime))
		}
		first.FirstBytes, first.FirstSHA256 = e.FirstBytes, e.FirstSHA256
	}
	u.first = first
	u.earlier = ic.earlier
	record := func() error {
		n, sha, _ := src.Identity()
		return u.writeMeta(resultsPath, u.streamMeta(src, &outfile.Meta{Input: u.input, InputSHA256: "partial:" + sha, InputBytes: n,
			Rows: int(src.RecordsTaken()), AllLeadIDs: src.AllLeadIDsSoFar()}))
	}
	if err := record(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(cmp.Or(u.env.Deps.IdentityEvery, metaEvery))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := record(); err != nil {
					u.log.Warn("could not bring the input's identity up to date beside the results file", "err", err)
				}
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}, nil
}

// streamMeta completes a stream's identity m: streamed, with its first
// bytes and their hash. Until a resumed run has proven the bytes the
// earlier run read (src.CheckPassed), the earlier run's identity stands:
// a run that read less leaves it to a later run to prove, and one that
// turned out to read another input must not record that input's.
func (u *uploader) streamMeta(src *source.Source, m *outfile.Meta) *outfile.Meta {
	m.Streamed = true
	if u.first != nil {
		m.FirstBytes, m.FirstSHA256 = u.first.FirstBytes, u.first.FirstSHA256
	}
	if e := u.earlier; e != nil && (m.InputBytes < e.InputBytes || !src.CheckPassed()) {
		m.InputSHA256, m.InputBytes, m.Rows = e.InputSHA256, e.InputBytes, e.Rows
	}
	return m
}

// inputCheck is what the check before an upload found.
type inputCheck struct {
	scan *source.Scan // nil for standard input
	// earlier is, for a resumed stream, the earlier run's record of its
	// Input, whose first bytes (FirstBytes, FirstSHA256) this run must
	// prove before its first call; nil otherwise.
	earlier *outfile.Meta
	// decided is what the check decided of the rows it read against the
	// earlier run's results, handed to the engine (upload.Config.Decided);
	// nil when not resuming or when it found a row of another input.
	decided *upload.Decided
}

// checkInput reads a regular file through once before the first call: every
// row validated (--max-invalid), the required columns, a compressed file's
// checksum, and, when resuming, that the results file belongs to this
// Input. It returns a usage error (exit 2), errTooManyInvalid (exit 1), or a
// read error; nothing has been sent when it fails.
func (u *uploader) checkInput(ctx context.Context, resultsPath string, state *report.State) (*inputCheck, error) {
	var meta *outfile.Meta
	if state != nil {
		m, err := outfile.ReadMeta(resultsPath)
		switch {
		case err == nil:
			meta = m
		case !errors.Is(err, fs.ErrNotExist):
			// There, but not a record bulkload wrote (damaged, edited,
			// or replaced by another output): resuming without the
			// check could continue another input's run.
			return nil, UsageErrorf("--resume: %v; nothing was sent", err)
		default:
			u.log.Warn("--resume: the results file has no record of its input (written before bulkload kept one); rows are matched by leadId and number", "path", outfile.MetaPath(resultsPath))
		}
	}
	if streamed(u.input) {
		if state == nil || state.Len() == 0 {
			return &inputCheck{}, nil
		}
		switch {
		case meta == nil:
			return nil, UsageErrorf("--resume from standard input or a pipe: the results file %s has no record of the input it was written for (%s is missing), so this input cannot be proven the same: nothing was sent. Pass --overwrite instead of --resume to start over ("+u.overwriteSends()+"), or give this input its own results file", resultsPath, outfile.MetaPath(resultsPath))
		case !meta.AllLeadIDs:
			return nil, UsageErrorf("--resume from standard input or a pipe: the earlier run's rows had no leadId each, so this input cannot be matched to them row by row; save the input to a file and resume with the file")
		case meta.Streamed && meta.FirstBytes > 0:
			return &inputCheck{earlier: meta}, nil
		}
		return &inputCheck{}, nil
	}
	cfg, err := u.in.sourceConfig(u.log)
	if err != nil {
		return nil, err
	}
	if meta != nil {
		cfg.PrefixAt = meta.InputBytes
	}
	var mismatch string
	maxPrior := 0
	var check *upload.Check
	if state != nil {
		maxPrior = state.MaxRow()
		check = upload.NewCheck(state)
	}
	visit := func(it source.Item) error {
		if check == nil || mismatch != "" {
			return nil
		}
		var fe *upload.ForeignRowError
		if _, err := check.Match(it.Row); errors.As(err, &fe) {
			mismatch = fe.Detail()
		}
		return nil
	}
	scan, err := source.ScanInput(ctx, u.input, cfg, visit)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, UsageErrorf("%v; nothing was sent", flagHint(err))
	}
	if state != nil && state.Len() > 0 {
		if err := u.sameInput(resultsPath, meta, scan, mismatch, maxPrior); err != nil {
			return nil, err
		}
	}
	kept := 0
	if check != nil {
		kept = check.Kept()
	}
	if err := u.checks.judge(u.input, scan.Provided, scan.Unknown, scan.Rows, scan.Invalid-kept, scan.Reasons, ""); err != nil {
		return nil, err
	}
	return &inputCheck{scan: scan, decided: check.Decided()}, nil
}

// sameInput decides whether a resumed run's input is the one its results
// file was written for: the same bytes, the same bytes with rows appended,
// or, when every row has a leadId, rows that all match the journal's by
// leadId. Otherwise the results file belongs to another input and the run
// stops with that error alone.
func (u *uploader) sameInput(resultsPath string, meta *outfile.Meta, scan *source.Scan, mismatch string, maxPrior int) error {
	if meta != nil {
		switch {
		case meta.InputSHA256 == scan.SHA256:
			return nil
		case scan.PrefixSHA256 != "" && scan.PrefixSHA256 == meta.InputSHA256:
			u.log.Info("--resume: the input grew since the earlier run; its first bytes are unchanged, the rows appended are sent", "earlier_bytes", meta.InputBytes, "bytes", scan.Bytes)
			return nil
		}
	}
	if mismatch == "" && maxPrior <= scan.Rows && (scan.AllLeadIDs || meta == nil) {
		if meta != nil {
			u.log.Warn("--resume: the input differs from the earlier run's, but every row matches its results line by leadId", "earlier_sha256", meta.InputSHA256, "sha256", scan.SHA256)
		}
		return nil
	}
	var why string
	switch {
	case mismatch != "":
		why = mismatch
	case maxPrior > scan.Rows:
		why = fmt.Sprintf("the results file has rows up to %d, the input only %d: rows were deleted", maxPrior, scan.Rows)
	default:
		why = "the input has rows without a leadId, so an inserted, deleted or changed row cannot be matched"
	}
	earlier := ""
	if meta != nil {
		earlier = fmt.Sprintf(" (written for %s, sha256 %s, %d rows, %s)", meta.Input, short(meta.InputSHA256), meta.Rows, meta.Written.Local().Format(time.DateTime))
	}
	return foreignErrorf("--resume: the results file %s does not belong to this input%s: this input has sha256 %s and %d rows; %s. Nothing was sent. For a new export under the same name, give each input its own results file: %s; or pass --overwrite instead of --resume to start over ("+u.overwriteSends()+")",
		resultsPath, earlier, short(scan.SHA256), scan.Rows, why, u.in.redropHint(u.input))
}

// newInputError explains a results file that holds the outcomes of an
// upload of another input (a new export under the same name: night 2 of a
// nightly job); nil when it is this input's, or unknown. hint says how to
// give each input its own files (inputOptions.redropHint).
func newInputError(resultsPath, input, hint string) error {
	meta, err := outfile.ReadMeta(resultsPath)
	if err != nil || streamed(input) {
		return nil
	}
	sha, err := fileSHA256(input)
	if err != nil || sha == meta.InputSHA256 {
		return nil
	}
	return foreignErrorf("--results %s holds the outcomes of an upload of another input (%s, sha256 %s, %d rows, %s); this %s (sha256 %s) is a new file under that name: nothing was sent. Give each input its own results file: %s; or pass --overwrite to replace it",
		resultsPath, meta.Input, short(meta.InputSHA256), meta.Rows, meta.Written.Local().Format(time.DateTime), input, short(sha), hint)
}

// writeMeta records the input's identity m beside the results file (a
// file's before the first call; a stream's then, kept current, and at the
// end), stamped with the time, the version, the run's shard and its
// endpoint: a run whose results path moved finds its earlier run by them
// (findEarlier).
func (u *uploader) writeMeta(resultsPath string, m *outfile.Meta) error {
	m.Written, m.Version = time.Now().UTC(), ReadBuildInfo().Version
	m.Shard, m.Endpoint = u.up.shardOf.String(), redact.URL(u.creds.Endpoint)
	err := outfile.WriteMeta(resultsPath, m)
	if err != nil {
		return fmt.Errorf("results file: %w", err)
	}
	u.log.Debug("input identity recorded", "path", outfile.MetaPath(resultsPath))
	return nil
}

// short cuts a SHA-256 to 12 hex digits for a message.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// streamed reports whether the input is read only once: standard input,
// or a file that is not a regular file (a named pipe, a device).
func streamed(input string) bool {
	if input == "-" {
		return true
	}
	st, err := os.Stat(input)
	return err == nil && !st.Mode().IsRegular()
}

// redropHint names a --results pattern under which this run would have
// had files of its own: the one given (or the default) with {sha} added,
// so that each distinct input under the same name (a partner's re-drop the
// same day) gets its own results, rejects and summary while the same input
// still resumes; standard input, which has no {sha}, gets {time}.
func (o *InputOptions) redropHint(input string) string {
	t := o.resultsTemplate
	if t == "" {
		t = filepath.Join(filepath.Dir(input), "{name}"+cmp.Or(o.OutputSuffix, ".results.csv"))
		if input == "-" {
			t = "runs/{name}" + cmp.Or(o.OutputSuffix, ".results.csv")
		}
	}
	add := "{sha}"
	if streamed(input) {
		add = "{time}"
	}
	if !strings.Contains(t, add) {
		if !strings.Contains(t, "{date}") {
			add = "{date}-" + add
		}
		dir, base := filepath.Split(t)
		stem, ext := base, ""
		for _, suffix := range []string{".results.csv", ".results.jsonl", ".validation.csv", ".csv", ".jsonl"} {
			if s, ok := strings.CutSuffix(base, suffix); ok {
				stem, ext = s, suffix
				break
			}
		}
		t = dir + stem + "-" + add + ext
	}
	return fmt.Sprintf("--results '%s' (the same placeholders in --rejects and --summary-json: each distinct input gets its own files, the same input resumes its own)", t)
}
