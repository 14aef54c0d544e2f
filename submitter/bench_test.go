package submitter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/leadsim/simtest"
	"github.com/bulkload/bulkload/token"
)

// simServerEnv, when set in the environment of this test binary, makes it
// serve leadsim instead of running tests, so that benchmarks can measure
// the client's CPU time without the server's. Its value is the createLead
// latency (a time.Duration), "0" for none.
const simServerEnv = "SUBMITTER_BENCH_SIM_SERVER"

func TestMain(m *testing.M) {
	if v := os.Getenv(simServerEnv); v != "" {
		os.Exit(serveSim(v))
	}
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		// The parallel tests wait on simulators, not on the CPU: up to 8
		// at once, as app's and cmd/bulkload's (the default, GOMAXPROCS,
		// is 2 on a 2-CPU CI machine). The serial ones stay serial.
		flag.Set("test.parallel", "8")
	}
	os.Exit(m.Run())
}

// serveSim serves leadsim on 127.0.0.1 until stdin closes, printing its
// base URL on stdout.
func serveSim(latency string) int {
	d, err := time.ParseDuration(latency)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad latency:", err)
		return 2
	}
	rl, _ := strconv.ParseFloat(os.Getenv(simServerEnv+"_RATE"), 64)
	srv, err := leadsim.New(leadsim.Options{CreateLatency: leadsim.Latency{Fixed: d}, RateLimit: rl})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	fmt.Printf("http://%s\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// startSimProcess runs leadsim in a child process and returns its base URL.
func startSimProcess(b *testing.B, latency time.Duration, rateLimit float64) string {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), simServerEnv+"="+latency.String(), fmt.Sprintf("%s_RATE=%g", simServerEnv, rateLimit))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("read simulator URL: %v", err)
	}
	return line[:len(line)-1]
}

func benchClient(b *testing.B, base string, mod func(*Config)) *Client {
	b.Helper()
	cfg := Config{
		Endpoint:     base + "/graphql",
		TokenURL:     token.URL(base, leadsim.DefaultTenantID),
		ClientID:     leadsim.DefaultClientID,
		ClientSecret: leadsim.DefaultClientSecret,
		Scope:        "api://" + leadsim.DefaultAppID + "/.default",
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.CheckAuth(context.Background()); err != nil {
		b.Fatal(err)
	}
	return c
}

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runWorkers calls f(i) for i in [from, from+n) from workers goroutines.
func runWorkers(n, from, workers int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= n {
					return
				}
				f(from + k)
			}
		}()
	}
	wg.Wait()
}

// BenchmarkCreate measures one createLead call through the Client against
// an in-process leadsim without latency (server cost included in ns/op;
// allocs/op include the server's too).
func BenchmarkCreate(b *testing.B) {
	sim := simtest.Start(b, leadsim.Options{})
	c := benchClient(b, sim.URL, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, _, err := c.Create(context.Background(), simLead(i, i%2 == 0), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClientCPU10k measures the client's own CPU time (getrusage of
// this process, the simulator running in a child process) for 10,000
// createLead calls with 8 workers, through the Client and through a bare
// net/http client posting the same bodies, and the allocations of each per
// call. With -count 5 the two alternate, five pairs (bench/cpu.sh takes
// the medians).
func BenchmarkClientCPU10k(b *testing.B) {
	const n, workers = 10000, 8
	base := startSimProcess(b, 0, 0)
	b.Run("client", func(b *testing.B) {
		c := benchClient(b, base, nil)
		var cpu time.Duration
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for r := 0; b.Loop(); r++ {
			start := cpuTime()
			var failed atomic.Int64
			runWorkers(n, r*n, workers, func(i int) {
				if _, _, err := c.Create(context.Background(), simLead(i, i%2 == 0), nil); err != nil {
					failed.Add(1)
				}
			})
			cpu += cpuTime() - start
			if failed.Load() > 0 {
				b.Fatalf("%d calls failed", failed.Load())
			}
		}
		runtime.ReadMemStats(&m1)
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/10k")
		b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(n*b.N), "client-allocs/call")
		b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(n*b.N), "client-B/call")
	})
	b.Run("bare-net-http", func(b *testing.B) {
		c := benchClient(b, base, nil)
		tok, err := c.tokens.Token(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		var cpu time.Duration
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for r := 0; b.Loop(); r++ {
			start := cpuTime()
			var failed atomic.Int64
			// Lead numbers stay below 100,000: simLead makes a 9-digit SSN
			// of them, which the simulator checks.
			runWorkers(n, 50000+(r%4)*n, workers, func(i int) {
				body, _ := json.Marshal(map[string]any{"query": DefaultCreateDocument, "variables": map[string]any{"input": simLead(i, i%2 == 0)}})
				req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+tok)
				resp, err := hc.Do(req)
				if err != nil {
					failed.Add(1)
					return
				}
				var out struct {
					Data struct{ CreateLead *lead.Result }
				}
				err = json.NewDecoder(resp.Body).Decode(&out)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || out.Data.CreateLead == nil {
					failed.Add(1)
				}
			})
			cpu += cpuTime() - start
			if failed.Load() > 0 {
				b.Fatalf("%d calls failed", failed.Load())
			}
		}
		runtime.ReadMemStats(&m1)
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/10k")
		b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(n*b.N), "client-allocs/call")
		b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(n*b.N), "client-B/call")
	})
}

// BenchmarkThroughput measures rows per second: against a simulator with
// 200 ms createLead latency at concurrency 32 (ideal 160/s), and against a
// simulator limited to 50 requests/s with Config.Rate 50 (ideal 50/s,
// reporting the 429s seen).
func BenchmarkThroughput(b *testing.B) {
	cases := []struct {
		name      string
		latency   time.Duration
		rateLimit float64
		rate      float64
		workers   int
		n         int
	}{
		{"latency200ms-c32", 200 * time.Millisecond, 0, 0, 32, 640},
		{"limit50-rate50", 0, 50, 50, 16, 250},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			base := startSimProcess(b, tc.latency, tc.rateLimit)
			c := benchClient(b, base, func(cfg *Config) { cfg.Rate = tc.rate })
			var elapsed time.Duration
			for r := 0; b.Loop(); r++ {
				start := time.Now()
				runWorkers(tc.n, r*tc.n, tc.workers, func(i int) {
					if _, _, err := c.Create(context.Background(), simLead(i, false), nil); err != nil {
						b.Error(err)
					}
				})
				elapsed += time.Since(start)
			}
			b.ReportMetric(float64(tc.n*b.N)/elapsed.Seconds(), "rows/s")
			b.ReportMetric(float64(c.Stats().Status429), "429s")
		})
	}
}
