package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/submitter"
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

// resolved is authOptions after defaults and derivations.
type resolved struct {
	endpoint string
	tokenURL string
	clientID string
	secret   string
	scope    string
	insecure bool // --allow-insecure-http
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
func (o *authOptions) resolve(getenv func(string) string, from map[string]int, needEndpoint bool, log *slog.Logger) (resolved, error) {
	r := resolved{endpoint: o.endpoint, tokenURL: o.tokenURL, clientID: o.clientID, scope: o.scope, insecure: o.insecure}
	if (o.authURL == "") != (o.tenantID == "") {
		return r, usageErrorf("--auth-url and --tenant-id go together (the token URL is AUTH_URL/TENANT_ID/oauth2/v2.0/token); or give --token-url alone")
	}
	if r.tokenURL != "" && o.authURL != "" && from["token-url"] < max(from["auth-url"], from["tenant-id"]) {
		r.tokenURL = ""
	}
	if r.scope != "" && o.appID != "" && from["scope"] < from["app-id"] {
		r.scope = ""
	}
	var missing []string
	if needEndpoint && r.endpoint == "" {
		missing = append(missing, "--endpoint (BULKLOAD_ENDPOINT)")
	}
	if r.tokenURL == "" {
		if o.authURL == "" || o.tenantID == "" {
			missing = append(missing, "--token-url, or --auth-url with --tenant-id")
		} else {
			r.tokenURL = leadsim.TokenURL(o.authURL, o.tenantID)
		}
	}
	if r.clientID == "" {
		missing = append(missing, "--client-id (BULKLOAD_CLIENT_ID)")
	}
	if r.scope == "" {
		if o.appID == "" {
			missing = append(missing, "--app-id or --scope")
		} else {
			r.scope = "api://" + o.appID + "/.default"
		}
	}
	// The secret's own precedence: --client-secret-file as a flag, then
	// BULKLOAD_CLIENT_SECRET, then a secret file named by the environment
	// or the config file.
	envSecret := getenv(envPrefix + "CLIENT_SECRET")
	switch {
	case o.secretFile != "" && (envSecret == "" || from["client-secret-file"] == fromFlag):
		b, st, err := readSetting("--client-secret-file", o.secretFile)
		if err != nil {
			return r, err
		}
		if perm := st.Mode().Perm(); perm&0o077 != 0 {
			log.Warn(fmt.Sprintf("--client-secret-file %s is readable by others than its owner (mode %04o): chmod 600 it", o.secretFile, perm),
				"path", o.secretFile, "mode", fmt.Sprintf("%04o", perm))
		}
		r.secret = strings.TrimSpace(string(b))
		if r.secret == "" {
			return r, usageErrorf("--client-secret-file %s is empty", o.secretFile)
		}
	case envSecret != "":
		r.secret = envSecret
	default:
		missing = append(missing, "the client secret (BULKLOAD_CLIENT_SECRET or --client-secret-file)")
	}
	if len(missing) > 0 {
		return r, usageErrorf("missing settings: %s (or use --simulate to run against the built-in simulator)", strings.Join(missing, "; "))
	}
	for name, u := range map[string]string{"--endpoint": r.endpoint, "token URL": r.tokenURL} {
		if u == "" {
			continue
		}
		if p, err := url.Parse(u); err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return r, usageErrorf("%s %q is not an http(s) URL", name, submitter.RedactURL(u))
		}
	}
	return r, nil
}

// registerAuthTimeout registers auth check's --timeout.
func registerAuthTimeout(timeout *time.Duration) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		fs.DurationVar(timeout, "timeout", 30*time.Second, "give up on the token request after this long")
	}
}

