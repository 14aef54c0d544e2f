package app

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/summary"
)

// Exit statuses, one table for every command; shown in --help and README.md.
const (
	ExitOK          = 0   // every row valid (validate) or every valid row processed/submitted (upload)
	ExitRowsFailed  = 1   // the run finished, but some rows failed or are unverified (or invalid: validate, upload --strict)
	ExitUsage       = 2   // bad flags, settings or input file (unreadable, wrong format)
	ExitAuth        = 3   // the identity provider refused the credentials
	ExitUnreachable = 4   // the service or its token endpoint cannot be reached, or is not what it should be
	ExitIO          = 5   // reading the input or writing an output failed during the run
	ExitInterrupted = 130 // SIGINT, SIGTERM or SIGHUP: results written so far are valid for --resume
)

// ExitError is an error that carries its exit class: a command returns
// it like any other error, and the command line (cmd/bulkload's exitFor),
// the one place that turns errors into statuses, prints its message and
// exits with its status (restic's
// errors.Fatal, cli/cli's cmdutil.FlagError).
type ExitError struct {
	Code  int    // the exit status: ExitRowsFailed, ExitAuth, ExitUnreachable, ...
	Msg   string // what stopped the run, printed as "bulkload: msg"
	Quiet bool   // nothing to print: the run has said it (an interrupt)
}

func (e *ExitError) Error() string { return e.Msg }

// exitErrorf returns an ExitError with status code and a formatted message.
func exitErrorf(code int, format string, args ...any) error {
	return &ExitError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// StatusOf is the exit status of err, a command's error: the one table
// from errors to statuses (exitFor prints; the summary JSON records it).
func StatusOf(err error) int {
	var xe *ExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &xe):
		return xe.Code
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.Is(err, ErrUsage):
		return ExitUsage
	default:
		// Not a usage error: the command line was fine, but reading or
		// writing failed during the run (usage errors are all built by
		// UsageErrorf, before any row is read).
		return ExitIO
	}
}

// ErrUsage marks an error that is the user's to fix on the command line, the
// environment or the config file, or an input refused before anything was
// sent; StatusOf maps it to ExitUsage.
var ErrUsage = errors.New("usage")

// UsageErrorf returns a formatted error wrapping ErrUsage.
func UsageErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

// rowsStatus is the error of a run that went through its input: nil only
// when the accounting holds and every row ended valid, processed or
// submitted, or, unless invalidFails, invalid; else errRowsLeft (exit 1,
// the summary says which). An upload's invalid rows
// (within --max-invalid: more stop it before the first call) are the
// partner's to fix, not the operator's: they are reported (summary,
// metrics, --rejects) and do not fail the run without --strict; validate
// fails on any, finding them is its job.
func rowsStatus(sum *summary.Summary, invalidFails bool) error {
	if sum.Check() != nil {
		return errRowsLeft
	}
	bad := sum.Total(func(i lead.StatusInfo) bool {
		return i.Action == lead.OperatorAction || invalidFails && i.Action == lead.PartnerAction
	}) + sum.Unknown + sum.NotSent + sum.NotReached
	if bad > 0 {
		return errRowsLeft
	}
	return nil
}

// errRowsLeft is the error of a run that went through its input but left
// rows for the operator (exit 1); the summary, printed already, says
// which, so there is nothing more to print.
var errRowsLeft error = &ExitError{Code: ExitRowsFailed, Msg: "some rows are not settled; see the summary", Quiet: true}
