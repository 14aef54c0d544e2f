// Command bulkload validates partner lead exports and uploads them to the
// Lead Intake Service. It owns the command line only: flags, the
// environment and the config file turned into options (flags.go,
// config.go, auth.go), help and completion, version, signals, and the one
// place that maps a command's error to an exit status and prints it
// (run.go: exitFor). Each command is run by package app (commands.go calls
// it).
package main

import (
	"context"
	"os"
	"time"

	"github.com/bulkload/bulkload/app"
)

func main() {
	ctx, stop := context.WithCancel(context.Background())
	abort := make(chan struct{})
	sigs := make(chan os.Signal, 4)
	notifySignals(sigs)
	go handleSignals(sigs, stop, func() { close(abort) }, os.Stderr, time.Now)
	// lookupEnv (not os.Getenv) so that run can list the BULKLOAD_*
	// variables set and warn about a misspelt one.
	code := runEnv(ctx, &app.Env{Getenv: lookupEnv(os.Environ()), Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Now: time.Now, Abort: abort}, os.Args[1:])
	stop()
	os.Exit(code)
}
