package leadsim

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/bulkload/bulkload/leadsim/graph/debtapi"
	"github.com/bulkload/bulkload/leadsim/graph/leadapi"
)

// Server is one simulated platform: identity provider, lead endpoint and
// debt core endpoint sharing one lead store, one key and one set of
// counters. It is safe for concurrent use. The caller calls Close when done.
type Server struct {
	opts    Options
	log     *slog.Logger
	clients map[string]*Client
	// rolesMu guards the clients' Roles, which GrantRoles changes while
	// tokens are issued.
	rolesMu sync.RWMutex
	keys    *keyring
	store   *store
	stats   *counters
	rnd     *lockedRand
	limiter *rate.Limiter // nil: unlimited
	// The rate limit changes (Options.RateChanges): started is New's
	// time; nextChange, under rateMu, the index of the next change.
	started    time.Time
	burstSet   bool
	rateMu     sync.Mutex
	nextChange int
	faults     bool // any of Fail503, Fail500, DropAfter, ProxyReset is set
	// gate holds the GraphQL requests beyond Options.Capacity in a queue.
	gate *capacityGate
	lead *endpoint
	debt *endpoint
	mux  *http.ServeMux

	// requests counts the lead endpoint's requests, for HangAfter; heal
	// is closed by Heal, which ends the hang for good.
	requests atomic.Int64
	// graphql counts the lead endpoint's GraphQL requests, for
	// FirstAnswers.
	graphql atomic.Int64
	// creates counts createLead requests, for RevokeWriteAfter; authed
	// the lead endpoint's requests that came to authentication, for
	// RejectTokensAfter.
	creates atomic.Int64
	authed  atomic.Int64
	// revision is bumped when sessions are revoked: a token issued at an
	// older one is answered 401.
	revision atomic.Int64
	heal     chan struct{}
	healOnce sync.Once

	stop     chan struct{}
	stopOnce sync.Once
	done     sync.WaitGroup
}

// Identity returns the tenant, the application and the first registered
// client this simulator serves: Options' values, or the defaults where
// they were left empty. A caller that prints or hands out credentials
// (bulkload sim, simtest) asks here instead of repeating the defaults.
func (s *Server) Identity() (tenantID, appID string, client Client) {
	c := s.opts.Clients[0]
	c.Roles = append([]string(nil), c.Roles...)
	return s.opts.TenantID, s.opts.AppID, c
}

