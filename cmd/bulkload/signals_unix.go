//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// notifySignals routes the signals that stop a run to sigs: SIGINT,
// SIGTERM, and SIGHUP (a closed terminal or SSH session), which would
// otherwise kill the run with no drain, no summary and no meta file. A run
// started with SIGHUP ignored (nohup) keeps ignoring it.
//
// SIGPIPE is notified too, to a channel nobody reads: then a write to a
// closed stderr or stdout (stderr piped to `head -1`) fails with EPIPE
// instead of killing the process (see os/signal), and the run goes on to
// write its results, summary and metrics.
func notifySignals(sigs chan<- os.Signal) {
	stops := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		stops = append(stops, syscall.SIGHUP)
	}
	signal.Notify(sigs, stops...)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}
