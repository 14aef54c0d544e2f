package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/outfile"
)

// simHandle is a leadsim server listening on a loopback address.
type simHandle struct {
	sim    *leadsim.Server
	srv    *http.Server
	base   string
	opts   leadsim.Options
	client leadsim.Client
	done   chan error
}

// startSim starts the simulator in-process on 127.0.0.1 with a random port,
// for upload --simulate and auth check --simulate. Its own per-request log
// lines appear only at debug level, so they do not bury the upload's.
func startSim(ctx context.Context, log *slog.Logger) (*simHandle, error) {
	var simLog *slog.Logger
	if log.Enabled(ctx, slog.LevelDebug) {
		simLog = log.With("component", "leadsim")
	}
	return serveSim(ctx, "127.0.0.1:0", leadsim.Options{Logger: simLog})
}

func serveSim(ctx context.Context, addr string, opts leadsim.Options) (*simHandle, error) {
	sim, err := leadsim.New(opts)
	if err != nil {
		return nil, usageErrorf("simulator: %v", err)
	}
	var client leadsim.Client
	opts.TenantID, opts.AppID, client = sim.Identity()
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		sim.Close()
		return nil, usageErrorf("simulator: listen on %s: %v", addr, err)
	}
	h := &simHandle{
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

// credentials are the settings that make a client talk to this simulator.
func (h *simHandle) credentials() resolved {
	return resolved{
		endpoint: h.base + "/graphql",
		tokenURL: leadsim.TokenURL(h.base, h.opts.TenantID),
		clientID: h.client.ID,
		secret:   h.client.Secret,
		scope:    "api://" + h.opts.AppID + "/.default",
	}
}

// close stops the server, giving open requests a moment to finish. A
// connection that sent no request yet holds Shutdown for up to 5 s (net/http
// waits that long before it counts a new connection as idle), so after the
// grace period the server is closed outright.
func (h *simHandle) close() error {
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

// simOptions are the flags of sim.
type simOptions struct {
	addr *string
	opts *leadsim.Options
}

// registerSimFlags registers sim's own flags and the simulator's knobs. A
// zero simOptions registers them on throwaway values (for completion).
func registerSimFlags(o *simOptions) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		if o.addr == nil {
			o.addr, o.opts = new(string), new(leadsim.Options)
		}
		fs.StringVar(o.addr, "addr", "127.0.0.1:8787", "listen address (keep it on loopback: the simulator's credentials are public)")
		o.opts.RegisterFlags(fs)
	}
}

// runSim serves the simulator until interrupted.
func runSim(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("sim", "sim [flags]", e.stderr)
	var (
		opts leadsim.Options
		logs logOptions
		addr string
	)
	registerSimFlags(&simOptions{addr: &addr, opts: &opts})(fs)
	logs.register(fs)
	if _, _, err := parseSettings(fs, args, e, "sim", 0); err != nil {
		return err
	}
	log, err := e.logger(&logs)
	if err != nil {
		return err
	}
	opts.Logger = log
	h, err := serveSim(ctx, addr, opts)
	if err != nil {
		return err
	}
	c := h.credentials()

	// The simulator's secret is a public fake, but it still goes to upload
	// through a file, the way a real secret must: a new private directory
	// (mode 0700) of its own, never a fixed path another user could plant,
	// removed when the simulator stops.
	dir, err := os.MkdirTemp("", "bulkload-sim-*")
	if err != nil {
		h.close()
		return fmt.Errorf("simulator secret file: %w", err)
	}
	defer os.RemoveAll(dir)
	secretFile := filepath.Join(dir, "client-secret")
	if err := outfile.Write(secretFile, 0o600, []byte(c.secret+"\n")); err != nil {
		h.close()
		return fmt.Errorf("write simulator secret file: %w", err)
	}
	fmt.Fprintf(e.stdout, `leadsim serving on %s
  lead endpoint:      %s
  debt core endpoint: %s/debt-core/graphql
  token URL:          %s
  stats:              %s/_sim/stats
  client id:          %s
  client secret:      %s (a public fake; also in %s, removed when sim stops)
  scope:              %s

Upload a file to it with:
  bulkload upload --endpoint %s --token-url %s --client-id %s --scope %s --client-secret-file %s samples/leads.csv
`, h.base, c.endpoint, h.base, c.tokenURL, h.base, c.clientID, c.secret, secretFile, c.scope,
		c.endpoint, c.tokenURL, c.clientID, c.scope, secretFile)

	select {
	case <-ctx.Done():
	case err := <-h.done:
		h.done <- err
	}
	return h.close()
}
