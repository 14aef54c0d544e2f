package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// signalGrace is how long after the first signal further signals count as
// the same one: `timeout -s INT`, cron wrappers and process managers signal
// both the process and its group, so one stop request arrives twice.
const signalGrace = time.Second

// abortKey is the context key under which main hands run the channel that a
// real second signal closes.
type abortKey struct{}

// withAbort returns ctx carrying abort, closed when the calls in flight are
// to be cancelled at once.
func withAbort(ctx context.Context, abort <-chan struct{}) context.Context {
	return context.WithValue(ctx, abortKey{}, abort)
}

// abortOf returns the channel withAbort put in ctx, or nil (never closed)
// when there is none, as in tests that call run directly.
func abortOf(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(abortKey{}).(<-chan struct{})
	return ch
}

// handleSignals turns signals into the run's stops. The first calls stop:
// no new rows, calls in flight drain, results and summary are written.
// Signals within signalGrace of it are the same request. A later one calls
// abort: calls in flight are cancelled at once, and the results file and
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
	os.Exit(exitInterrupted)
}
