package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/bulkload/bulkload/app"
)

// exitMeaning is the one exit table; each command's help shows the rows of
// the statuses it can return (command.exits), in its own words where they
// differ.
func exitMeaning(cmd string, code int) string {
	switch {
	case code == app.ExitOK && cmd == "validate":
		return "every row valid"
	case code == app.ExitOK && cmd == "upload":
		return "every valid row processed or submitted; invalid rows within --max-invalid do not fail the run (the partner's to fix: summary, metrics, --rejects; --strict: exit 1)"
	case code == app.ExitOK && cmd == "summary":
		return "every valid row of every input processed or submitted (invalid rows: as upload, --strict as upload --strict)"
	case code == app.ExitOK && cmd == "auth check":
		return "a token was issued"
	case code == app.ExitOK && cmd == "sim":
		return "stopped by SIGINT/SIGTERM/SIGHUP"
	case code == app.ExitOK && cmd == "":
		return "success: for validate every row valid; for upload every valid row processed or submitted (invalid rows within --max-invalid are reported, not failed, unless --strict)"
	case code == app.ExitOK:
		return "success"
	case code == app.ExitRowsFailed && cmd == "validate":
		return "some rows are invalid (see the results file), or no rows"
	case code == app.ExitRowsFailed && cmd == "summary":
		return "some rows failed, are unverified, still to submit, only validated, or in no results file (a shard that did not run); with --strict, or invalid"
	case code == app.ExitRowsFailed && cmd == "upload":
		return "the run finished, but some rows failed, are unverified or still to submit (see the results file), or were left for --resume because the service asked them to come back later than --max-retry-wait (deferred), or, with --strict, are invalid; or nothing was sent: more rows invalid than --max-invalid, or no rows"
	case code == app.ExitRowsFailed:
		return "the run finished, but some rows failed or are unverified (see the results file), or are invalid (validate, upload --strict); or nothing was sent: more rows invalid than --max-invalid, or no rows"
	case code == app.ExitUsage && cmd == "sim":
		return "usage error or bad setting (a flag, a config file, a listen address that cannot be used)"
	case code == app.ExitIO && cmd == "sim":
		return "serving failed after it started, or the secret file could not be written"
	case code == app.ExitUsage && (cmd == "auth check" || cmd == "summary" || cmd == "completion" || cmd == "version"):
		return "usage error or bad setting (a flag, the environment, a config file; summary: a results file that cannot be read)"
	case code == app.ExitUsage && (cmd == "history" || cmd == "report"):
		return "usage error or bad setting (a flag, a config file; a results file, a run or a ledger that cannot be read)"
	case code == app.ExitUsage:
		return "usage error, bad setting, or unreadable input; found before anything is sent: a corrupt input file, a required column missing (socialSecurityNumber too, unless --allow-no-ssn), an output unwritable or holding an upload's outcomes, the results file locked by another run or another input's, a ledger that cannot be read or stays locked"
	case code == app.ExitAuth:
		return "authentication refused: the token endpoint answered that the credentials, scope or tenant are wrong (check client id, secret, scope, --auth-url/--tenant-id or --token-url)"
	case code == app.ExitUnreachable && cmd == "auth check":
		return "token endpoint unreachable, too slow, or not a token endpoint (check --auth-url and --tenant-id, or --token-url); with --endpoint, the service failed the preflight query as upload's would"
	case code == app.ExitUnreachable:
		return "service, token endpoint or PostgreSQL ledger unreachable, too slow, or not what it should be (check --endpoint, --auth-url/--tenant-id or --token-url); or it went away mid-run for longer than --outage-wait, or sent every call away (a Retry-After longer than --max-retry-wait). Nothing was sent, or rows not sent have no line: rerun the same command with --resume once it answers"
	case code == app.ExitIO:
		return "reading the input or writing an output failed during the run (disk, permission, network file system; a gzip stream on standard input corrupt after rows were sent; the input changed while it was read); what was written is valid for --resume"
	case code == app.ExitInterrupted && cmd == "upload":
		return "interrupted (SIGINT/SIGTERM/SIGHUP); rerun the same command with --resume to finish"
	case code == app.ExitInterrupted && cmd == "":
		return "interrupted (SIGINT/SIGTERM/SIGHUP); rerun upload with --resume to finish"
	case code == app.ExitInterrupted:
		return "interrupted (SIGINT/SIGTERM/SIGHUP)"
	}
	return ""
}

