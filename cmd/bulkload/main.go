// Command bulkload validates partner lead exports and uploads them to the
// Lead Intake Service. It wires the pipeline stages together: reader (bytes
// to records), mapper (records to LeadInput), submitter (auth, calls,
// retries), report (results file and summary) and leadsim (the simulator).
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
