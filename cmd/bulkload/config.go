package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

// envPrefix is the prefix of the environment variable that stands in for a
// flag: --token-url is BULKLOAD_TOKEN_URL.
const envPrefix = "BULKLOAD_"

// envName returns the environment variable that stands in for flag name.
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseArgs parses args into fs, letting flags and positional arguments be
// interleaved ("validate leads.csv --results out.csv" works), and returns the
// positional arguments. -h prints the command's help on stdout (ErrHelp);
// a parse error comes back as a one-line message naming the flag, with the
// nearest flags for a misspelt one.
func parseArgs(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printHelp(stdout, fs)
				return nil, err
			}
			return nil, flagParseError(fs, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// flagError is a usage error on the command line of command cmd: run prints
// Msg and a one-line hint to cmd's help.
type flagError struct {
	cmd string
	msg string
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return app.ErrUsage }

// flagParseError rewords package flag's parse errors ("flag provided but
// not defined: -concurency") for a person: which flag, what it wants, and
// the nearest flags to a misspelt one.
func flagParseError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag --" + name
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if s := suggest(name, names); len(s) > 0 {
			msg += "; did you mean --" + strings.Join(s, " or --") + "?"
		}
		if fs.Name() == "upload" && (name == "dry-run" || name == "dryrun" || name == "n") {
			msg += "; a dry run is its own command: bulkload validate FILE reads and validates every row and sends nothing"
		}
	} else if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		msg = "--" + name + " needs a value"
		if f := fs.Lookup(name); f != nil {
			msg += ": " + typeWords(f)
		}
	} else if m := regexp.MustCompile(invalidFlagValue).FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("--%s %q: want %s", m[2], m[1], typeWords(fs.Lookup(m[2])))
	}
	return &flagError{cmd: fs.Name(), msg: msg}
}

// invalidFlagValue matches package flag's message for a value that does
// not parse: `invalid value "x" for flag -concurrency: parse error`.
const invalidFlagValue = `^invalid (?:boolean )?value "(.*)" for flag -([a-z0-9-]+): `

// typeWords says in words what a flag's value must be.
func typeWords(f *flag.Flag) string {
	if f == nil {
		return "a valid value"
	}
	if f.Name == "rate" {
		return "auto, or a number of calls per second such as 20 (0: unlimited)"
	}
	if f.Name == "concurrency" {
		return "auto, or a whole number of calls in flight such as 8"
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return "a valid value"
	}
	switch g.Get().(type) {
	case bool:
		return "true or false"
	case int, int64, uint, uint64:
		return "a whole number, e.g. 8"
	case float64:
		return "a number, e.g. 20 or 2.5"
	case time.Duration:
		return "a duration, e.g. 30s, 5m or 1h30m"
	default:
		return "text"
	}
}

// suggest returns the candidates nearest to word (edit distance at most a
// third of its length, at least 2; or word is a prefix), nearest first, at
// most three.
func suggest(word string, candidates []string) []string {
	type scored struct {
		s string
		d int
	}
	limit := max(2, len(word)/3)
	var out []scored
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if d <= limit || (len(word) >= 3 && strings.HasPrefix(strings.ToLower(c), strings.ToLower(word))) {
			out = append(out, scored{c, d})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].d < out[j].d })
	var names []string
	for _, o := range out[:min(3, len(out))] {
		names = append(names, o.s)
	}
	return names
}

// editDistance is the Levenshtein distance of a and b (bytes; flag and
// command names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// envListKey is the key under which run's getenv lists the names of the
// BULKLOAD_* variables set, space-separated. getenv is run's only view of
// the environment, and a misspelt variable must be found to be warned
// about; lookupEnv answers it.
const envListKey = "BULKLOAD_*"

// lookupEnv returns a getenv over environ ("KEY=VALUE" pairs, as
// os.Environ gives them) that also answers envListKey.
func lookupEnv(environ []string) func(string) string {
	vars := make(map[string]string, len(environ))
	var names []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
		if strings.HasPrefix(k, envPrefix) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	list := strings.Join(names, " ")
	return func(k string) string {
		if k == envListKey {
			return list
		}
		return vars[k]
	}
}

// envSettings are the variables bulkload reads beyond the flags' own
// (BULKLOAD_TEST_AS_MAIN: the tests' subprocesses).
func envSettings() []string { return []string{"CONFIG", "CLIENT_SECRET", "TEST_AS_MAIN"} }

