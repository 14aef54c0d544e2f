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

// parseSettings is how every command reads its settings: it registers
// --config on fs, parses args, fills the flags not given from the
// environment and the config file, and checks that there are nargs
// positional arguments (name is the command, for the message).
func parseSettings(fs *flag.FlagSet, args []string, getenv func(string) string, name string, nargs int) ([]string, error) {
	var cfgPath string
	fs.StringVar(&cfgPath, "config", "", "YAML file of settings (keys are flag names; also BULKLOAD_CONFIG)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	if cfgPath == "" {
		cfgPath = getenv(envPrefix + "CONFIG")
	}
	if err := applyPrecedence(fs, getenv, cfgPath); err != nil {
		return nil, err
	}
	switch {
	case len(pos) == nargs:
		return pos, nil
	case nargs == 0:
		return nil, usageErrorf("%s takes no arguments, got %q", name, pos)
	default:
		fs.Usage()
		return nil, usageErrorf("%s takes exactly one FILE, got %d", name, len(pos))
	}
}

// applyPrecedence fills every flag not given on the command line, first from
// its BULKLOAD_* environment variable, then from the YAML config file named
// by --config (or BULKLOAD_CONFIG). Precedence is resolved here, once, before
// any other I/O: flag, environment, config file, default.
func applyPrecedence(fs *flag.FlagSet, getenv func(string) string, configPath string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })

	var setErr error
	fs.VisitAll(func(f *flag.Flag) {
		if setErr != nil || given[f.Name] || f.Name == "config" {
			return
		}
		if v := getenv(envName(f.Name)); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				setErr = usageErrorf("environment %s: %v", envName(f.Name), err)
				return
			}
			given[f.Name] = true
		}
	})
	if setErr != nil || configPath == "" {
		return setErr
	}

	values, err := loadConfigFile(configPath)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "client-secret" || k == "client_secret" {
			return usageErrorf("config file %s: the client secret may not be stored in the config file; set BULKLOAD_CLIENT_SECRET or client-secret-file", configPath)
		}
		f := fs.Lookup(k)
		if f == nil || k == "config" {
			return usageErrorf("config file %s: unknown setting %q (settings are the flag names of this command, e.g. endpoint, concurrency)", configPath, k)
		}
		if given[k] {
			continue
		}
		if err := fs.Set(k, values[k]); err != nil {
			return usageErrorf("config file %s: %s: %v", configPath, k, err)
		}
	}
	return nil
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
