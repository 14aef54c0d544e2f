package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/bulkload/bulkload/app"
)

// signalGrace is how long after the first signal further signals count as
// the same one: `timeout -s INT`, cron wrappers and process managers signal
// both the process and its group, so one stop request arrives twice.
const signalGrace = time.Second

// handleSignals turns signals into the run's stops. The first calls stop:
// no new rows, calls in flight drain, results and summary are written.
// Signals within signalGrace of it are the same request. A later one calls
// Abort: calls in flight are cancelled at once, and the results file and
// summary are still written (milliseconds). A third exits at once; every
// line written so far stays valid for --resume.
func handleSignals(sigs <-chan os.Signal, stop, abort func(), stderr io.Writer, now func() time.Time) {
	<-sigs
	first := now()
	stop()
	for range sigs {
		if now().Sub(first) < signalGrace {
			continue
		}
		fmt.Fprintln(stderr, "bulkload: second signal: cancelling the calls in flight; the results file and summary are still written (a third signal exits at once)")
		abort()
		break
	}
	<-sigs
	os.Exit(app.ExitInterrupted)
}
