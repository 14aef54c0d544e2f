package app

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/submitter"
)

// connect builds the run's client and, when prove is set, proves before any
// row is sent that the credentials give a token and --endpoint answers
// GraphQL (an input with no rows makes no call at all). It returns
// the run's exit error (an *ExitError, or a usage error) when the run must
// not go on. The client's
// background work (token fetches) lives as long as the run, past the first
// signal (calls still draining need tokens), until the caller calls release.
func (u *uploader) connect(ctx context.Context, prove bool) (client *submitter.Client, release func(), err error) {
	clientCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	client, err = submitter.New(clientCtx, submitter.Config{
		Endpoint:       u.creds.Endpoint,
		TokenURL:       u.creds.TokenURL,
		ClientID:       u.creds.ClientID,
		ClientSecret:   u.creds.Secret,
		Scope:          u.creds.Scope,
		Rate:           u.up.Rate.PerSecond,
		RateAuto:       u.up.Rate.Auto,
		MaxRate:        u.up.MaxRate,
		KnownRateLimit: u.pace.rateLimit,
		MaxAttempts:    u.up.MaxAttempts,

		Concurrency:     u.up.Concurrency.N,
		ConcurrencyAuto: u.up.Concurrency.Auto,
		MaxConcurrency:  u.up.MaxConcurrency,
		// A resume starts where the earlier run settled.
		StartConcurrency:   u.pace.concurrency,
		ConcurrencySettled: u.pace.concurrency > 0,

		CallTimeout:     u.up.Timeout,
		OutageWait:      max(u.up.OutageWait, time.Nanosecond), // 0: stop at once
		MaxRetryWait:    u.up.MaxRetryWait,
		PreflightWait:   max(u.up.PreflightWait, time.Nanosecond), // 0: ask once
		OutageThreshold: cmp.Or(u.up.MaxConsecutiveFailures, -1),  // 0: no count
		CreateDocument:  u.up.CreateDocument,
		SubmitDocument:  u.up.SubmitDocument,
		LeadDocument:    u.up.LeadDocument,
		RefusalCodes:    splitCodes(u.up.RefusalCodes),
		DeniedCodes:     splitCodes(u.up.DeniedCodes),
		Ambiguous503:    u.up.amb503,
		Logger:          u.log,

		AllowInsecureHTTP: u.creds.Insecure,
		Transport:         u.env.Deps.Transport,
		BackoffBase:       u.env.Deps.BackoffBase,
		BackoffMax:        u.env.Deps.BackoffMax,
	})
	if err != nil {
		cancel()
		return nil, nil, UsageErrorf("%v", flagHint(err))
	}
	release = func() {
		client.Close()
		cancel()
	}
	if !prove {
		return client, release, nil
	}

	// A bad credential stops the run before the first row is read.
	authCtx, cancelAuth := context.WithTimeout(ctx, 2*u.up.Timeout)
	_, err = client.CheckAuth(authCtx)
	cancelAuth()
	if err != nil {
		release()
		return nil, nil, u.authFailure(ctx, err)
	}
	// One cheap GraphQL query proves --endpoint before the first row,
	// asked again for up to --preflight-wait while a gateway answers for
	// a service that is away.
	preCtx, cancelPre := context.WithTimeout(ctx, u.up.PreflightWait+2*u.up.Timeout)
	err = client.Preflight(preCtx)
	cancelPre()
	if err != nil {
		if err := u.preflightFailure(ctx, err); err != nil {
			release()
			return nil, nil, err
		}
	}
	return client, release, nil
}

// preflightFailure maps a failed preflight to the run's exit error, or lets
// the run go on (nil) when the service answered but asked to slow down:
// throttling is not an outage.
func (u *uploader) preflightFailure(ctx context.Context, err error) error {
	var ce *submitter.CallError
	switch {
	case submitter.IsFatal(err) || ctx.Err() != nil:
		return u.authFailure(ctx, err)
	case submitter.IsUnreachable(err):
		return &ExitError{Code: ExitUnreachable, Msg: flagHint(err).Error()}
	case errors.As(err, &ce) && (ce.Status == http.StatusUnauthorized || ce.Status == http.StatusForbidden):
		return exitErrorf(ExitAuth, "the service at --endpoint %s refused the access token: %v (check --scope or --app-id, and that the application is granted Lead.Write)", redact.URL(u.creds.Endpoint), err)
	}
	u.log.Warn("preflight: the service answered but did not confirm the endpoint; going on", "endpoint", redact.URL(u.creds.Endpoint), "err", err)
	return nil
}

func (u *uploader) authFailure(ctx context.Context, err error) error {
	switch {
	case submitter.IsFatal(err):
		return exitErrorf(ExitAuth, "authentication failed: %v", flagHint(err))
	case ctx.Err() != nil:
		return &ExitError{Code: ExitInterrupted, Msg: "interrupted", Quiet: true}
	case submitter.IsUnreachable(err):
		// The identity provider is down or the token URL wrong: an outage
		// to wait out or a setting to fix, not a credential.
		return &ExitError{Code: ExitUnreachable, Msg: flagHint(err).Error()}
	default:
		return exitErrorf(ExitAuth, "cannot get an access token: %v", err)
	}
}