// UnknownEnv returns the BULKLOAD_* variables set that no command reads.
func unknownEnv(getenv func(string) string) []string {
	var unknown []string
	known := knownSettings()
	for _, name := range strings.Fields(getenv(envListKey)) {
		key := strings.TrimPrefix(name, envPrefix)
		if slices.Contains(envSettings(), key) || known[strings.ToLower(strings.ReplaceAll(key, "_", "-"))] {
			continue
		}
		unknown = append(unknown, name)
	}
	return unknown
}

// suggestEnv names the nearest BULKLOAD_* variables to name, or "",
// comparing the names after the prefix they all share.
func suggestEnv(name string) string {
	var keys []string
	for k := range knownSettings() {
		keys = append(keys, strings.TrimPrefix(envName(k), envPrefix))
	}
	keys = append(keys, envSettings()[:2]...)
	sort.Strings(keys)
	var names []string
	for _, k := range suggest(strings.TrimPrefix(name, envPrefix), keys) {
		names = append(names, envPrefix+k)
	}
	return strings.Join(names, " or ")
}

// registerConfig registers --config, which every command takes.
func registerConfig(fs *flag.FlagSet, path *string) {
	fs.StringVar(path, "config", "", "YAML file of settings whose keys are flag names (also BULKLOAD_CONFIG)")
}

// Where a setting's value came from, weakest first. Settings that are
// alternatives to each other (--token-url or --auth-url with --tenant-id;
// --scope or --app-id) compare these, so that a flag still beats an
// alternative from the environment or the config file.
const (
	fromDefault = iota
	fromFile
	fromEnv
	fromFlag
)