// New starts a simulator with opts (see Options for defaults). It makes a
// 2048-bit signing key, which takes a fraction of a second, and starts the
// key rotation goroutine when opts.RotateKeyEvery is set.
func New(opts Options) (*Server, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	started := o.Now() // RateChanges count from here, before the key is made
	s := &Server{
		opts:    o,
		log:     o.Logger,
		clients: make(map[string]*Client, len(o.Clients)),
		store:   newStore(),
		stats:   newCounters(),
		rnd:     &lockedRand{r: rand.New(rand.NewPCG(uint64(o.Seed), 0x6c656164))},
		stop:    make(chan struct{}),
		heal:    make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for i := range o.Clients {
		s.clients[o.Clients[i].ID] = &s.opts.Clients[i]
	}
	if s.keys, err = newKeyring(o.SigningKey); err != nil {
		return nil, fmt.Errorf("start simulator: %w", err)
	}
	s.faults = o.Fail503+o.Fail500+o.DropAfter+o.ProxyReset > 0
	s.store.echo = o.EchoPII
	s.started, s.burstSet = started, opts.RateBurst > 0
	switch {
	case o.RateLimit > 0:
		s.limiter = rate.NewLimiter(rate.Limit(o.RateLimit), o.RateBurst)
	case len(o.RateChanges) > 0:
		s.limiter = rate.NewLimiter(rate.Inf, o.RateBurst)
	}
	s.gate = newCapacityGate(o, started)
	s.lead = newEndpoint(s, "lead", leadapi.NewExecutableSchema(leadapi.Config{Resolvers: resolver{s}}))
	s.debt = newEndpoint(s, "debt-core", debtapi.NewExecutableSchema(debtapi.Config{Resolvers: debtQuery{s}}))

	s.mux = http.NewServeMux()
	s.mux.HandleFunc("/{tenant}/oauth2/v2.0/token", s.serveToken)
	s.mux.Handle("/graphql", s.lead)
	s.mux.Handle("/debt-core/graphql", s.debt)
	s.mux.HandleFunc("GET /_sim/stats", s.serveStats)
	s.mux.HandleFunc("POST /_sim/rotate-key", s.serveRotate)
	s.mux.HandleFunc("POST /_sim/grant", s.serveGrant)
	s.mux.HandleFunc("POST /_sim/heal", s.serveHeal)

	if o.RotateKeyEvery > 0 {
		s.done.Add(1)
		go s.rotateEvery(o.RotateKeyEvery)
	}
	return s, nil
}

// rateLimit applies the rate limit changes due by now and returns the
// limit in force (0: unlimited).
func (s *Server) rateLimit() float64 {
	s.rateMu.Lock()
	defer s.rateMu.Unlock()
	changes := s.opts.RateChanges
	if s.nextChange < len(changes) {
		el := s.opts.Now().Sub(s.started)
		for s.nextChange < len(changes) && el >= changes[s.nextChange].At {
			c := changes[s.nextChange]
			s.nextChange++
			lim, burst := rate.Limit(c.Limit), s.opts.RateBurst
			if c.Limit == 0 {
				lim = rate.Inf
			}
			if !s.burstSet {
				burst = max(1, int(c.Limit/10))
			}
			s.limiter.SetLimit(lim)
			s.limiter.SetBurst(burst)
			s.log.Info("rate limit changed", "limit", c.Limit, "burst", burst, "at", c.At)
		}
	}
	if l := s.limiter.Limit(); l != rate.Inf {
		return float64(l)
	}
	return 0
}

// Handler returns the one handler of every route, relative to a base URL B:
//
//	POST B/{tenant}/oauth2/v2.0/token   identity provider
//	POST B/graphql                      lead endpoint
//	POST B/debt-core/graphql            debt core endpoint (creditReport)
//	GET  B/_sim/stats                   Stats as JSON (?requests: Requests and Capacity alone)
//	POST B/_sim/rotate-key              RotateKey on demand
//	POST B/_sim/grant?client=ID&role=R  GrantRoles (role repeated for several; none revokes all)
//	POST B/_sim/heal                    Heal: end the hang of Options.HangAfter (either HangMode)
func (s *Server) Handler() http.Handler { return s.mux }

// GrantRoles sets the application roles of client id (RoleWrite, RoleRead)
// for the tokens issued from now on, as an administrator granting or
// revoking an app role does: tokens already issued keep the roles they
// carry until they expire. It fails for a client the simulator does not
// know.
func (s *Server) GrantRoles(id string, roles ...string) error {
	c := s.clients[id]
	if c == nil {
		return fmt.Errorf("grant roles: no client %q", id)
	}
	s.rolesMu.Lock()
	c.Roles = slices.Clone(roles)
	s.rolesMu.Unlock()
	s.log.Info("client roles set", "client", id, "roles", roles)
	return nil
}

// revokeWrite is Options.RevokeWriteAfter's administrator: Lead.Write
// goes from every client, and the sessions of the tokens issued before
// with it (revision).
func (s *Server) revokeWrite() {
	s.rolesMu.Lock()
	for _, c := range s.clients {
		c.Roles = slices.DeleteFunc(slices.Clone(c.Roles), func(r string) bool { return r == RoleWrite })
	}
	s.rolesMu.Unlock()
	s.revision.Add(1)
	s.log.Info("Lead.Write revoked from every client, with the sessions of the tokens issued before")
}

func (s *Server) serveGrant(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := s.GrantRoles(q.Get("client"), q["role"]...); err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Heal ends the hang of Options.HangAfter for good: the answers held are
// sent (to the clients still waiting for them) and every later request is
// answered. It does nothing when the endpoint does not hang.
func (s *Server) Heal() {
	s.healOnce.Do(func() {
		close(s.heal)
		s.log.Info("lead endpoint healed: answering again")
	})
}

func (s *Server) serveHeal(w http.ResponseWriter, _ *http.Request) {
	s.Heal()
	w.WriteHeader(http.StatusNoContent)
}

// hangs reports whether the lead endpoint's request just counted is one
// that Options.HangAfter holds.
func (s *Server) hangs() bool {
	if s.opts.HangAfter <= 0 {
		return false
	}
	n := s.requests.Add(1)
	select {
	case <-s.heal:
		return false
	default:
		return n > int64(s.opts.HangAfter)
	}
}

// hold waits until the hang is healed (true), or the client goes away or
// the simulator is closed (false).
func (s *Server) hold(ctx context.Context) bool {
	select {
	case <-s.heal:
		return true
	case <-ctx.Done():
	case <-s.stop:
	}
	return false
}

// elapsed is the time since New on the Now clock, for the outage windows.
func (s *Server) elapsed() time.Duration { return s.opts.Now().Sub(s.started) }

// RotateKey replaces the signing key, revoking every token issued so far.
func (s *Server) RotateKey() {
	if err := s.keys.rotate(); err != nil {
		s.log.Error("rotate signing key", "err", err)
		return
	}
	s.log.Info("signing key rotated")
}

// Stats returns a snapshot of the counters; the caller owns the copy.
func (s *Server) Stats() Stats {
	st := s.stats.snapshot()
	st.Capacity = s.gate.stats()
	return st
}

// Close stops the key rotation goroutine and lets go of the requests held
// by a hang (unanswered). The handler keeps serving; Close may be called
// more than once.
func (s *Server) Close() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.done.Wait()
}

func (s *Server) rotateEvery(d time.Duration) {
	defer s.done.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.RotateKey()
		}
	}
}

func (s *Server) serveStats(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Query().Has("requests") {
		// Only the requests by operation and status, for pollers.
		_ = json.NewEncoder(w).Encode(Stats{Requests: s.stats.requests(), Capacity: s.gate.stats()})
		return
	}
	_ = json.NewEncoder(w).Encode(s.Stats())
}

func (s *Server) serveRotate(w http.ResponseWriter, _ *http.Request) {
	s.RotateKey()
	w.WriteHeader(http.StatusNoContent)
}

// lockedRand is a seeded random source safe for concurrent use.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

func (l *lockedRand) NormFloat64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.NormFloat64()
}

func (l *lockedRand) Int64N(n int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Int64N(n)
}

// sleep waits the latency l, or until ctx ends.
func sleep(ctx context.Context, l Latency, rnd *lockedRand) error {
	d := l.Fixed + l.Dist.draw(rnd)
	if l.Jitter > 0 {
		d += time.Duration(rnd.Int64N(int64(l.Jitter)))
	}
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