// command is one of bulkload's commands, as help, typo suggestions and
// completion see it.
type command struct {
	name     string // "upload", "auth check"
	synopsis string // after "bulkload "
	summary  string
	exits    []int
	// flags returns a flag set with the command's flags (throwaway
	// values), for completion; TestCompletionMatchesHelp keeps it equal to
	// what the command itself registers.
	flags func() *flag.FlagSet
}

// commands lists bulkload's commands in the order help shows them.
func commands() []command {
	settings := func(register ...func(*flag.FlagSet)) func() *flag.FlagSet {
		return func() *flag.FlagSet {
			fs := flag.NewFlagSet("", flag.ContinueOnError)
			for _, r := range register {
				r(fs)
			}
			registerConfig(fs, new(string))
			return fs
		}
	}
	var (
		auth authOptions
		logs logOptions
	)
	return []command{
		{"upload", "upload [flags] FILE", "upload FILE to the service (--simulate: to the built-in simulator)",
			[]int{app.ExitOK, app.ExitRowsFailed, app.ExitUsage, app.ExitAuth, app.ExitUnreachable, app.ExitIO, app.ExitInterrupted},
			settings(newUploadFlags().register)},
		{"validate", "validate [flags] FILE", "dry run: read and validate FILE only, no network",
			[]int{app.ExitOK, app.ExitRowsFailed, app.ExitUsage, app.ExitIO, app.ExitInterrupted},
			settings(newValidateFlags().register)},
		{"auth check", "auth check [flags]", "request a token and show its expiry and roles; with --endpoint, run upload's preflight query",
			[]int{app.ExitOK, app.ExitUsage, app.ExitAuth, app.ExitUnreachable, app.ExitInterrupted},
			settings(auth.register, logs.register, registerAuthTimeout(new(time.Duration)))},
		{"sim", "sim [flags]", "serve the simulated service on a local address",
			[]int{app.ExitOK, app.ExitUsage, app.ExitIO},
			settings(func(fs *flag.FlagSet) { registerSim(fs, app.NewSimOptions()) }, logs.register)},
		{"summary", "summary [flags] RESULTS... | --run ID", "print the combined summary of results files, e.g. all shards of a backfill, or a run's from the ledger",
			[]int{app.ExitOK, app.ExitRowsFailed, app.ExitUsage},
			settings(func(fs *flag.FlagSet) { registerSummary(fs, new(app.SummaryOptions)) }, logs.register)},
		{"report", "report [flags] RESULTS... | --run ID", "write the HTML run report of results files (several: one combined report), or of a run in the ledger",
			[]int{app.ExitOK, app.ExitUsage, app.ExitIO},
			settings(func(fs *flag.FlagSet) { registerReport(fs, app.NewReportOptions()) }, logs.register)},
		{"history", "history [flags]", "list the runs the ledger recorded: when, input, exit, rows by status, bids, what bound each",
			[]int{app.ExitOK, app.ExitUsage},
			settings(func(fs *flag.FlagSet) { registerHistory(fs, new(app.HistoryOptions)) }, logs.register)},
		{"completion", "completion bash|zsh|fish", "print a shell completion script",
			[]int{app.ExitOK, app.ExitUsage}, nil},
		{"version", "version", "print the version, VCS revision and Go version",
			[]int{app.ExitOK}, nil},
	}
}

func findCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// exitTable renders the rows of the exit table for the statuses command
// cmd can return ("" for all commands).
func exitTable(cmd string, codes []int) string {
	var b strings.Builder
	b.WriteString("Exit status:\n")
	for _, c := range codes {
		fmt.Fprintf(&b, "  %-4d %s\n", c, exitMeaning(cmd, c))
	}
	return b.String()
}

