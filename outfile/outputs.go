package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrHoldsOutcomes is wrapped by CheckOutputs' error when an output would
// replace a file that holds the outcomes of an upload: its lead ids and bids
// would be lost, and the next upload would send every lead again.
var ErrHoldsOutcomes = errors.New("holds the outcomes of an upload")

// OutcomesError is CheckOutputs' refusal of an output that would replace a
// file holding the outcomes of an upload. It wraps ErrHoldsOutcomes.
type OutcomesError struct {
	Flag string // the output's name (Output.Flag)
	Path string
	Rows int // the rows sent that the file records
}

func (e *OutcomesError) Error() string {
	return fmt.Sprintf("%s %s %v (%d rows sent)", e.Flag, e.Path, ErrHoldsOutcomes, e.Rows)
}

func (e *OutcomesError) Unwrap() error { return ErrHoldsOutcomes }

// Output is one file a run writes: the results file, the rejects file, the
// summary, and whatever is added later. A run lists all of its
// outputs for CheckOutputs, so a new one is checked by adding it there.
type Output struct {
	// Flag names the output in messages: the caller's name for it (the
	// command line's flag, "--summary-json").
	Flag string
	// Path is where it goes; an empty Path is skipped.
	Path string
	// Continues marks the results file of a run that continues it
	// (--resume): it is expected to hold outcomes.
	Continues bool
	// Results marks the results file: the files a run keeps beside it
	// (Sidecars, and the temporary names of both) are no other output's.
	Results bool
	// Summary marks the run's summary JSON, which may be the results
	// file's own summary (SummaryPath): it is written there either way.
	Summary bool
}

// CheckOutputs proves, before the first row is read or sent, that every
// output can be written, so that a run never fails after its leads are sent
// for want of a place to say what happened. An output is refused when it
// names the input file, when two outputs name the same file, when it names
// a file the run keeps beside its results file (the Results output's
// Sidecars, but for the Summary output on its own summary) or a temporary
// name of another output or of a sidecar (Temporary), when it names a
// sidecar of another results file that exists, when it is not
// a regular file, when it is a symbolic link or another user's file (an
// output is created new, never written through what is there: Create),
// when its directory cannot take a new file (the probe is removed again),
// and, unless overwrite is set, when it would replace a file that holds the outcomes of
// an upload (an *OutcomesError, which wraps ErrHoldsOutcomes; the caller
// says how to go on): outcomes counts the rows sent that the file at a path
// records (report.Outcomes, which knows the results file's format). input
// "-" is standard input.
func CheckOutputs(input string, outs []Output, overwrite bool, outcomes func(path string) int) error {
	var in os.FileInfo
	if input != "-" {
		in, _ = os.Stat(input) // a missing input is the reader's to report
	}
	type seen struct {
		flag string
		info os.FileInfo
		abs  string
	}
	var prev []seen
	for _, o := range outs {
		if o.Path == "" {
			continue
		}
		abs, _ := filepath.Abs(o.Path)
		info, err := os.Stat(o.Path)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s %s: cannot be written: %w", o.Flag, o.Path, err)
		}
		if exists && in != nil && os.SameFile(in, info) {
			return fmt.Errorf("%s %s is the input file: choose another path, it would be overwritten", o.Flag, o.Path)
		}
		for _, p := range prev {
			if (exists && p.info != nil && os.SameFile(p.info, info)) || p.abs == abs {
				return fmt.Errorf("%s and %s both name %s: give each output its own path", p.flag, o.Flag, o.Path)
			}
		}
		prev = append(prev, seen{o.Flag, info, abs})
		if what := sidecarsOf(o, outs, in); what != "" {
			return fmt.Errorf("%s %s is %s: choose another path, it would be lost or replace it", o.Flag, o.Path, what)
		}
		if exists && !info.Mode().IsRegular() {
			return fmt.Errorf("%s %s is not a regular file", o.Flag, o.Path)
		}
		// Outputs are created new and renamed into place (Create): a
		// planted link or another user's file there is refused, and the
		// directory must take a new file.
		if _, err := Check(o.Path); err != nil {
			return fmt.Errorf("%s %s: cannot be written: %w", o.Flag, o.Path, err)
		}
		if exists && !o.Continues && !overwrite {
			if n := outcomes(o.Path); n > 0 {
				return &OutcomesError{Flag: o.Flag, Path: o.Path, Rows: n}
			}
		}
	}
	return nil
}

// sidecarsOf says which file a run keeps o's path is: a sidecar of the
// results file among outs (or of another results file that exists), or a
// temporary name of another output; "" for none.
func sidecarsOf(o Output, outs []Output, input os.FileInfo) string {
	for _, r := range outs {
		if r.Path == "" || r.Path == o.Path && r.Flag == o.Flag {
			continue
		}
		if Temporary(o.Path, r.Path) {
			return "a temporary name of " + r.Flag + " " + r.Path
		}
		if !r.Results {
			continue
		}
		if o.Summary && samePath(o.Path, SummaryPath(r.Path)) {
			return "" // the run's own summary, written there either way
		}
		if what := sidecarOf(o.Path, r.Path); what != "" {
			return what
		}
	}
	return existingSidecar(o.Path, input)
}

// CheckSidecars refuses, of outs, an output that names another (the same
// path or the same file) or a file the run keeps beside a Results output,
// or a temporary name of either, as CheckOutputs does, without probing
// anything: for a command that only reads its Results outputs (they may
// be read-only).
func CheckSidecars(outs []Output) error {
	for _, o := range outs {
		if o.Results || o.Path == "" {
			continue
		}
		for _, r := range outs {
			if r.Results && samePath(o.Path, r.Path) {
				return fmt.Errorf("%s %s is a %s to read: choose another path", o.Flag, o.Path, r.Flag)
			}
		}
		if what := sidecarsOf(o, outs, nil); what != "" {
			return fmt.Errorf("%s %s is %s: choose another path, it would be lost or replace it", o.Flag, o.Path, what)
		}
	}
	return nil
}
