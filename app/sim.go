package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/token"
)

// Simulator is a leadsim server listening on a loopback address.
type Simulator struct {
	sim    *leadsim.Server
	srv    *http.Server
	base   string
	opts   leadsim.Options
	client leadsim.Client
	done   chan error
}

// StartSim starts the simulator in-process on 127.0.0.1 with a random port,
// for upload --simulate and auth check --simulate. Its own per-request log
// lines appear only at debug level, so they do not bury the upload's. Its
// tokens are signed with d.SimSigningKey when set.
func StartSim(ctx context.Context, d Deps, log *slog.Logger) (*Simulator, error) {
	var simLog *slog.Logger
	if log.Enabled(ctx, slog.LevelDebug) {
		simLog = log.With("component", "leadsim")
	}
	return serveSim(ctx, "127.0.0.1:0", leadsim.Options{Logger: simLog, SigningKey: d.SimSigningKey})
}

func serveSim(ctx context.Context, addr string, opts leadsim.Options) (*Simulator, error) {
	sim, err := leadsim.New(opts)
	if err != nil {
		return nil, UsageErrorf("simulator: %v", err)
	}
	var client leadsim.Client
	opts.TenantID, opts.AppID, client = sim.Identity()
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		sim.Close()
		return nil, UsageErrorf("simulator: listen on %s: %v", addr, err)
	}
	h := &Simulator{
		sim:    sim,
		srv:    &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 10 * time.Second},
		base:   "http://" + ln.Addr().String(),
		opts:   opts,
		client: client,
		done:   make(chan error, 1),
	}
	go func() { h.done <- h.srv.Serve(ln) }()
	return h, nil
}

// Credentials are the settings that make a client talk to this simulator.
func (h *Simulator) Credentials() Credentials {
	return Credentials{
		Endpoint: h.base + "/graphql",
		TokenURL: token.URL(h.base, h.opts.TenantID),
		ClientID: h.client.ID,
		Secret:   h.client.Secret,
		Scope:    "api://" + h.opts.AppID + "/.default",
	}
}

// Close stops the server, giving open requests a moment to finish. A
// connection that sent no request yet holds Shutdown for up to 5 s (net/http
// waits that long before it counts a new connection as idle), so after the
// grace period the server is closed outright.
func (h *Simulator) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var err error
	if serr := h.srv.Shutdown(ctx); serr != nil {
		err = h.srv.Close()
	}
	h.sim.Close()
	if serr := <-h.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// SimOptions are the options of sim: the listen address and the
// simulator's knobs.
type SimOptions struct {
	Addr string
	Sim  leadsim.Options
}

// NewSimOptions returns sim's options with their defaults: 127.0.0.1:8787.
func NewSimOptions() *SimOptions { return &SimOptions{Addr: "127.0.0.1:8787"} }

// Serve serves the simulator of o on o.Addr until ctx ends, logging to
// log.
func Serve(ctx context.Context, e *Env, log *slog.Logger, o *SimOptions) error {
	opts := o.Sim
	opts.Logger = log
	h, err := serveSim(ctx, o.Addr, opts)
	if err != nil {
		return err
	}
	c := h.Credentials()

	// The simulator's secret is a public fake, but it still goes to upload
	// through a file, the way a real secret must: a new private directory
	// (mode 0700) of its own, never a fixed path another user could plant,
	// removed when the simulator stops.
	dir, err := os.MkdirTemp("", "bulkload-sim-*")
	if err != nil {
		h.Close()
		return fmt.Errorf("simulator secret file: %w", err)
	}
	defer os.RemoveAll(dir)
	secretFile := filepath.Join(dir, "client-secret")
	if err := outfile.Write(secretFile, 0o600, []byte(c.Secret+"\n")); err != nil {
		h.Close()
		return fmt.Errorf("write simulator secret file: %w", err)
	}
	fmt.Fprintf(e.Stdout, `leadsim serving on %s
  lead endpoint:      %s
  debt core endpoint: %s/debt-core/graphql
  token URL:          %s
  stats:              %s/_sim/stats
  client id:          %s
  client secret:      %s (a public fake; also in %s, removed when sim stops)
  scope:              %s

Upload a file to it with:
  bulkload upload --endpoint %s --token-url %s --client-id %s --scope %s --client-secret-file %s samples/leads.csv
`, h.base, c.Endpoint, h.base, c.TokenURL, h.base, c.ClientID, c.Secret, secretFile, c.Scope,
		c.Endpoint, c.TokenURL, c.ClientID, c.Scope, secretFile)

	select {
	case <-ctx.Done():
	case err := <-h.done:
		h.done <- err
	}
	return h.Close()
}