// capitalize returns s with its first letter upper case.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func topUsage() string {
	var b strings.Builder
	b.WriteString("bulkload validates partner lead exports and uploads them to the Lead Intake Service.\n\nUsage:\n")
	var all []int
	for _, c := range commands() {
		fmt.Fprintf(&b, "  bulkload %-26s %s\n", c.synopsis, c.summary)
		for _, x := range c.exits {
			if !slices.Contains(all, x) {
				all = append(all, x)
			}
		}
	}
	slices.Sort(all)
	b.WriteString(`
FILE is .csv, .tsv, .jsonl or .ndjson, optionally .gz; "-" reads standard input (with --format).
Every flag can also be set as BULKLOAD_<FLAG> (--token-url is BULKLOAD_TOKEN_URL) or in a
YAML file given with --config; flags win over the environment, the environment over the file.
"bulkload COMMAND -h" lists a command's flags.

`)
	b.WriteString(exitTable("", all))
	return b.String()
}

// run executes one command line and returns the process exit status.
// Getenv is its only view of the environment: getenv(envListKey) lists the
// BULKLOAD_* variables set (see lookupEnv), so that a misspelt one is
// warned about.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runEnv(ctx, &app.Env{Getenv: getenv, Stdin: stdin, Stdout: stdout, Stderr: stderr, Now: time.Now}, args)
}

// runEnv is run with the outside world in e (tests give their own clock).
func runEnv(ctx context.Context, e *app.Env, args []string) int {
	getenv, stdin, stdout, stderr := e.Getenv, e.Stdin, e.Stdout, e.Stderr
	e.UnknownEnv = unknownEnv(getenv)
	if jsonLogsAsked(args, getenv) {
		// Errors found before the command's logger exists (a flag that
		// does not parse, a bad setting) are JSON records too, for a log
		// shipper that reads every line as one; the logger takes over
		// from this writer (logger).
		e.Stderr = &jsonLines{log: slog.New(slog.NewJSONHandler(stderr, nil)), out: stderr}
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage())
		return app.ExitUsage
	}
	switch args[0] {
	case "validate":
		return runValidate(ctx, e, args[1:])
	case "upload":
		return runUpload(ctx, e, args[1:])
	case "sim":
		return runSim(ctx, e, args[1:])
	case "auth":
		return runAuth(ctx, e, args[1:])
	case "summary":
		return runSummary(ctx, e, args[1:])
	case "report":
		return runReport(ctx, e, args[1:])
	case "history":
		return runHistory(ctx, e, args[1:])
	case "completion":
		return runCompletion(e, args[1:])
	case "version", "--version", "-version", "-v":
		if len(args) == 2 && slices.Contains([]string{"-h", "-help", "--help", "help"}, args[1]) {
			fmt.Fprintf(stdout, "Usage: bulkload version\n\nPrint the version, VCS revision and Go version (bulkload --version and -v are the same).\n\nExamples:\n  bulkload version\n\n%s", exitTable("version", []int{app.ExitOK}))
			return app.ExitOK
		}
		if len(args) > 1 {
			return usageHint(stderr, "version", fmt.Sprintf("version takes no arguments, got %q", args[1:]))
		}
		fmt.Fprintln(stdout, app.ReadBuildInfo())
		return app.ExitOK
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			// "bulkload help upload" is "bulkload upload -h".
			return runEnv(ctx, &app.Env{Getenv: getenv, Stdin: stdin, Stdout: stdout, Stderr: stderr, Now: e.Now, Abort: e.Abort, Deps: e.Deps}, append(slices.Clone(args[1:]), "-h"))
		}
		fmt.Fprint(stdout, topUsage())
		return app.ExitOK
	default:
		msg := fmt.Sprintf("unknown command %q", args[0])
		if strings.HasPrefix(args[0], "-") {
			msg = fmt.Sprintf("unknown flag %s before the command", args[0])
		}
		names := []string{"help"}
		for _, c := range commands() {
			names = append(names, strings.Fields(c.name)[0])
		}
		if s := suggest(strings.TrimLeft(args[0], "-"), names); len(s) > 0 {
			msg += fmt.Sprintf("; did you mean %q?", s[0])
		}
		return usageHint(stderr, "", msg)
	}
}

