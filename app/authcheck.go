package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/submitter"
)

// Credentials is authOptions after defaults and derivations.
type Credentials struct {
	Endpoint string
	TokenURL string
	ClientID string
	Secret   string
	Scope    string
	Insecure bool // --allow-insecure-http
}

// Check refuses an endpoint or token URL that is not an http(s) URL,
// before any network I/O (the URLs are shown redacted: user info and
// query values may be credentials).
func (r Credentials) Check() error {
	for name, u := range map[string]string{"--endpoint": r.Endpoint, "token URL": r.TokenURL} {
		if u == "" {
			continue
		}
		if p, err := url.Parse(u); err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return UsageErrorf("%s %q is not an http(s) URL", name, redact.URL(u))
		}
	}
	return nil
}

// AuthCheck requests a token with cfg and shows its expiry and roles;
// with an endpoint, it also runs upload's preflight query, with upload's
// exit classes.
func AuthCheck(ctx context.Context, e *Env, log *slog.Logger, cfg Credentials, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	endpoint := cfg.Endpoint
	if endpoint == "" {
		// Without --endpoint auth check calls no API; the client only
		// wants a well-formed URL.
		endpoint = cfg.TokenURL
	}
	client, err := submitter.New(ctx, submitter.Config{
		Endpoint: endpoint, TokenURL: cfg.TokenURL, ClientID: cfg.ClientID,
		ClientSecret: cfg.Secret, Scope: cfg.Scope, AllowInsecureHTTP: cfg.Insecure, Logger: log,
		Transport: e.Deps.Transport, BackoffBase: e.Deps.BackoffBase, BackoffMax: e.Deps.BackoffMax,
	})
	if err != nil {
		return UsageErrorf("%v", flagHint(err))
	}
	info, err := client.CheckAuth(ctx)
	if err != nil {
		code := ExitAuth
		// As upload: the identity provider down or the token URL wrong is
		// exit 4, refused credentials exit 3.
		switch {
		case errors.Is(err, context.Canceled):
			code = ExitInterrupted
		case submitter.IsUnreachable(err):
			code = ExitUnreachable
		}
		return exitErrorf(code, "auth check failed: %v", flagHint(err))
	}
	if info.Opaque {
		expires := "unknown"
		if !info.ExpiresAt.IsZero() {
			expires = fmt.Sprintf("%s (in %s)", info.ExpiresAt.UTC().Format(time.RFC3339), time.Until(info.ExpiresAt).Round(time.Second))
		}
		fmt.Fprintf(e.Stdout, "token OK\n  token URL:  %s\n  client id:  %s\n  roles:      unknown: the access token is opaque (not a JWT), so its roles cannot be read here\n  expires at: %s\n",
			redact.URL(cfg.TokenURL), cfg.ClientID, expires)
		if cfg.Endpoint == "" {
			fmt.Fprintln(e.Stdout, "  to learn whether the service accepts it, run auth check --endpoint URL (the preflight upload runs)")
		}
	} else {
		fmt.Fprintf(e.Stdout, "token OK\n  token URL:  %s\n  client id:  %s\n  audience:   %s\n  roles:      %s\n  expires at: %s (in %s)\n",
			redact.URL(cfg.TokenURL), info.ClientID, info.Audience, strings.Join(info.Roles, ", "),
			info.ExpiresAt.UTC().Format(time.RFC3339), time.Until(info.ExpiresAt).Round(time.Second))
		if !slices.Contains(info.Roles, "Lead.Write") {
			fmt.Fprintln(e.Stdout, "  warning: the token lacks Lead.Write: createLead and submitLead will be refused")
		}
	}
	if cfg.Endpoint == "" {
		return nil
	}
	// --endpoint: the preflight upload runs before its first row (one
	// cheap GraphQL query with the token), with upload's exit statuses.
	if err := client.Preflight(ctx); err != nil {
		var ce *submitter.CallError
		switch {
		case errors.Is(err, context.Canceled):
			return exitErrorf(ExitInterrupted, "auth check: interrupted")
		case submitter.IsUnreachable(err) || errors.Is(err, context.DeadlineExceeded):
			return exitErrorf(ExitUnreachable, "auth check: --endpoint %s: %v", redact.URL(cfg.Endpoint), err)
		case submitter.IsAccessDenied(err), errors.As(err, &ce) && (ce.Status == http.StatusUnauthorized || ce.Status == http.StatusForbidden):
			return exitErrorf(ExitAuth, "auth check: the service at --endpoint %s refused the access token: %v (check --scope or --app-id, and that the application is granted Lead.Write)", redact.URL(cfg.Endpoint), err)
		default:
			// As upload: the service answered but did not confirm; a run
			// goes on, and so does this check, with a warning.
			fmt.Fprintf(e.Stdout, "  endpoint:   %s answered but did not confirm it is the lead endpoint: %v\n", redact.URL(cfg.Endpoint), err)
			return nil
		}
	}
	fmt.Fprintf(e.Stdout, "  endpoint:   %s answered the preflight query with this token\n", redact.URL(cfg.Endpoint))
	return nil
}
