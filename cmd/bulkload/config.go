package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bulkload/bulkload/leadsim"
)

// envPrefix is the prefix of the environment variable that stands in for a
// flag: --token-url is BULKLOAD_TOKEN_URL.
const envPrefix = "BULKLOAD_"

// errUsage marks an error that is the user's to fix on the command line, the
// environment or the config file; run maps it to exitUsage.
var errUsage = errors.New("usage")

func usageErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// envName returns the environment variable that stands in for flag name.
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseArgs parses args into fs, letting flags and positional arguments be
// interleaved ("validate leads.csv --results out.csv" works), and returns the
// positional arguments.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageErrorf("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
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
func parseSettings(fs *flag.FlagSet, args []string, getenv func(string) string, name string, nargs int) ([]string, map[string]int, error) {
	var cfgPath string
	fs.StringVar(&cfgPath, "config", "", "YAML file of settings (keys are flag names; also BULKLOAD_CONFIG)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, nil, err
	}
	if cfgPath == "" {
		cfgPath = getenv(envPrefix + "CONFIG")
	}
	from, err := applyPrecedence(fs, getenv, cfgPath)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case len(pos) == nargs:
		return pos, from, nil
	case nargs == 0:
		return nil, nil, usageErrorf("%s takes no arguments, got %q", name, pos)
	default:
		fs.Usage()
		return nil, nil, usageErrorf("%s takes exactly one FILE, got %d", name, len(pos))
	}
}

// knownSettings is every setting of every command, so that one config file
// can serve them all: a key that another command takes is ignored, only a
// key that no command takes is an error.
func knownSettings() map[string]bool {
	var (
		in   inputOptions
		auth authOptions
		up   uploadOptions
		logs logOptions
		sim  leadsim.Options
	)
	// Commands share some names (tenant-id, app-id): one flag set each.
	sets := []func(*flag.FlagSet){in.register, auth.register, up.register, logs.register, sim.RegisterFlags,
		func(fs *flag.FlagSet) { fs.String("addr", "", "") }}
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
				setErr = usageErrorf("environment %s: %v", envName(f.Name), err)
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
			return nil, usageErrorf("config file %s: the client secret may not be stored in the config file; set BULKLOAD_CLIENT_SECRET or client-secret-file", configPath)
		}
		f := fs.Lookup(k)
		if f == nil || k == "config" {
			if known == nil {
				known = knownSettings()
			}
			if known[k] && k != "config" {
				continue // another command's setting
			}
			return nil, usageErrorf("config file %s: unknown setting %q (settings are the flag names of bulkload's commands, e.g. endpoint, rate)", configPath, k)
		}
		if from[k] != fromDefault {
			continue
		}
		if err := fs.Set(k, values[k]); err != nil {
			return nil, usageErrorf("config file %s: %s: %v", configPath, k, err)
		}
		from[k] = fromFile
	}
	return from, nil
}

// loadConfigFile reads a flat YAML mapping of flag names to values.
func loadConfigFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErrorf("config file: %v", err)
	}
	defer f.Close()
	var raw map[string]any
	if err := yaml.NewDecoder(f).Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return nil, usageErrorf("config file %s: %v", path, err)
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
			return nil, usageErrorf("config file %s: %s: want a single value, got %T", path, k, v)
		}
	}
	return out, nil
}
