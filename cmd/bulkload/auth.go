package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/ledger"
	"github.com/bulkload/bulkload/token"
)

// authOptions are the settings of authentication, shared by upload and
// auth check. The client secret is deliberately not among the flags: it
// comes only from BULKLOAD_CLIENT_SECRET or --client-secret-file, so it never
// appears in a process listing or a shell history.
type authOptions struct {
	endpoint   string
	tokenURL   string
	authURL    string
	tenantID   string
	clientID   string
	appID      string
	scope      string
	secretFile string
	simulate   bool
	insecure   bool // --allow-insecure-http
}

func (o *authOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.endpoint, "endpoint", "", "lead GraphQL endpoint, e.g. https://HOST/graphql")
	fs.StringVar(&o.tokenURL, "token-url", "", "full token URL (or give --auth-url and --tenant-id)")
	fs.StringVar(&o.authURL, "auth-url", "", "identity provider base URL, giving the token URL AUTH_URL/TENANT_ID/oauth2/v2.0/token")
	fs.StringVar(&o.tenantID, "tenant-id", "", "tenant id of the service operator")
	fs.StringVar(&o.clientID, "client-id", "", "client (application) id issued for this environment")
	fs.StringVar(&o.appID, "app-id", "", "debt core app id; the scope is api://APP_ID/.default")
	fs.StringVar(&o.scope, "scope", "", "OAuth scope (overrides --app-id)")
	fs.StringVar(&o.secretFile, "client-secret-file", "", "file holding the client secret (or set BULKLOAD_CLIENT_SECRET)")
	fs.BoolVar(&o.simulate, "simulate", false, "run against the built-in simulator on 127.0.0.1, with its own credentials")
	fs.BoolVar(&o.insecure, "allow-insecure-http", false, "accept http:// (unencrypted) --endpoint and token URLs on hosts other than this machine")
}

// account is the service account as given (endpoint and client id), for
// the ledger's record of a run that stopped before its credentials were
// resolved.
func (o *authOptions) account() ledger.Account {
	return ledger.Account{Endpoint: o.endpoint, ClientID: o.clientID}
}

// resolve derives the token URL and scope and reads the secret. It checks
// every setting before any network I/O and says which one is missing; log
// gets the warning of a secret file that others may read.
//
// --token-url and --scope are alternatives to --auth-url with --tenant-id
// and to --app-id: the one set at the stronger level (flag, environment,
// config file) wins, so a flag is never overridden by an alternative that
// comes from the environment or the file. At the same level the full value
// (--token-url, --scope) wins.
func (o *authOptions) resolve(getenv func(string) string, from map[string]int, needEndpoint bool, log *slog.Logger) (app.Credentials, error) {
	r := app.Credentials{Endpoint: o.endpoint, TokenURL: o.tokenURL, ClientID: o.clientID, Scope: o.scope, Insecure: o.insecure}
	if (o.authURL == "") != (o.tenantID == "") {
		return r, app.UsageErrorf("--auth-url and --tenant-id go together (the token URL is AUTH_URL/TENANT_ID/oauth2/v2.0/token); or give --token-url alone")
	}
	if r.TokenURL != "" && o.authURL != "" && from["token-url"] < max(from["auth-url"], from["tenant-id"]) {
		r.TokenURL = ""
	}
	if r.Scope != "" && o.appID != "" && from["scope"] < from["app-id"] {
		r.Scope = ""
	}
	var missing []string
	if needEndpoint && r.Endpoint == "" {
		missing = append(missing, "--endpoint (BULKLOAD_ENDPOINT)")
	}
	if r.TokenURL == "" {
		if o.authURL == "" || o.tenantID == "" {
			missing = append(missing, "--token-url, or --auth-url with --tenant-id")
		} else {
			r.TokenURL = token.URL(o.authURL, o.tenantID)
		}
	}
	if r.ClientID == "" {
		missing = append(missing, "--client-id (BULKLOAD_CLIENT_ID)")
	}
	if r.Scope == "" {
		if o.appID == "" {
			missing = append(missing, "--app-id or --scope")
		} else {
			r.Scope = "api://" + o.appID + "/.default"
		}
	}
	// The secret's own precedence: --client-secret-file as a flag, then
	// BULKLOAD_CLIENT_SECRET, then a secret file named by the environment
	// or the config file.
	envSecret := getenv(envPrefix + "CLIENT_SECRET")
	switch {
	case o.secretFile != "" && (envSecret == "" || from["client-secret-file"] == fromFlag):
		b, st, err := app.ReadSetting("--client-secret-file", o.secretFile)
		if err != nil {
			return r, err
		}
		if w := app.SecretFileWarning("--client-secret-file", o.secretFile, st.Mode(), app.OwnerOf(st), app.ProcessIdentity()); w != "" {
			log.Warn(w, "path", o.secretFile, "mode", fmt.Sprintf("%04o", st.Mode().Perm()))
		}
		r.Secret = strings.TrimSpace(string(b))
		if r.Secret == "" {
			return r, app.UsageErrorf("--client-secret-file %s is empty", o.secretFile)
		}
	case envSecret != "":
		r.Secret = envSecret
	default:
		missing = append(missing, "the client secret (BULKLOAD_CLIENT_SECRET or --client-secret-file)")
	}
	if len(missing) > 0 {
		return r, app.UsageErrorf("missing settings: %s (or use --simulate to run against the built-in simulator)", strings.Join(missing, "; "))
	}
	return r, r.Check()
}

// registerAuthTimeout registers auth check's --timeout.
func registerAuthTimeout(timeout *time.Duration) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		fs.DurationVar(timeout, "timeout", 30*time.Second, "give up on the token request after this long")
	}
}

// credentials are the settings a command talks to the service with: with
// --simulate, the built-in simulator's, started here and stopped by
// release; else the flags, environment and config file resolved (resolve).
func (o *authOptions) credentials(ctx context.Context, e *app.Env, from map[string]int, needEndpoint bool, log *slog.Logger) (creds app.Credentials, release func(), err error) {
	if !o.simulate {
		creds, err = o.resolve(e.Getenv, from, needEndpoint, log)
		return creds, func() {}, err
	}
	sim, err := app.StartSim(ctx, e.Deps, log)
	if err != nil {
		return app.Credentials{}, nil, err
	}
	return sim.Credentials(), func() { sim.Close() }, nil
}
