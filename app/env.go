package app

import (
	"io"
	"time"
)

// Env is what a command may touch of the outside world; tests supply their own.
type Env struct {
	Getenv func(string) string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// UnknownEnv are the BULKLOAD_* variables set that no command reads
	// (a typo); the command's logger warns about them.
	UnknownEnv []string
	// Now is the clock of the placeholders {date} and {time}.
	Now func() time.Time
	// Abort is closed by a real second signal: the calls in flight are
	// cancelled at once (upload.Config.Abort). Nil (never closed) in
	// tests that call run directly.
	Abort <-chan struct{}
	// Deps are the transport and timings of the calls to the service
	// (the zero Deps: production's).
	Deps Deps
	// JSONLogs is set when stderr carries JSON log records only
	// (--log-format json): the summary is logged, not printed, and
	// progress is a log line, never a bar.
	JSONLogs bool
}
