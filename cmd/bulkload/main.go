// Command bulkload validates partner lead exports and uploads them to the
// Lead Intake Service. It owns the command line (flags, environment, help,
// exit statuses) and wires the packages together: source (the input read
// ahead, hashed and validated, over reader's bytes-to-records and mapper's
// records-to-LeadInput), upload (the engine from a valid row to its result
// line), submitter (auth, calls, retries, rate and concurrency), report
// (results file, journal and summary), outfile (how every output reaches
// the disk), metrics (Prometheus textfile and Pushgateway), runreport (the
// HTML run report), lead (the shared lead types) and leadsim (the simulator
// behind `bulkload sim`).
package main

import (
	"context"
	"os"
	"time"
)

func main() {
	ctx, stop := context.WithCancel(context.Background())
	abort := make(chan struct{})
	sigs := make(chan os.Signal, 4)
	notifySignals(sigs)
	go handleSignals(sigs, stop, func() { close(abort) }, os.Stderr, time.Now)
	// lookupEnv (not os.Getenv) so that run can list the BULKLOAD_*
	// variables set and warn about a misspelt one.
	code := runEnv(ctx, &env{getenv: lookupEnv(os.Environ()), stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, now: time.Now, abort: abort}, os.Args[1:])
	stop()
	os.Exit(code)
}
