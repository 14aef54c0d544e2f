package app

import (
	"errors"
	"strings"

	"github.com/bulkload/bulkload/mapper"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/reader"
	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
	"github.com/bulkload/bulkload/token"
)

// authFlags says how the command line sets the settings an AuthError asks
// to check; "" when no setting can help.
func authFlags(c token.Check) string {
	switch c {
	case token.CheckClient:
		return "--client-id; BULKLOAD_CLIENT_SECRET or --client-secret-file"
	case token.CheckScope:
		return "--app-id or --scope"
	case token.CheckTokenURL:
		return "--auth-url / --tenant-id / --token-url"
	case token.CheckAll:
		return "--token-url, --client-id, --scope, BULKLOAD_CLIENT_SECRET or --client-secret-file"
	}
	return ""
}

// cliHints are the command line's words for the settings that summaries,
// reports and metrics advise: the libraries say what to do, the command
// line which flag does it.
func cliHints() summary.Hints {
	return summary.Hints{Resume: "--resume", ResendChanged: "--resend-changed", MaxInvalid: "--max-invalid", Rate: "--rate", Concurrency: "--concurrency", RetryWait: "--max-retry-wait"}
}

// inputHints are the command line's words for the settings that read an
// input otherwise, which the reader's and the mapper's rules advise.
func inputHints() mapper.Hints {
	return mapper.Hints{Encoding: "--encoding windows-1252", DayFirst: "--date-order dmy", MonthFirst: "--date-order mdy"}
}

// settingFlags says how the command line sets the submitter.Config fields
// a SettingError names; "" when no flag does.
func settingFlags(fields []string) string {
	switch strings.Join(fields, ",") {
	case "Endpoint":
		return "--endpoint"
	case "TokenURL":
		return "--token-url or --auth-url with --tenant-id"
	case "ClientID":
		return "--client-id"
	case "ClientSecret":
		return "BULKLOAD_CLIENT_SECRET or --client-secret-file"
	case "Scope":
		return "--app-id or --scope"
	case "Rate":
		return "--rate"
	case "StartRate,MaxRate":
		return "--max-rate"
	case "Concurrency,StartConcurrency,MaxConcurrency":
		return "--concurrency, --max-concurrency"
	case "MaxAttempts":
		return "--max-attempts"
	case "CallTimeout,BackoffBase,BackoffMax":
		return "--timeout"
	}
	return ""
}

// settingText is a SettingError's text with the flags that set it.
func settingText(se *submitter.SettingError) string {
	flags := settingFlags(se.Fields)
	switch {
	case flags == "":
		return se.Error()
	case se.Problem == submitter.ProblemMissing:
		return se.Text + " (set " + flags + ")"
	case se.Problem == submitter.ProblemInsecure:
		return se.Text + "; use https (check " + flags + "), or --allow-insecure-http to accept it"
	}
	return se.Text + " (check " + flags + ")"
}

// configText is a ConfigError's text with each problem's flags right after
// it.
func configText(ce *submitter.ConfigError) string {
	var b strings.Builder
	rest := ce.Error()
	for _, p := range ce.Problems {
		i := strings.Index(rest, p.Error())
		if i < 0 {
			continue
		}
		b.WriteString(rest[:i])
		b.WriteString(settingText(p))
		rest = rest[i+len(p.Error()):]
	}
	b.WriteString(rest)
	return b.String()
}

// flagHint adds the command line's advice to a library's error: the
// libraries say what failed and with which data; which flag changes it is
// the command line's to say. The advice goes right after the library
// error's own text, wherever that stands in err's. An error with no hint is
// returned as it is.
func flagHint(err error) error {
	var (
		fe  *reader.FormatError
		he  *reader.HeaderError
		oe  *outfile.OutcomesError
		h   *hintError
		ae  *token.AuthError
		ue  *submitter.UnreachableError
		tre *token.ReplyError
		ce  *submitter.ConfigError
	)
	switch {
	case err == nil, errors.As(err, &h):
		return err // nothing to advise, or advised already
	case errors.As(err, &ce):
		return &hintError{err, ce, configText(ce)}
	case errors.As(err, &oe):
		return after(err, oe, ": choose another path, or pass --overwrite to replace it")
	case errors.As(err, &ae) && authFlags(ae.Check) != "":
		return after(err, ae, " ("+authFlags(ae.Check)+")")
	case errors.As(err, &ue) && ue.GraphQL:
		// The URL is the flag's value: name the flag before it.
		return &hintError{err, ue, strings.Replace(ue.Error(), ue.URL, "--endpoint "+ue.URL, 1)}
	case errors.As(err, &ue) && !errors.As(err, &tre):
		return &hintError{err, ue, strings.Replace(ue.Error(), ue.URL, ue.URL+" (check --auth-url and --tenant-id, or --token-url)", 1)}
	case errors.Is(err, outfile.ErrLocked):
		// outfile.Lock's whole error: ErrLocked with the holder's details.
		return after(err, err, "; wait for that run to end, or stop it (a run that continues it: --resume)")
	case errors.As(err, &fe):
		return after(err, fe, ": pass --format csv or --format jsonl")
	case errors.As(err, &he):
		return after(err, he, " Add one, or map the columns with --mapping")
	}
	return err
}

// after puts hint right after lib's text in err's.
func after(err, lib error, hint string) error {
	return &hintError{err, lib, lib.Error() + hint}
}

// hintError is err with lib's text, within err's, replaced by text (lib's
// own and the command line's advice); errors.Is and errors.As see err's
// chain.
type hintError struct {
	err  error
	lib  error
	text string
}

func (e *hintError) Error() string {
	return strings.Replace(e.err.Error(), e.lib.Error(), e.text, 1)
}

func (e *hintError) Unwrap() error { return e.err }