// parseSettings is how every command reads its settings: it registers
// --config on fs, parses args, fills the flags not given from the
// environment and the config file, and checks that there are nargs
// positional arguments (name is the command, for the message). It returns
// the positional arguments and where each setting came from.
// nargs is the number of positional arguments; -1 is one or more, -2 any
// number (the command checks them).
func parseSettings(fs *flag.FlagSet, args []string, e *app.Env, name string, nargs int) ([]string, map[string]int, error) {
	var cfgPath string
	registerConfig(fs, &cfgPath)
	pos, err := parseArgs(fs, args, e.Stdout)
	if err != nil {
		return nil, nil, err
	}
	if cfgPath == "" {
		cfgPath = e.Getenv(envPrefix + "CONFIG")
	}
	from, err := applyPrecedence(fs, e.Getenv, cfgPath)
	if err != nil {
		return nil, nil, err
	}
	// No duration of any command may be negative (a negative timeout or
	// drain would end at once, silently).
	fs.VisitAll(func(f *flag.Flag) {
		if g, ok := f.Value.(flag.Getter); ok && err == nil {
			if d, ok := g.Get().(time.Duration); ok && d < 0 {
				err = app.UsageErrorf("--%s %v: a duration may not be negative", f.Name, d)
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	switch {
	case len(pos) == nargs, nargs == -1 && len(pos) > 0, nargs == -2:
		return pos, from, nil
	case nargs < 0:
		return nil, nil, &flagError{cmd: name, msg: fmt.Sprintf("%s needs at least one FILE", name)}
	case nargs == 0:
		return nil, nil, &flagError{cmd: name, msg: fmt.Sprintf("%s takes no arguments, got %q", name, pos)}
	case len(pos) == 0:
		return nil, nil, &flagError{cmd: name, msg: fmt.Sprintf("%s needs a FILE (\"-\" for standard input)", name)}
	default:
		return nil, nil, &flagError{cmd: name, msg: fmt.Sprintf("%s takes exactly one FILE, got %d: %q (flags go before or after it, each with its own --)", name, len(pos), pos)}
	}
}

// knownSettings is every setting of every command, so that one config file
// can serve them all: a key that another command takes is ignored, only a
// key that no command takes is an error.
func knownSettings() map[string]bool {
	var (
		in   = app.NewInputOptions("")
		auth authOptions
		up   = app.NewUploadOptions()
		logs logOptions
		sim  leadsim.Options
	)
	// Commands share some names (tenant-id, app-id): one flag set each.
	sets := []func(*flag.FlagSet){
		func(fs *flag.FlagSet) { registerInput(fs, in) }, func(fs *flag.FlagSet) { registerRefusals(fs, in) },
		auth.register, func(fs *flag.FlagSet) { registerUpload(fs, up) }, logs.register, sim.RegisterFlags,
		func(fs *flag.FlagSet) { fs.String("addr", "", "") }, registerAuthTimeout(new(time.Duration)),
		func(fs *flag.FlagSet) { registerMetrics(fs, app.NewMetricsOptions()) },
		func(fs *flag.FlagSet) { registerSummary(fs, new(app.SummaryOptions)) },
		func(fs *flag.FlagSet) { registerChecks(fs, app.NewCheckOptions(true), true) },
		func(fs *flag.FlagSet) { registerLedger(fs, new(app.LedgerOptions)) }}
	known := map[string]bool{}
	for _, register := range sets {
		fs := flag.NewFlagSet("settings", flag.ContinueOnError)
		register(fs)
		fs.VisitAll(func(f *flag.Flag) { known[f.Name] = true })
	}
	return known
}

// applyPrecedence fills every flag not given on the command line, first from
// its BULKLOAD_* environment variable, then from the YAML config file named
// by --config (or BULKLOAD_CONFIG). Precedence is resolved here, once, before
// any other I/O: flag, environment, config file, default. It returns where
// each setting's value came from.
func applyPrecedence(fs *flag.FlagSet, getenv func(string) string, configPath string) (map[string]int, error) {
	from := map[string]int{}
	fs.Visit(func(f *flag.Flag) { from[f.Name] = fromFlag })

	var setErr error
	fs.VisitAll(func(f *flag.Flag) {
		// A flag named client-secret (the simulator's public fake) is never
		// filled from the environment or a file: BULKLOAD_CLIENT_SECRET is
		// the real secret of upload, which sim would print.
		if setErr != nil || from[f.Name] != fromDefault || f.Name == "config" || f.Name == "client-secret" {
			return
		}
		if v := getenv(envName(f.Name)); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				setErr = app.UsageErrorf("environment %s=%q: want %s", envName(f.Name), v, typeWords(f))
				return
			}
			from[f.Name] = fromEnv
		}
	})
	if setErr != nil || configPath == "" {
		return from, setErr
	}

	values, err := loadConfigFile(configPath)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var known map[string]bool
	for _, k := range keys {
		if k == "client-secret" || k == "client_secret" {
			return nil, app.UsageErrorf("config file %s: the client secret may not be stored in the config file; set BULKLOAD_CLIENT_SECRET or client-secret-file", configPath)
		}
		f := fs.Lookup(k)
		if f == nil || k == "config" {
			if known == nil {
				known = knownSettings()
			}
			if known[k] && k != "config" {
				continue // another command's setting
			}
			hint := "settings are the flag names of bulkload's commands, e.g. endpoint, rate"
			names := make([]string, 0, len(known))
			for name := range known {
				names = append(names, name)
			}
			sort.Strings(names)
			if s := suggest(k, names); len(s) > 0 {
				hint = "did you mean " + strings.Join(s, " or ") + "?"
			}
			return nil, app.UsageErrorf("config file %s: unknown setting %q (%s)", configPath, k, hint)
		}
		if from[k] != fromDefault {
			continue
		}
		if err := fs.Set(k, values[k]); err != nil {
			return nil, app.UsageErrorf("config file %s: %s: %q is not %s", configPath, k, values[k], typeWords(f))
		}
		from[k] = fromFile
	}
	return from, nil
}

// loadConfigFile reads a flat YAML mapping of flag names to values.
func loadConfigFile(path string) (map[string]string, error) {
	f, err := app.OpenSetting("config file", path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var raw map[string]any
	if err := yaml.NewDecoder(f).Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return nil, app.UsageErrorf("config file %s: %v", path, err)
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		switch v := v.(type) {
		case string:
			out[k] = v
		case bool:
			out[k] = strconv.FormatBool(v)
		case int:
			out[k] = strconv.Itoa(v)
		case float64:
			out[k] = strconv.FormatFloat(v, 'f', -1, 64)
		case nil:
			out[k] = ""
		default:
			return nil, app.UsageErrorf("config file %s: %s: want a single value (text, a number or true/false), got %s", path, k, yamlKind(v))
		}
	}
	return out, nil
}

// yamlKind names a decoded YAML value's kind in words.
func yamlKind(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping of keys to values"
	default:
		return fmt.Sprintf("a value of type %T", v)
	}
}
