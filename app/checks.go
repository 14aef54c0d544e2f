package app

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/report"
	"github.com/bulkload/bulkload/source"
	"github.com/bulkload/bulkload/summary"
	"github.com/bulkload/bulkload/upload"
)

// CheckOptions are the flags of the checks an input passes before anything
// is sent: required columns, the share of invalid rows, an empty file.
type CheckOptions struct {
	requireColumns string
	allowEmpty     bool
	maxInvalid     string // upload only
	// strict makes any invalid row fail the upload (exit 1); without it,
	// invalid rows within --max-invalid are the partner's to fix: reported
	// (summary, metrics, --rejects) and the run exits 0. Upload only:
	// validate always fails on an invalid row, finding them is its job.
	strict bool

	required []lead.Field
	// maxRatio, when maxCount is -1, is the largest share of invalid rows
	// allowed; otherwise maxCount is the largest number.
	maxRatio float64
	maxCount int
}

// alwaysRequired are the columns without which every row is invalid: the
// interface's one required field, and the consent without which the service
// refuses a lead.
func alwaysRequired() []lead.Field { return []lead.Field{lead.DateOfBirth, lead.TermsConsent} }

// stdinCheckRows is how many rows of standard input --max-invalid looks at
// before the first call.
const stdinCheckRows = 1000

// Register registers the checks' flags on fs; upload adds upload's own
// (--max-invalid, --strict).
func (o *CheckOptions) Register(fs *flag.FlagSet, upload bool) {
	fs.StringVar(&o.requireColumns, "require-columns", "", "fields the input must have a column for, besides dateOfBirth and termsConsent (eg socialSecurityNumber)")
	fs.BoolVar(&o.allowEmpty, "allow-empty", false, "exit 0 for an input with a header and no rows (default: exit 1, \"no rows\")")
	if upload {
		fs.StringVar(&o.maxInvalid, "max-invalid", "20%", "send nothing when more rows than this are invalid, a share (5%) or a count (50); fewer do not fail the run")
		fs.BoolVar(&o.strict, "strict", false, "exit 1 on any invalid row, even within --max-invalid (default: reported, not failed)")
	}
}

// RegisterFor returns register for the command list (help, completion).
func (o *CheckOptions) RegisterFor(upload bool) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) { o.Register(fs, upload) }
}

// check parses the flags' values.
func (o *CheckOptions) check() error {
	o.required = alwaysRequired()
	for name := range strings.SplitSeq(o.requireColumns, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		f, ok := lead.FieldByName(name)
		if !ok || f == lead.LeadSourceID {
			return UsageErrorf("--require-columns: %q is not a LeadInput field (for example socialSecurityNumber, cellPhone)", name)
		}
		o.required = append(o.required, f)
	}
	o.maxCount, o.maxRatio = -1, 1
	if v := strings.TrimSpace(o.maxInvalid); v != "" {
		if pct, ok := strings.CutSuffix(v, "%"); ok {
			r, err := strconv.ParseFloat(pct, 64)
			if err != nil || r < 0 || r > 100 {
				return UsageErrorf("--max-invalid %q: want a share from 0%% to 100%% or a count of rows", o.maxInvalid)
			}
			o.maxRatio = r / 100
		} else {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return UsageErrorf("--max-invalid %q: want a share from 0%% to 100%% or a count of rows", o.maxInvalid)
			}
			o.maxCount = n
		}
	}
	return nil
}

// tooManyInvalid reports whether invalid rows out of rows exceed
// --max-invalid.
func (o *CheckOptions) tooManyInvalid(invalid, rows int) bool {
	if o.maxCount >= 0 {
		return invalid > o.maxCount
	}
	return rows > 0 && float64(invalid) > o.maxRatio*float64(rows)
}

// readAhead reports whether standard input's first rows are held for
// --max-invalid before the first call: not when it allows every row.
func (o *CheckOptions) readAhead() bool { return o.maxCount >= 0 || o.maxRatio < 1 }

// limitText describes --max-invalid for a message.
func (o *CheckOptions) limitText() string {
	if o.maxCount >= 0 {
		return strconv.Itoa(o.maxCount) + " rows"
	}
	return strconv.FormatFloat(o.maxRatio*100, 'f', -1, 64) + "%"
}

