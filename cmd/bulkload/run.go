package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// version is the tool's version, recorded in --summary-json.
const version = "0.1.0"

// Exit statuses, one table for every command; shown in --help and README.md.
const (
	exitOK          = 0   // every row valid (validate) or processed/submitted (upload)
	exitRowsFailed  = 1   // the run finished, but some rows are invalid, failed or unverified
	exitUsage       = 2   // bad flags, settings or input file (unreadable, wrong format)
	exitAuth        = 3   // the identity provider refused the credentials
	exitIO          = 5   // reading the input or writing an output failed during the run
	exitInterrupted = 130 // SIGINT or SIGTERM: results written so far are valid for --resume
)

const exitTable = `Exit status:
  0    every row valid (validate) or processed/submitted (upload)
  1    the run finished, but some rows are invalid, failed or unverified (see the results file)
  2    usage error, bad setting, or unreadable input
  3    authentication refused (check client id, secret, scope)
  5    reading the input or writing an output failed during the run (a disk, permission or
       network file system error, a corrupt gzip stream); what was written is valid for --resume
  130  interrupted (SIGINT/SIGTERM); rerun upload with --resume to finish
`

const topUsage = `bulkload validates partner lead exports and uploads them to the Lead Intake Service.

Usage:
  bulkload upload --simulate FILE   upload against the built-in simulator (no credentials needed)
  bulkload upload [flags] FILE      upload to the service (see bulkload upload -h)
  bulkload validate [flags] FILE    dry run: read and validate only, no network
  bulkload auth check [flags]       request a token and show its expiry and roles
  bulkload sim [flags]              serve the simulated service on a local address
  bulkload version

FILE is .csv, .jsonl or .ndjson, optionally .gz; "-" reads standard input (with --format).
Every flag can also be set as BULKLOAD_<FLAG> (--token-url is BULKLOAD_TOKEN_URL) or in a
YAML file given with --config; flags win over the environment, the environment over the file.

`

// env is what a command may touch of the outside world; tests supply their own.
type env struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// run executes one command line and returns the process exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage+exitTable)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "validate":
		return runValidate(ctx, e, args[1:])
	case "upload":
		return runUpload(ctx, e, args[1:])
	case "sim":
		err = runSim(ctx, e, args[1:])
	case "auth":
		if len(args) < 2 || args[1] != "check" {
			fmt.Fprintln(stderr, "bulkload: usage: bulkload auth check [flags]")
			return exitUsage
		}
		return runAuthCheck(ctx, e, args[2:])
	case "version", "--version":
		fmt.Fprintln(stdout, "bulkload", version)
		return exitOK
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, topUsage+exitTable)
		return exitOK
	default:
		fmt.Fprintf(stderr, "bulkload: unknown command %q\n\n%s%s", args[0], topUsage, exitTable)
		return exitUsage
	}
	return exitFor(stderr, err)
}

// exitFor reports a run-level error and maps it to an exit status.
func exitFor(stderr io.Writer, err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "bulkload: interrupted")
		return exitInterrupted
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "bulkload: %s\n", strings.TrimPrefix(err.Error(), "usage: "))
		return exitUsage
	default:
		// Not a usage error: the command line was fine, but reading or
		// writing failed during the run (usage errors are all built by
		// usageErrorf, before any row is read).
		fmt.Fprintf(stderr, "bulkload: %v\n", err)
		return exitIO
	}
}

// logOptions are the logging flags every command shares.
type logOptions struct {
	format string
	level  string
}

func (o *logOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.format, "log-format", "text", "log format on stderr: text or json")
	fs.StringVar(&o.level, "log-level", "info", "log level: debug, info, warn or error")
}

// logger builds the one logger of a run. Nothing sensitive is ever passed to
// it: leads are logged by row and leadId, and lead.Input redacts itself.
func (o *logOptions) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.level)); err != nil {
		return nil, usageErrorf("--log-level %q: want debug, info, warn or error", o.level)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch o.format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, usageErrorf("--log-format %q: want text or json", o.format)
	}
}

// newFlagSet returns a flag set whose usage text ends with the exit table.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: bulkload %s\n\nFlags (each also BULKLOAD_<FLAG>, or a key of the --config file):\n", synopsis)
		fs.PrintDefaults()
		fmt.Fprint(stderr, "\n"+exitTable)
	}
	return fs
}