// runAuth dispatches "auth" to its one subcommand, check.
func runAuth(ctx context.Context, e *app.Env, args []string) int {
	c, _ := findCommand("auth check")
	switch {
	case len(args) > 0 && args[0] == "check":
		return runAuthCheck(ctx, e, args[1:])
	case len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help"):
		fmt.Fprintf(e.Stdout, "Usage: bulkload %s\n\n%s.\n\"bulkload auth check -h\" lists its flags.\n\n%s\n%s", c.synopsis, capitalize(c.summary), examples(c.name), exitTable(c.name, c.exits))
		return app.ExitOK
	case len(args) == 0:
		return usageHint(e.Stderr, "auth", "auth needs a subcommand: bulkload auth check")
	default:
		msg := fmt.Sprintf("unknown auth subcommand %q", args[0])
		if s := suggest(args[0], []string{"check"}); len(s) > 0 {
			msg += `; did you mean "check"?`
		}
		return usageHint(e.Stderr, "auth", msg)
	}
}

// usageHint prints a usage error and a one-line hint where help is, and
// returns exitUsage: never the whole usage text, which would bury the error.
func usageHint(stderr io.Writer, cmd, msg string) int {
	help := "bulkload help"
	if cmd != "" {
		help = "bulkload " + cmd + " -h"
	}
	fmt.Fprintf(stderr, "bulkload: %s\nRun '%s' for usage.\n", msg, help)
	return app.ExitUsage
}

// exitFor reports a command's error and maps it to its exit status
// (app.StatusOf).
func exitFor(stderr io.Writer, err error) int {
	var ue *flagError
	var xe *app.ExitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.As(err, &xe):
		if !xe.Quiet {
			fmt.Fprintf(stderr, "bulkload: %s\n", xe.Msg)
		}
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "bulkload: interrupted")
	case errors.As(err, &ue):
		usageHint(stderr, ue.cmd, ue.msg)
	case errors.Is(err, app.ErrUsage):
		fmt.Fprintf(stderr, "bulkload: %s\n", strings.TrimPrefix(err.Error(), "usage: "))
	default:
		fmt.Fprintf(stderr, "bulkload: %v\n", err)
	}
	return app.StatusOf(err)
}

// logOptions are the logging flags every command shares.
type logOptions struct {
	format string
	level  string
}

func (o *logOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.format, "log-format", "text", "log format on stderr: text or json (json: every line on stderr is a JSON record)")
	fs.StringVar(&o.level, "log-level", "info", "log level: debug, info, warn or error")
}

// logger builds the one logger of a run. Nothing sensitive is ever passed to
// it: leads are logged by row and leadId, and lead.Input redacts itself.
// With --log-format json, stderr becomes a writer that turns any plain line
// still written to it (an error message) into a JSON record, so that
// nothing on stderr is plain text. It warns about unknown BULKLOAD_*
// variables.
func newLogger(e *app.Env, o *logOptions) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.level)); err != nil {
		return nil, app.UsageErrorf("--log-level %q: want debug, info, warn or error", o.level)
	}
	opts := &slog.HandlerOptions{Level: level}
	if j, ok := e.Stderr.(*jsonLines); ok {
		e.Stderr = j.out // run's early JSON writer: the settings decide now
	}
	var log *slog.Logger
	switch o.format {
	case "text":
		log = slog.New(slog.NewTextHandler(e.Stderr, opts))
	case "json":
		log = slog.New(slog.NewJSONHandler(e.Stderr, opts))
		e.Stderr = &jsonLines{log: log, out: e.Stderr}
		e.JSONLogs = true
	default:
		return nil, app.UsageErrorf("--log-format %q: want text or json", o.format)
	}
	for _, name := range e.UnknownEnv {
		log.Warn("environment variable "+name+" is not a bulkload setting, ignored (misspelt?)", "variable", name, "suggestion", suggestEnv(name))
	}
	return log, nil
}

// jsonLines turns each line written to it into one JSON log record at
// level error (plain lines on stderr are error messages). It is used by one
// goroutine at a time, like the stderr it replaces.
type jsonLines struct {
	log     *slog.Logger
	out     io.Writer // what log writes to
	partial []byte
}

