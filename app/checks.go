package app

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/summary"
)

// CheckOptions are the flags of the checks an input passes before anything
// is sent: required columns, the share of invalid rows, an empty file.
type CheckOptions struct {
	RequireColumns string
	AllowEmpty     bool
	MaxInvalid     string // upload only
	// Strict makes any invalid row fail the upload (exit 1); without it,
	// invalid rows within --max-invalid are the partner's to fix: reported
	// (summary, metrics, --rejects) and the run exits 0. Upload only:
	// validate always fails on an invalid row, finding them is its job.
	Strict bool
	// AllowNoSSN lets an upload go without a column for
	// socialSecurityNumber (a partner that has none): without it, such an
	// input stops before anything is sent, since every lead would be
	// answered unqualified. Upload only.
	AllowNoSSN bool
	// upload is set by UploadJob.Prepare: upload's checks, not validate's.
	upload bool

	required []lead.Field
	// maxRatio, when maxCount is -1, is the largest share of invalid rows
	// allowed; otherwise maxCount is the largest number.
	maxRatio float64
	maxCount int
}

// NewCheckOptions returns the checks' options with their defaults: for
// upload (upload set), --max-invalid 20%.
func NewCheckOptions(upload bool) *CheckOptions {
	o := &CheckOptions{}
	if upload {
		o.MaxInvalid = "20%"
	}
	return o
}

// alwaysRequired are the columns without which every row is invalid: the
// interface's one required field, and the consent without which the service
// refuses a lead.
func alwaysRequired() []lead.Field { return []lead.Field{lead.DateOfBirth, lead.TermsConsent} }

// stdinCheckRows is how many rows of standard input --max-invalid looks at
// before the first call.
const stdinCheckRows = 1000

// check parses the flags' values.
func (o *CheckOptions) check() error {
	o.required = alwaysRequired()
	for name := range strings.SplitSeq(o.RequireColumns, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		f, ok := lead.FieldByName(name)
		if !ok || f == lead.LeadSourceID {
			return UsageErrorf("--require-columns: %q is not a LeadInput field (for example socialSecurityNumber, cellPhone)", name)
		}
		o.required = append(o.required, f)
	}
	if o.upload && !o.AllowNoSSN {
		o.required = append(o.required, lead.SocialSecurityNumber)
	}
	o.maxCount, o.maxRatio = -1, 1
	if v := strings.TrimSpace(o.MaxInvalid); v != "" {
		if pct, ok := strings.CutSuffix(v, "%"); ok {
			r, err := strconv.ParseFloat(pct, 64)
			if err != nil || r < 0 || r > 100 {
				return UsageErrorf("--max-invalid %q: want a share from 0%% to 100%% or a count of rows", o.MaxInvalid)
			}
			o.maxRatio = r / 100
		} else {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return UsageErrorf("--max-invalid %q: want a share from 0%% to 100%% or a count of rows", o.MaxInvalid)
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
		if !have[f] && !slices.Contains(missing, f.String()) {
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
	if len(missing) == 1 && missing[0] == lead.SocialSecurityNumber.String() && !slices.Contains(o.requiredByFlag(), lead.SocialSecurityNumber) {
		// Without an SSN the service pulls no credit: every lead comes
		// back unqualified, and a night worth nothing would exit 0.
		return UsageErrorf("%s has no column for socialSecurityNumber: every lead would be answered without a credit pull, unqualified ($0 in bids); nothing was sent. %s; or, for a partner that sends no SSN, pass --allow-no-ssn", inputLabel(input), hint)
	}
	return UsageErrorf("%s has no column for %s (required); nothing was sent. %s", inputLabel(input), strings.Join(missing, ", "), hint)
}

// requiredByFlag are the fields --require-columns names.
func (o *CheckOptions) requiredByFlag() []lead.Field {
	var out []lead.Field
	for name := range strings.SplitSeq(o.RequireColumns, ",") {
		if f, ok := lead.FieldByName(strings.TrimSpace(name)); ok {
			out = append(out, f)
		}
	}
	return out
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
	if o.AllowEmpty {
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
