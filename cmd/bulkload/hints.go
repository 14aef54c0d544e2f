package main

import (
	"errors"

	"github.com/bulkload/bulkload/reader"
	"github.com/bulkload/bulkload/report"
)

// flagHint adds the command line's advice to a library's error: the
// libraries say what failed and with which data; which flag changes it is
// the command line's to say. An error with no hint is returned as it is.
func flagHint(err error) error {
	var (
		fe *reader.FormatError
		he *reader.HeaderError
		oe *report.OutcomesError
		h  *hintError
	)
	switch {
	case errors.As(err, &h):
		return err // advised already
	case errors.As(err, &oe):
		return &hintError{err, ": choose another path, or pass --overwrite to replace it"}
	case errors.Is(err, report.ErrLocked):
		return &hintError{err, "; wait for that run to end, or stop it (a run that continues it: --resume)"}
	case errors.As(err, &fe):
		return &hintError{err, ": pass --format csv or --format jsonl"}
	case errors.As(err, &he):
		return &hintError{err, " Add one, or map the columns with --mapping"}
	}
	return err
}

// hintError is a library's error with the command line's advice after its
// text; errors.Is and errors.As see the library's error.
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() + e.hint }
func (e *hintError) Unwrap() error { return e.err }