// jsonLogsAsked reports whether the command line or the environment asks
// for JSON logs, before the flags are parsed: --log-format json (or =json)
// among args, else BULKLOAD_LOG_FORMAT=json. (A config file's log-format is
// known only once the flags parse; the command's logger follows it then.)
func jsonLogsAsked(args []string, getenv func(string) string) bool {
	for i, a := range args {
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "log-format" {
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		return value == "json"
	}
	return getenv(envPrefix+"LOG_FORMAT") == "json"
}

func (j *jsonLines) Write(p []byte) (int, error) {
	j.partial = append(j.partial, p...)
	for {
		i := slices.Index(j.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		if line := strings.TrimSpace(string(j.partial[:i])); line != "" {
			j.log.Error(strings.TrimPrefix(line, "bulkload: "))
		}
		j.partial = j.partial[i+1:]
	}
}

// newFlagSet returns a quiet flag set: parse errors and -h are reported by
// parseArgs (a one-line hint, or the help on stdout), never by package flag
// (which would print the whole usage on every typo).
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// flagGroups are the sections a command's help lists its flags in, in
// order, as gh and kubectl group theirs: about 60 upload flags in one
// alphabetical list hid the few a person looks for. A flag of no group is
// listed under "Other flags" (TestHelpGroupsEveryFlag keeps upload's and
// validate's all grouped).
var flagGroups = []struct {
	title string
	flags []string
}{
	{"Settings", []string{"config"}},
	{"Input: what is read, and how", []string{"format", "delimiter", "encoding", "date-order", "mapping", "require-columns", "allow-no-ssn", "shard"}},
	{"Service and authentication (usually in the --config file)", []string{"simulate", "endpoint", "token-url", "auth-url", "tenant-id", "client-id", "client-secret-file", "app-id", "scope", "allow-insecure-http", "timeout"}},
	{"Pacing, retries and outages", []string{"concurrency", "max-concurrency", "rate", "max-rate", "max-attempts", "preflight-wait", "max-consecutive-failures", "outage-wait", "max-retry-wait", "drain-timeout"}},
	{"Outputs", []string{"results", "rejects", "refusals", "summary-json", "report", "o", "metrics-file", "pushgateway", "pushgateway-job", "job-name", "progress", "log-format", "log-level"}},
	{"Resume and overwrite", []string{"resume", "overwrite"}},
	{"The ledger: what earlier runs sent, kept across nights", []string{"ledger", "resend", "resend-changed"}},
	{"Safety: what fails the run, what is never sent twice", []string{"strict", "max-invalid", "allow-empty", "no-submit", "already-submitted", "duplicate-of", "refusal-codes", "denied-codes", "ambiguous-503", "create-document", "submit-document", "lead-document"}},
}

// flagGroup is the index of name's group in flagGroups, or -1.
func flagGroup(name string) int {
	for i, g := range flagGroups {
		if slices.Contains(g.flags, name) {
			return i
		}
	}
	return -1
}

// flagSpelling is how help and completion write a flag: -o for a
// one-letter name (as README.md and the examples do), --name otherwise;
// the flag package takes either.
func flagSpelling(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// printHelp writes a command's help: synopsis, flags in their groups (one
// sentence each; README.md has the details), examples, its exit statuses.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	c, ok := findCommand(fs.Name())
	if !ok {
		c = command{name: fs.Name(), synopsis: fs.Name() + " [flags]", exits: []int{app.ExitOK, app.ExitUsage}}
	}
	fmt.Fprintf(w, "Usage: bulkload %s\n\n", c.synopsis)
	if c.summary != "" {
		fmt.Fprintf(w, "%s.\n\n", capitalize(c.summary))
	}
	fmt.Fprint(w, "Every flag is also BULKLOAD_<FLAG>, or a key of the --config file; details in README.md.\n")
	// A command of a few flags (summary, report) lists them as one; so does
	// one whose flags are mostly of no group (sim's are leadsim's knobs).
	groups := make([][]*flag.Flag, len(flagGroups)+1)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		i := flagGroup(f.Name)
		if i < 0 {
			i = len(flagGroups)
		}
		groups[i] = append(groups[i], f)
		n++
	})
	grouped := n > 12 && 2*len(groups[len(flagGroups)]) < n
	if grouped {
		// Within a group, the order the group gives: the flags a person
		// sets first come first.
		for i := range flagGroups {
			slices.SortStableFunc(groups[i], func(a, b *flag.Flag) int {
				return slices.Index(flagGroups[i].flags, a.Name) - slices.Index(flagGroups[i].flags, b.Name)
			})
		}
	}
	if !grouped {
		fmt.Fprint(w, "\nFlags:\n")
		fs.VisitAll(func(f *flag.Flag) { printFlag(w, f) })
	}
	for i, g := range groups {
		if !grouped || len(g) == 0 {
			continue
		}
		title := "Other flags"
		if i < len(flagGroups) {
			title = flagGroups[i].title
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, f := range g {
			printFlag(w, f)
		}
	}
	if ex := examples(c.name); ex != "" {
		fmt.Fprint(w, "\n"+ex)
	}
	fmt.Fprint(w, "\n"+exitTable(c.name, c.exits))
}

// printFlag writes one flag of a help: its spelling and type, then its one
// sentence and default.
func printFlag(w io.Writer, f *flag.Flag) {
	typ, usage := flag.UnquoteUsage(f)
	fmt.Fprintf(w, "  %s", flagSpelling(f.Name))
	if typ != "" {
		fmt.Fprintf(w, " %s", typ)
	}
	fmt.Fprintf(w, "\n      %s", usage)
	if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" || typ == "int" || typ == "float" {
		if g, ok := f.Value.(flag.Getter); ok && isString(g.Get()) {
			fmt.Fprintf(w, " (default %q)", f.DefValue)
		} else {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
	}
	fmt.Fprintln(w)
}

// examples is a command's Examples section, for its help: the commands a
// person types most, as gh and kubectl show them.
func examples(cmd string) string {
	var ex []string
	switch cmd {
	case "upload":
		ex = []string{
			"# try it against the built-in simulator",
			"bulkload upload --simulate samples/leads.csv",
			"# a nightly export under a fixed name: its own files per day and content, resumable",
			"bulkload upload --config acme.yaml --resume --results 'runs/{name}-{date}-{sha}.results.csv' --rejects 'runs/{name}-{date}-{sha}.rejects.csv' leads.csv",
			"# finish a run that was interrupted (same command, --resume)",
			"bulkload upload --config acme.yaml --resume leads.csv",
			"# fail on any invalid row, and write the summary to standard output",
			"bulkload upload --config acme.yaml --strict --summary-json - leads.csv",
			"# one shard of a backfill, in a Kubernetes Indexed Job (K and N from the Job)",
			"bulkload upload --config acme.yaml --resume --shard auto --results 'runs/{name}.shard-{shard}.results.csv' backfill.csv",
			"# a service behind a gateway that restarts slowly: ask for up to 3 minutes before exit 4",
			"bulkload upload --config acme.yaml --preflight-wait 3m leads.csv",
		}
	case "validate":
		ex = []string{
			"bulkload validate leads.csv",
			"bulkload validate --mapping acme-mapping.yaml --rejects acme.rejects.csv export.csv",
			"zcat export.csv.gz | bulkload validate --format csv -",
		}
	case "auth check":
		ex = []string{
			"bulkload auth check --config acme.yaml",
			"# also ask the service (upload's preflight): exit 4 when it cannot be reached",
			"bulkload auth check --config acme.yaml --endpoint https://leads.example.com/graphql",
		}
	case "sim":
		ex = []string{
			"bulkload sim --addr 127.0.0.1:8787",
			"bulkload sim --rate-limit 300 --rate-limit-change 150@30s",
		}
	case "report":
		ex = []string{
			"bulkload report -o last-night.html runs/leads-2026-11-22-*.results.csv",
			"bulkload report -o backfill.html runs/backfill.shard-*-of-4.results.csv",
			"# a night's report as it was, from the ledger, whatever ran after",
			"bulkload report --run 12 -o run-12.html",
		}
	case "summary":
		ex = []string{
			"bulkload summary runs/backfill.shard-*-of-4.results.csv",
			"bulkload summary --summary-json - runs/leads-2026-11-22-*.results.csv",
			"# a run as the ledger recorded it (bulkload history lists them)",
			"bulkload summary --run 12",
		}
	case "history":
		ex = []string{
			"bulkload history --since 7d",
			"bulkload history --partner acme --ledger /var/lib/bulkload/ledger.sqlite",
			"bulkload history --json --since 2026-11-20",
		}
	default:
		return ""
	}
	var b strings.Builder
	b.WriteString("Examples:\n")
	for _, l := range ex {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	return b.String()
}
