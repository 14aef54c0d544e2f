package app

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bulkload/bulkload/mapper"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/reader"
	"github.com/bulkload/bulkload/report"
	"github.com/bulkload/bulkload/source"
)

// InputOptions are the flags of reading and validating, shared by validate
// and upload, so that upload reads exactly as validate does.
type InputOptions struct {
	Format    string
	Delimiter string
	Encoding  string
	DateOrder string
	Mapping   string
	Results   string
	Rejects   string
	// Refusals is upload's --refusals: the rows the service refused, as
	// --rejects holds the invalid ones (upload's flag only).
	Refusals    string
	SummaryJSON string
	// Report is --report: the HTML run report, written at the end of every
	// run that writes a summary.
	Report string
	// OutputSuffix names the default results file, NAME+outputSuffix beside
	// the input: ".results.csv" (upload, the default) or ".validation.csv"
	// (validate, so that a dry run never replaces an upload's journal).
	OutputSuffix string
	// resultsTemplate is --results as given, placeholders and all (expand
	// fills results), for a hint that adds one.
	resultsTemplate string
	// shard is "K-of-N" for upload --shard: it goes into the default
	// results file name and the {shard} placeholder, so that every shard
	// has its own results file.
	shard string
}

// NewInputOptions returns the reading and output options with their
// defaults (UTF-8, month-day-year dates); outputSuffix names the default
// results file (see OutputSuffix).
func NewInputOptions(outputSuffix string) *InputOptions {
	return &InputOptions{Encoding: "utf-8", DateOrder: "mdy", OutputSuffix: outputSuffix}
}

// check refuses output paths whose extension does not say a format: the
// results file is written as CSV or JSONL by its extension, and a typo
// (leads.results.cvs) or another format's name (.xlsx, .json) must not be
// written as something else.
func (o *InputOptions) check() error {
	if o.Results != "" {
		switch ext := strings.ToLower(filepath.Ext(o.Results)); ext {
		case ".csv", ".jsonl":
		default:
			return UsageErrorf("--results %s: the extension must be .csv or .jsonl (it chooses the format), not %q", o.Results, ext)
		}
	}
	if o.Rejects != "" {
		if _, _, err := reader.RejectsFormat(o.Rejects); err != nil {
			return UsageErrorf("--rejects %v", err)
		}
	}
	if o.Refusals != "" {
		if _, _, err := reader.RejectsFormat(o.Refusals); err != nil {
			return UsageErrorf("--refusals %v", err)
		}
	}
	return nil
}

// resultsPath returns the results file path: --results, or NAME plus the
// command's suffix beside the input ("leads.csv.gz" gives
// "leads.results.csv" for upload, "leads.validation.csv" for validate).
func (o *InputOptions) resultsPath(input string) string {
	if o.Results != "" {
		return o.Results
	}
	suffix := cmp.Or(o.OutputSuffix, ".results.csv")
	if o.shard != "" {
		suffix = ".shard-" + o.shard + suffix
	}
	if input == "-" {
		return "stdin" + suffix
	}
	return filepath.Join(filepath.Dir(input), inputName(input)+suffix)
}

