package main

import (
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/internal/completion"
)

// runCompletion prints a completion script for bash, zsh or fish, generated
// from the commands' flag sets, so it never lags behind a new flag.
func runCompletion(e *app.Env, args []string) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprint(e.Stdout, `Usage: bulkload completion bash|zsh|fish

Print a shell completion script. To load it:
  bash:  source <(bulkload completion bash)    (or save it in /etc/bash_completion.d/bulkload)
  zsh:   source <(bulkload completion zsh)     (or save it as _bulkload in a directory of $fpath)
  fish:  bulkload completion fish > ~/.config/fish/completions/bulkload.fish

Examples:
  source <(bulkload completion bash)
  bulkload completion zsh > "${fpath[1]}/_bulkload"

`+exitTable("completion", []int{app.ExitOK, app.ExitUsage}))
		return app.ExitOK
	}
	if len(args) != 1 {
		return usageHint(e.Stderr, "completion", "completion needs one shell: bash, zsh or fish")
	}
	cmds := completionCommands()
	switch args[0] {
	case "bash":
		completion.Bash(e.Stdout, cmds)
	case "zsh":
		completion.Zsh(e.Stdout, cmds)
	case "fish":
		completion.Fish(e.Stdout, cmds)
	default:
		msg := fmt.Sprintf("completion: unknown shell %q, want bash, zsh or fish", args[0])
		if s := suggest(args[0], []string{"bash", "zsh", "fish"}); len(s) > 0 {
			msg += fmt.Sprintf("; did you mean %q?", s[0])
		}
		return usageHint(e.Stderr, "completion", msg)
	}
	return app.ExitOK
}

// flagChoices are the values of flags that take one of a few words.
func flagChoices(name string) []string {
	switch name {
	case "log-format":
		return []string{"text", "json"}
	case "log-level":
		return []string{"debug", "info", "warn", "error"}
	case "progress":
		return []string{"auto", "bar", "log", "off"}
	case "date-order":
		return []string{"mdy", "dmy"}
	case "format":
		return []string{"csv", "jsonl"}
	case "encoding":
		return []string{"utf-8", "latin1", "windows-1252"}
	case "delimiter":
		return []string{",", ";", "|", "tab"}
	case "rate", "shard", "concurrency":
		// A number, or auto: the one word worth offering (never a file).
		return []string{"auto"}
	}
	return nil
}

func completionCommands() []completion.Command {
	var out []completion.Command
	for _, c := range commands() {
		cc := completion.Command{Words: strings.Fields(c.name), Summary: c.summary}
		switch c.name {
		case "completion":
			cc.Args = []string{"bash", "zsh", "fish"}
		case "version", "sim", "auth check":
			cc.NoFiles = true
		}
		if c.flags != nil {
			c.flags().VisitAll(func(f *flag.Flag) {
				cf := completion.Flag{Name: f.Name, Help: completion.FirstSentence(f.Usage), Choices: flagChoices(f.Name)}
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
					cf.IsBool = true
				}
				cc.Flags = append(cc.Flags, cf)
			})
		}
		sort.Slice(cc.Flags, func(i, j int) bool { return cc.Flags[i].Name < cc.Flags[j].Name })
		out = append(out, cc)
	}
	return out
}
