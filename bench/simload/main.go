// Command simload is the load generator of the simulator's throughput
// figure: it fires createLead calls at leadsim (started in-process on
// 127.0.0.1:0, or an already running one given by --url) from C concurrent
// connections, each lead with its own leadId and SSN, and prints calls per
// second, answers by HTTP status and errors. It is bounded by a count and a
// duration, and is a measurement, not a test.
//
//	go run ./bench/simload -n 50000 -c 32 -duration 30s
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/token"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type config struct {
	url, tenant, appID, clientID, secret string
	cpuProfile                           string
	bare                                 bool
	n, conns                             int
	duration                             time.Duration
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var cfg config
	fs := flag.NewFlagSet("simload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.url, "url", "", "base URL of a running simulator; empty: start one in-process on 127.0.0.1:0")
	fs.StringVar(&cfg.tenant, "tenant-id", leadsim.DefaultTenantID, "tenant id")
	fs.StringVar(&cfg.appID, "app-id", leadsim.DefaultAppID, "the API's app id (scope api://APP-ID/.default)")
	fs.StringVar(&cfg.clientID, "client-id", leadsim.DefaultClientID, "client id")
	fs.StringVar(&cfg.secret, "client-secret", leadsim.DefaultClientSecret, "client secret (the simulator's, a fake)")
	fs.IntVar(&cfg.n, "n", 50000, "number of createLead calls")
	fs.IntVar(&cfg.conns, "c", 32, "concurrent connections")
	fs.DurationVar(&cfg.duration, "duration", 30*time.Second, "stop after this long even if fewer than -n calls were made")
	fs.BoolVar(&cfg.bare, "bare", false, "baseline: serve a fixed createLead answer from a bare net/http handler instead of the simulator (the token is fake)")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of the run (client and in-process server) to this file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if cfg.n < 1 || cfg.conns < 1 || cfg.duration <= 0 {
		fmt.Fprintln(stderr, "simload: -n, -c and -duration must be positive")
		return 2
	}
	if err := load(ctx, cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "simload: %v\n", err)
		return 1
	}
	return 0
}

func load(ctx context.Context, cfg config, stdout io.Writer) error {
	if cfg.url == "" {
		sim, err := leadsim.New(leadsim.Options{TenantID: cfg.tenant, AppID: cfg.appID})
		if err != nil {
			return fmt.Errorf("start simulator: %w", err)
		}
		defer sim.Close()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("listen on 127.0.0.1: %w", err)
		}
		var h http.Handler = sim.Handler()
		if cfg.bare {
			h = bareHandler()
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		cfg.url = "http://" + ln.Addr().String()
		fmt.Fprintf(stdout, "simulator in-process at %s\n", cfg.url)
	}
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns: cfg.conns, MaxIdleConnsPerHost: cfg.conns, MaxConnsPerHost: cfg.conns,
		DisableCompression: true,
	}}
	defer client.CloseIdleConnections()
	token := "bare"
	if !cfg.bare {
		var err error
		if token, err = getToken(ctx, client, cfg); err != nil {
			return err
		}
	}

	ctx, cancel := context.WithTimeout(ctx, cfg.duration)
	defer cancel()
	var (
		next     atomic.Int64
		mu       sync.Mutex
		statuses = map[int]int{}
		errs     = map[string]int{}
		wg       sync.WaitGroup
	)
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return fmt.Errorf("create CPU profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("start CPU profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	start, cpuStart := time.Now(), cpuTime()
	for range cfg.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local, localErr := map[int]int{}, map[string]int{}
			var body []byte
			for ctx.Err() == nil {
				i := next.Add(1)
				if i > int64(cfg.n) {
					break
				}
				body = leadBody(body[:0], i)
				status, err := createLead(ctx, client, cfg.url, token, body)
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					localErr[err.Error()]++
					continue
				}
				local[status]++
			}
			mu.Lock()
			for k, v := range local {
				statuses[k] += v
			}
			for k, v := range localErr {
				errs[k] += v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), cpuTime()-cpuStart

	total := 0
	for _, v := range statuses {
		total += v
	}
	fmt.Fprintf(stdout, "createLead: %d answered in %v with %d connections: %.0f calls/s\n", total, elapsed.Round(time.Millisecond), cfg.conns, float64(total)/elapsed.Seconds())
	if total > 0 {
		// The machine is shared: wall-clock calls/s depends on what else
		// runs. CPU time per call (this process: the load generator, and
		// the simulator when in-process) does not.
		per := cpu / time.Duration(total)
		fmt.Fprintf(stdout, "CPU time of this process: %v, %v per call (client and in-process server together); %d CPUs: %.0f calls/s if they were all ours\n",
			cpu.Round(time.Millisecond), per.Round(100*time.Nanosecond), runtime.NumCPU(), float64(runtime.NumCPU())/per.Seconds())
	}
	for _, k := range slices.Sorted(maps.Keys(statuses)) {
		fmt.Fprintf(stdout, "  HTTP %d: %d\n", k, statuses[k])
	}
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		fmt.Fprintf(stdout, "  error %q: %d\n", k, errs[k])
	}
	if total < cfg.n && ctx.Err() != nil {
		fmt.Fprintf(stdout, "stopped by the %v duration cap before %d calls\n", cfg.duration, cfg.n)
	}
	return nil
}

func getToken(ctx context.Context, client *http.Client, cfg config) (string, error) {
	form := url.Values{
		"grant_type": {"client_credentials"}, "client_id": {cfg.clientID},
		"client_secret": {cfg.secret}, "scope": {"api://" + cfg.appID + "/.default"},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, token.URL(cfg.url, cfg.tenant), strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("build token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("request token: %w", err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil {
		return "", fmt.Errorf("decode token answer (HTTP %d): %w", resp.StatusCode, err)
	}
	if tok.AccessToken == "" {
		return "", fmt.Errorf("token refused: HTTP %d %s: check --client-id and --client-secret", resp.StatusCode, tok.Error)
	}
	return tok.AccessToken, nil
}

// leadBody appends the createLead request of lead i: a consenting applicant
// with its own leadId, SSN and e-mail, so no lead is a duplicate.
func leadBody(b []byte, i int64) []byte {
	b = append(b, `{"query":"mutation CreateLead($input: LeadInput!) { createLead(input: $input) { id resultCode note partnerLeadId bidValue } }","variables":{"input":{"firstName":"Load","lastName":"Test","dateOfBirth":"1985-06-15","email":"load`...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, `@example.com","homePhone":"5550100000","zipCode":"10001","state":"NY","loanAmount":5000,"leadId":"load-`...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, `","socialSecurityNumber":"`...)
	b = fmt.Appendf(b, "%09d", 100000000+i%900000000)
	b = append(b, `","termsConsent":true}}}`...)
	return b
}

// bareHandler answers every request with a fixed createLead result: the
// floor of what net/http and this load generator cost on the machine.
func bareHandler() http.Handler {
	const body = `{"data":{"createLead":{"id":"00000000-0000-0000-0000-000000000000","resultCode":1015,"note":"Qualified; awaiting submission","partnerLeadId":"x","bidValue":"$30.00"}}}`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	})
}

// cpuTime is the user plus system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var errNoResult = errors.New("200 answer without a resultCode")

func createLead(ctx context.Context, client *http.Client, base, token string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode == http.StatusOK && !bytes.Contains(out, []byte(`"resultCode":`)) {
		return 0, errNoResult
	}
	return resp.StatusCode, nil
}