// missingFields are the LeadInput fields no column provides, by name.
func missingFields(provided []lead.Field) []string {
	var have [lead.NumFields]bool
	for _, f := range provided {
		have[f] = true
	}
	out := []string{}
	for f := range lead.NumFields {
		if !have[f] && f != lead.LeadSourceID {
			out = append(out, f.String())
		}
	}
	return out
}

// missingRequired refuses an input without a column for a required field,
// naming what is missing and the unknown columns that might be meant.
func (o *CheckOptions) missingRequired(input string, provided []lead.Field, unknown []string) error {
	var have [lead.NumFields]bool
	for _, f := range provided {
		have[f] = true
	}
	var missing []string
	for _, f := range o.required {
		if !have[f] {
			missing = append(missing, f.String())
		}
	}
	if len(missing) == 0 {
		return nil
	}
	hint := "The input has no unknown columns either: the export lacks them"
	if len(unknown) > 0 {
		hint = "Unknown columns, one of which may be meant: " + strings.Join(unknown, ", ") + "; map it with --mapping (columns: {\"NAME\": " + missing[0] + "})"
	}
	return UsageErrorf("%s has no column for %s (required); nothing was sent. %s", inputLabel(input), strings.Join(missing, ", "), hint)
}

// inputLabel names the input in a message.
func inputLabel(input string) string {
	if input == "-" {
		return "standard input"
	}
	return input
}

// setColumns fills the summary's column lists, empty or not.
func setColumns(sum *summary.Summary, provided []lead.Field, unknown []string) {
	sum.UnknownColumns = append([]string{}, unknown...)
	sum.MissingFields = missingFields(provided)
}

// noRows ends a run whose input had no rows (done): with an ExitError of
// status 1, or with nil under --allow-empty. done is false when the input
// had rows.
func (o *CheckOptions) noRows(input string, sum *summary.Summary) (done bool, err error) {
	if sum.RowsRead != 0 || sum.Interrupted {
		return false, nil
	}
	if o.allowEmpty {
		return true, nil
	}
	return true, exitErrorf(ExitRowsFailed, "no rows: %s has no data rows (pass --allow-empty when an empty export is normal)", input)
}

// errForeign marks a usage error that refuses a run because its results
// file belongs to another input or run: such a run replaces none of that
// run's outputs (uploader.refused).
var errForeign = errors.New("belongs to another run")

// foreignErrorf is UsageErrorf for a refusal of another run's files.
func foreignErrorf(format string, args ...any) error {
	return &foreignError{UsageErrorf(format, args...)}
}

type foreignError struct{ error }

func (e *foreignError) Unwrap() []error { return []error{e.error, errForeign} }

// errTooManyInvalid stops an upload before its first call.
var errTooManyInvalid = errors.New("too many invalid rows")

// tooManyInvalidError prints why nothing was sent: the counts and the top
// reasons.
func (o *CheckOptions) tooManyInvalidError(input string, invalid, rows int, reasons lead.Reasons, of string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d of %d rows%s are invalid, more than --max-invalid %s: nothing was sent (a systematic break: a renamed column, a wrong --mapping?). Top reasons:", input, invalid, rows, of, o.limitText())
	for _, r := range reasons.Top(5) {
		fmt.Fprintf(&b, "\n  %8d  %s", r.Count, r.Reason)
	}
	b.WriteString("\nFix the file or the mapping (bulkload validate shows every row), or raise --max-invalid")
	return fmt.Errorf("%w: %s", errTooManyInvalid, b.String())
}

