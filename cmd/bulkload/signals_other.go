//go:build !unix

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// notifySignals routes the signals that stop a run to sigs.
func notifySignals(sigs chan<- os.Signal) {
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
}
