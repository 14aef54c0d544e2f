// Command bulkload validates partner lead exports and uploads them to the
// Lead Intake Service. It wires the pipeline stages together: reader (bytes
// to records), mapper (records to LeadInput), submitter (auth, calls,
// retries), report (results file and summary) and leadsim (the simulator).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		// First signal: stop taking rows, drain in-flight calls, write
		// results and summary (run returns exitInterrupted).
		stop()
		<-sigs
		// Second signal: leave at once. Every line already written stays
		// valid for --resume; a half-written last line is tolerated.
		os.Exit(exitInterrupted)
	}()
	// lookupEnv (not os.Getenv) so that run can list the BULKLOAD_*
	// variables set and warn about a misspelt one.
	code := run(ctx, os.Args[1:], lookupEnv(os.Environ()), os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