// inputCheck is what the check before an upload found.
type inputCheck struct {
	scan *source.Scan // nil for standard input
	// earlier is, for a resumed stream, the earlier run's record of its
	// Input, whose first bytes (FirstBytes, FirstSHA256) this run must
	// prove before its first call; nil otherwise.
	earlier *outfile.Meta
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
		if err == nil {
			meta = m
		} else {
			u.log.Warn("--resume: the results file has no record of its input (written before bulkload kept one); rows are matched by leadId and number", "path", outfile.MetaPath(resultsPath))
		}
	}
	if streamed(u.input) {
		if state == nil || state.Len() == 0 {
			return &inputCheck{}, nil
		}
		switch {
		case meta == nil:
			return nil, UsageErrorf("--resume from standard input or a pipe: the results file %s has no record of the input it was written for (%s is missing), so this input cannot be proven the same: nothing was sent. Pass --overwrite instead of --resume to start over (every lead is sent again), or give this input its own results file", resultsPath, outfile.MetaPath(resultsPath))
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
	maxPrior, kept := 0, 0
	if state != nil {
		maxPrior = state.MaxRow()
	}
	visit := func(it source.Item) error {
		if state == nil || mismatch != "" {
			return nil
		}
		r, err := upload.MatchPrior(state, it.Row)
		var fe *upload.ForeignRowError
		switch {
		case errors.As(err, &fe):
			mismatch = fe.Detail()
		case r.Kept:
			kept++
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
	if err := u.checks.judge(u.input, scan.Provided, scan.Unknown, scan.Rows, scan.Invalid-kept, scan.Reasons, ""); err != nil {
		return nil, err
	}
	return &inputCheck{scan: scan}, nil
}

// judge is the one check of an input's rows before the first call, for a
// file read through and for standard input's first rows alike: with rows
// (none: the run says so at its end), the required columns, then
// --max-invalid (errTooManyInvalid). invalid leaves out the rows --resume
// keeps (upload.MatchPrior: invalid now, their lead made earlier).
func (o *CheckOptions) judge(input string, provided []lead.Field, unknown []string, rows, invalid int, reasons lead.Reasons, of string) error {
	if rows == 0 {
		return nil
	}
	if err := o.missingRequired(input, provided, unknown); err != nil {
		return err
	}
	if o.tooManyInvalid(invalid, rows) {
		return o.tooManyInvalidError(inputLabel(input), invalid, rows, reasons, of)
	}
	return nil
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
	return foreignErrorf("--resume: the results file %s does not belong to this input%s: this input has sha256 %s and %d rows; %s. Nothing was sent. For a new export under the same name, give each input its own results file: %s; or pass --overwrite instead of --resume to start over (every lead is sent again)",
		resultsPath, earlier, short(scan.SHA256), scan.Rows, why, u.in.redropHint(u.input))
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

// short cuts a SHA-256 to 12 hex digits for a message.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// writeMeta records the input's identity beside the results file, before
// the first call (a file) or at the end (standard input: only then is it
// known).
func writeMeta(log *slog.Logger, resultsPath, input, sha string, bytes int64, rows int, allLeadIDs bool) error {
	return writeMetaOf(log, resultsPath, &outfile.Meta{Input: input, InputSHA256: sha, InputBytes: bytes, Rows: rows, AllLeadIDs: allLeadIDs})
}

// writeMetaOf records m, stamped with the time and version, beside the
// results file.
func writeMetaOf(log *slog.Logger, resultsPath string, m *outfile.Meta) error {
	m.Written, m.Version = time.Now().UTC(), ReadBuildInfo().Version
	err := outfile.WriteMeta(resultsPath, m)
	if err != nil {
		return fmt.Errorf("results file: %w", err)
	}
	log.Debug("input identity recorded", "path", outfile.MetaPath(resultsPath))
	return nil
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

// checkInputKind refuses, before anything else (a lock, an output check),
// an input bulkload cannot read and says what to do: a URL (bulkload reads
// local files and standard input) or a spreadsheet (export it as CSV).
func checkInputKind(cmd, input string) error {
	lower := strings.ToLower(input)
	if scheme, _, ok := strings.Cut(lower, "://"); ok && scheme != "" && !strings.ContainsAny(scheme, "/.") {
		fetch := "curl -fsS '" + input + "'"
		switch scheme {
		case "s3":
			fetch = "aws s3 cp '" + input + "' -"
		case "gs":
			fetch = "gcloud storage cat '" + input + "'"
		}
		return UsageErrorf("%s is a URL: bulkload reads a local file or standard input. Copy it here first, or pipe it: %s | bulkload %s --format csv - (--format jsonl for a JSONL file)", input, fetch, cmd)
	}
	for _, ext := range []string{".xlsx", ".xlsm", ".xls", ".ods"} {
		if strings.HasSuffix(strings.TrimSuffix(lower, ".gz"), ext) {
			return UsageErrorf("%s is a spreadsheet (%s): bulkload reads CSV or JSONL. Export the sheet as CSV (UTF-8), e.g. libreoffice --headless --convert-to csv '%s', then run bulkload %s on the .csv; check that leading zeros (zip codes) survived the export", input, ext, input, cmd)
		}
	}
	return nil
}