// inputName is the input's file name without its directory and extensions
// ("exports/leads.csv.gz" gives "leads"; standard input is "stdin").
func inputName(input string) string {
	if input == "-" {
		return "stdin"
	}
	base := filepath.Base(input)
	for _, ext := range []string{".gz", ".csv", ".tsv", ".jsonl", ".ndjson", ".txt"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// placeholder matches what looks like a placeholder in an output path.
const placeholder = `\{[A-Za-z_]+\}`

// expand fills the placeholders of the output paths (--results, --rejects,
// --summary-json), so that a nightly job on a fixed export name gets one
// set of files per night or per input: {name} is the input's name without
// extensions, {date} the UTC date at the start (2006-01-02), {time} the
// UTC time (150405), {sha} the first 12 hex digits of the input file's
// SHA-256 (not for standard input), {shard} the shard of upload --shard
// ("2-of-4"; "0-of-1" without it). Any other {word} is an error.
func (o *InputOptions) expand(input string, now time.Time) error {
	paths := []struct {
		flag string
		p    *string
	}{{"--results", &o.Results}, {"--rejects", &o.Rejects}, {"--summary-json", &o.SummaryJSON}, {"--report", &o.Report}, {"--refusals", &o.Refusals}}
	sha := ""
	for _, x := range paths {
		if !strings.Contains(*x.p, "{sha}") || sha != "" {
			continue
		}
		if input == "-" {
			return UsageErrorf("%s %s: {sha} needs an input file; standard input is read only once", x.flag, *x.p)
		}
		sum, err := fileSHA256(input)
		if err != nil {
			return UsageErrorf("%s %s: {sha}: %v", x.flag, *x.p, err)
		}
		sha = sum[:12]
	}
	o.resultsTemplate = o.Results
	now = now.UTC()
	r := strings.NewReplacer("{name}", inputName(input), "{date}", now.Format(time.DateOnly), "{time}", now.Format("150405"), "{sha}", sha, "{shard}", cmp.Or(o.shard, "0-of-1"))
	re := regexp.MustCompile(placeholder)
	for _, x := range paths {
		if left := re.FindString(r.Replace(*x.p)); left != "" {
			return UsageErrorf("%s %s: unknown placeholder %s (known: {name}, {date}, {time}, {sha}, {shard})", x.flag, *x.p, left)
		}
		*x.p = r.Replace(*x.p)
	}
	return nil
}

// fileSHA256 hashes a file's bytes.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (o *InputOptions) readerOptions(m *mapper.Mapping) (reader.Options, error) {
	var opts reader.Options
	if o.Format != "" {
		f, err := reader.ParseFormat(o.Format)
		if err != nil {
			return opts, UsageErrorf("--format: %v", err)
		}
		opts.Format = f
	}
	switch d := o.Delimiter; d {
	case "":
	case "tab", `\t`, "\t":
		opts.Delimiter = '\t'
	default:
		r, size := utf8.DecodeRuneInString(d)
		if size != len(d) || r == '"' || r == '\r' || r == '\n' || r == utf8.RuneError {
			return opts, UsageErrorf(`--delimiter %q: want one character such as ",", ";", "|" or "tab"`, d)
		}
		opts.Delimiter = r
	}
	opts.Encoding = o.Encoding
	opts.EncodingHint = inputHints().Encoding
	if m != nil {
		opts.Columns = m.Columns
	}
	return opts, nil
}

// checkOutputs is the one place that proves, before the first row is read
// or sent, that every output of a run can be written: the results file
// (continues: --resume), --rejects, --summary-json, and the extra outputs a
// command adds. A failure is a usage error (exit 2) naming the flag. Unless
// Overwrite is set, no output may replace a file that holds an upload's
// outcomes; hint says how to go on when the results file does.
func (o *InputOptions) checkOutputs(input, results string, continues, overwrite bool, hint string, extra ...outfile.Output) error {
	summaryJSON := o.SummaryJSON
	if summaryJSON == "-" {
		summaryJSON = "" // standard output: no file to check
	}
	outs := append([]outfile.Output{
		{Flag: "--results", Path: results, Continues: continues, Results: true},
		{Flag: "--rejects", Path: o.Rejects},
		{Flag: "--summary-json", Path: summaryJSON, Summary: true},
		{Flag: "--report", Path: o.Report},
		{Flag: "--refusals", Path: o.Refusals},
	}, extra...)
	if err := outfile.CheckOutputs(input, outs, overwrite, report.Outcomes); err != nil {
		var oe *outfile.OutcomesError
		if hint != "" && errors.As(err, &oe) && oe.Flag == "--results" {
			err = after(err, oe, ": "+hint)
		}
		return fmt.Errorf("%w: %w", ErrUsage, flagHint(err))
	}
	// What a killed run left half-written under a temporary name (a
	// rejects file's rows) goes: this run holds the results file's lock.
	for _, o := range outs {
		if o.Path == "" {
			continue
		}
		paths := []string{o.Path}
		if o.Results {
			for _, s := range outfile.Sidecars(o.Path) {
				paths = append(paths, s.Path)
			}
		}
		for _, p := range paths {
			outfile.RemoveStale(p)
		}
	}
	return nil
}

// lockResults takes the results file's lock for this run (command names
// it in the lock file); a second run on the same file is refused at once,
// naming the process that holds it. The caller unlocks it.
func lockResults(path, command string) (*outfile.FileLock, error) {
	l, err := outfile.Lock(path, command)
	if err != nil {
		return nil, UsageErrorf("--results: %v", flagHint(err))
	}
	return l, nil
}

// sourceConfig turns the reading flags into a source.Config.
func (o *InputOptions) sourceConfig(log *slog.Logger) (source.Config, error) {
	if o.DateOrder != "mdy" && o.DateOrder != "dmy" {
		return source.Config{}, UsageErrorf("--date-order %q: want mdy (MM/DD/YYYY) or dmy (DD/MM/YYYY)", o.DateOrder)
	}
	var mapping *mapper.Mapping
	if o.Mapping != "" {
		f, err := OpenSetting("--mapping", o.Mapping)
		if err != nil {
			return source.Config{}, err
		}
		m, err := mapper.ParseMapping(f, o.Mapping)
		f.Close()
		if err != nil {
			return source.Config{}, UsageErrorf("--mapping: %v", err)
		}
		mapping = m
	}
	ropts, err := o.readerOptions(mapping)
	if err != nil {
		return source.Config{}, err
	}
	return source.Config{
		Reader:   ropts,
		Mapping:  mapping,
		DayFirst: o.DateOrder == "dmy",
		Hints:    inputHints(),
		Rejects:  o.Rejects,
		Log:      log,
	}, nil
}

// open turns the reading flags into a source.Config and opens the input;
// limit, above 0, reads at most that many bytes of a file (the bytes the
// check before the upload read). Every error but cancellation is the
// user's to fix (a missing file, a bad mapping, an unreadable header).
func (o *InputOptions) open(ctx context.Context, name string, stdin io.Reader, log *slog.Logger, limit int64, verify *source.Blocks, earlier *outfile.Meta) (*source.Source, error) {
	cfg, err := o.sourceConfig(log)
	if err != nil {
		return nil, err
	}
	cfg.Limit = limit
	cfg.Verify = verify
	// An upload's send pass over a file still being written (its last
	// row cut short, the file growing) keeps that row for a resumed run:
	// exit 5. validate sends nothing.
	cfg.HoldUnended = verify != nil
	if earlier != nil {
		// A resumed stream: its first bytes are proven before the first
		// call, and the bytes the earlier run read when they are reached.
		cfg.PrefixAt = earlier.FirstBytes
		if earlier.InputBytes > earlier.FirstBytes {
			cfg.CheckAt, cfg.CheckSHA256 = earlier.InputBytes, strings.TrimPrefix(earlier.InputSHA256, "partial:")
		}
	}
	src, err := source.Open(ctx, name, stdin, cfg)
	switch {
	case err == nil:
		return src, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, source.ErrInputChanged):
		return nil, err // not the command line's fault: exit 5
	}
	return nil, UsageErrorf("%v", flagHint(err))
}