func runAuthCheck(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet("auth check", "auth check [flags]", e.stderr)
	var (
		auth    authOptions
		logs    logOptions
		timeout time.Duration
	)
	auth.register(fs)
	logs.register(fs)
	registerAuthTimeout(&timeout)(fs)
	_, from, err := parseSettings(fs, args, e, "auth check", 0)
	if err != nil {
		return exitFor(e.stderr, err)
	}
	log, err := e.logger(&logs)
	if err != nil {
		return exitFor(e.stderr, err)
	}

	var cfg resolved
	if auth.simulate {
		sim, err := startSim(ctx, log)
		if err != nil {
			return exitFor(e.stderr, err)
		}
		defer sim.close()
		cfg = sim.credentials()
	} else if cfg, err = auth.resolve(e.getenv, from, false, log); err != nil {
		return exitFor(e.stderr, err)
	}

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	endpoint := cfg.endpoint
	if endpoint == "" {
		// Without --endpoint auth check calls no API; the client only
		// wants a well-formed URL.
		endpoint = cfg.tokenURL
	}
	client, err := submitter.New(ctx, submitter.Config{
		Endpoint: endpoint, TokenURL: cfg.tokenURL, ClientID: cfg.clientID,
		ClientSecret: cfg.secret, Scope: cfg.scope, AllowInsecureHTTP: cfg.insecure, Logger: log,
	})
	if err != nil {
		return exitFor(e.stderr, usageErrorf("%v", err))
	}
	info, err := client.CheckAuth(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "bulkload: auth check failed: %v\n", flagHint(err))
		if errors.Is(err, context.Canceled) {
			return exitInterrupted
		}
		// As upload: the identity provider down or the token URL wrong is
		// exit 4, refused credentials exit 3.
		if submitter.IsUnreachable(err) {
			return exitUnreachable
		}
		return exitAuth
	}
	if info.Opaque {
		expires := "unknown"
		if !info.ExpiresAt.IsZero() {
			expires = fmt.Sprintf("%s (in %s)", info.ExpiresAt.UTC().Format(time.RFC3339), time.Until(info.ExpiresAt).Round(time.Second))
		}
		fmt.Fprintf(e.stdout, "token OK\n  token URL:  %s\n  client id:  %s\n  roles:      unknown: the access token is opaque (not a JWT), so its roles cannot be read here\n  expires at: %s\n",
			submitter.RedactURL(cfg.tokenURL), cfg.clientID, expires)
		if cfg.endpoint == "" {
			fmt.Fprintln(e.stdout, "  to learn whether the service accepts it, run auth check --endpoint URL (the preflight upload runs)")
		}
	} else {
		fmt.Fprintf(e.stdout, "token OK\n  token URL:  %s\n  client id:  %s\n  audience:   %s\n  roles:      %s\n  expires at: %s (in %s)\n",
			submitter.RedactURL(cfg.tokenURL), info.ClientID, info.Audience, strings.Join(info.Roles, ", "),
			info.ExpiresAt.UTC().Format(time.RFC3339), time.Until(info.ExpiresAt).Round(time.Second))
		if !slices.Contains(info.Roles, "Lead.Write") {
			fmt.Fprintln(e.stdout, "  warning: the token lacks Lead.Write: createLead and submitLead will be refused")
		}
	}
	if cfg.endpoint == "" {
		return exitOK
	}
	// --endpoint: the preflight upload runs before its first row (one
	// cheap GraphQL query with the token), with upload's exit statuses.
	if err := client.Preflight(ctx); err != nil {
		var ce *submitter.CallError
		switch {
		case errors.Is(err, context.Canceled):
			fmt.Fprintln(e.stderr, "bulkload: auth check: interrupted")
			return exitInterrupted
		case submitter.IsUnreachable(err) || errors.Is(err, context.DeadlineExceeded):
			fmt.Fprintf(e.stderr, "bulkload: auth check: --endpoint %s: %v\n", submitter.RedactURL(cfg.endpoint), err)
			return exitUnreachable
		case errors.As(err, &ce) && (ce.Status == http.StatusUnauthorized || ce.Status == http.StatusForbidden):
			fmt.Fprintf(e.stderr, "bulkload: auth check: the service at --endpoint %s refused the access token: %v (check --scope or --app-id, and that the application is granted Lead.Write)\n", submitter.RedactURL(cfg.endpoint), err)
			return exitAuth
		default:
			// As upload: the service answered but did not confirm; a run
			// goes on, and so does this check, with a warning.
			fmt.Fprintf(e.stdout, "  endpoint:   %s answered but did not confirm it is the lead endpoint: %v\n", submitter.RedactURL(cfg.endpoint), err)
			return exitOK
		}
	}
	fmt.Fprintf(e.stdout, "  endpoint:   %s answered the preflight query with this token\n", submitter.RedactURL(cfg.endpoint))
	return exitOK
}
