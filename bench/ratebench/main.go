// Command ratebench measures how `bulkload upload --rate auto` finds a rate
// limit it is not told, against `bulkload sim` in a separate process. For
// each scenario it starts a fresh simulator, starts an upload of a large
// file, polls the simulator's counters (GET /_sim/stats?requests) four
// times a second, interrupts the upload after the scenario's duration and
// prints one row of figures:
//
//   - limit R (smooth: the simulator's default bucket of R/10; bursty: a
//     bucket of R, one second's worth): the steady state (calls accepted
//     per second over the last third of the run) as % of R, the share of
//     calls answered 429 over the whole run, climb included, and the time
//     from the start until a second's accepted calls first reach 90% of R;
//   - no limit, latency L on every call, concurrency C: the steady state as
//     % of C/L;
//   - a limit that halves at T: the time from T until the first poll after
//     which 2 s pass with at most 1% of the answers 429 (a later probe's
//     lone 429 is not being over the limit), and the 429 share over the
//     run.
//
// The settled rate is the one the upload's summary JSON reports. The
// counters polled go to OUT/rate-NAME.samples.csv, to plot a run.
//
//	ratebench -bulkload bench/out/bulkload -input bench/out/rate-leads.csv
//	ratebench -bulkload ... -input ... -scenarios r300s,halve -duration 60s
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bulkload/bulkload/bench/internal/simproc"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// scenario is one measurement.
type scenario struct {
	name     string
	limit    float64       // the simulator's --rate-limit; 0 none
	burst    int           // --rate-burst; 0 the simulator's default
	halveAt  time.Duration // the limit halves then (0: never)
	latency  time.Duration // on createLead and submitLead
	conc     int
	duration time.Duration
}

// scenarios are the known scenarios by name.
func scenarios(d time.Duration) []scenario {
	var out []scenario
	for _, r := range []float64{50, 300, 2000} {
		out = append(out,
			scenario{name: fmt.Sprintf("r%.0fs", r), limit: r, conc: 32, duration: d},
			scenario{name: fmt.Sprintf("r%.0fb", r), limit: r, burst: int(r), conc: 32, duration: d},
		)
	}
	out = append(out,
		scenario{name: "nolimit", latency: 200 * time.Millisecond, conc: 32, duration: d * 3 / 4},
		scenario{name: "halve", limit: 300, halveAt: d * 3 / 4, conc: 32, duration: d * 5 / 4},
	)
	return out
}

// sample is the simulator's GraphQL answers so far, at t after the start.
type sample struct {
	t         time.Duration
	ok, other int // 2xx; anything but 2xx and 429
	throttled int // 429
}

// result is one scenario's figures.
type result struct {
	sc                        scenario
	calls, throttled          int
	steady                    float64 // accepted calls/s over the last third
	t90                       time.Duration
	backUnder                 time.Duration
	settled                   float64
	limitFound                bool
	summaryOK                 bool
	uploadExit                int
	samples                   []sample
	elapsedAtStop, sampleSpan time.Duration
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ratebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("bulkload", "", "path of the bulkload binary (required)")
	input := fs.String("input", "", "lead file to upload, large enough to outlast every scenario (required)")
	names := fs.String("scenarios", "r50s,r50b,r300s,r300b,r2000s,r2000b,nolimit,halve", "comma-separated scenarios: rNs (limit N, smooth), rNb (bursty), nolimit, halve")
	dur := fs.Duration("duration", 40*time.Second, "length of a limit scenario (nolimit: 3/4 of it; halve: 5/4, halving at 3/4)")
	port := fs.Int("port", 18797, "loopback port of the simulator")
	outDir := fs.String("out", "bench/out", "directory for logs, results and summaries")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *bin == "" || *input == "" {
		fmt.Fprintln(stderr, "ratebench: -bulkload and -input are required")
		return 2
	}
	known := map[string]scenario{}
	for _, sc := range scenarios(*dur) {
		known[sc.name] = sc
	}
	var results []result
	for _, name := range strings.Split(*names, ",") {
		sc, ok := known[strings.TrimSpace(name)]
		if !ok {
			fmt.Fprintf(stderr, "ratebench: unknown scenario %q\n", name)
			return 2
		}
		fmt.Fprintf(stderr, "== %s: limit %v burst %d halve-at %v latency %v concurrency %d for %v\n",
			sc.name, sc.limit, sc.burst, sc.halveAt, sc.latency, sc.conc, sc.duration)
		res, err := measure(ctx, sc, *bin, *input, *port, *outDir)
		if err != nil {
			fmt.Fprintf(stderr, "ratebench: %s: %v\n", sc.name, err)
			return 1
		}
		results = append(results, res)
	}
	printTable(stdout, results)
	return 0
}

func measure(ctx context.Context, sc scenario, bin, input string, port int, outDir string) (result, error) {
	res := result{sc: sc}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	var simArgs []string
	if sc.limit > 0 {
		simArgs = append(simArgs, "--rate-limit", fmt.Sprint(sc.limit))
	}
	if sc.burst > 0 {
		simArgs = append(simArgs, "--rate-burst", strconv.Itoa(sc.burst))
	}
	if sc.halveAt > 0 {
		simArgs = append(simArgs, "--rate-limit-change", fmt.Sprintf("%v@%v", sc.limit/2, sc.halveAt))
	}
	if sc.latency > 0 {
		simArgs = append(simArgs, "--create-latency", sc.latency.String(), "--submit-latency", sc.latency.String())
	}
	sim, err := simproc.Start(ctx, bin, addr, simArgs, filepath.Join(outDir, "rate-"+sc.name+".sim.log"))
	if err != nil {
		return res, err
	}
	defer sim.Stop()

	results := filepath.Join(outDir, "rate-"+sc.name+".results.csv")
	summary := filepath.Join(outDir, "rate-"+sc.name+".summary.json")
	_ = os.Remove(summary)
	// No ledger (issue 29): every run sends every row, and runs side by
	// side do not share one (a build without the ledger ignores it).
	up, err := simproc.StartUpload(ctx, bin, append(simproc.UploadArgs(sim.Base),
		"--rate", "auto", "--concurrency", strconv.Itoa(sc.conc), "--progress", "off", "--drain-timeout", "5s",
		"--overwrite", "--results", results, "--summary-json", summary, input), simproc.Env("BULKLOAD_LEDGER=off"),
		filepath.Join(outDir, "rate-"+sc.name+".upload.log"))
	if err != nil {
		return res, err
	}

	// The simulator's clock of --rate-limit-change starts with its
	// process; the figures count from the upload's start.
	start := up.Started
	offset := start.Sub(sim.Started)
	client := &http.Client{Timeout: 2 * time.Second}
	stopped := sim.Watch(client, up, sc.duration, func(st simproc.Stats, t time.Duration) {
		s := sampleOf(st)
		s.t = t
		res.samples = append(res.samples, s)
	})
	res.elapsedAtStop = time.Since(start)
	if !stopped {
		up.Interrupt()
	}
	res.uploadExit = up.Wait(30 * time.Second)
	if stopped {
		return res, fmt.Errorf("upload ended before the scenario did (exit %d): see %s", res.uploadExit, up.Log)
	}
	if b, err := os.ReadFile(summary); err == nil {
		var sum struct {
			Rate *struct {
				CallsPerSecond float64 `json:"callsPerSecond"`
				LimitFound     bool    `json:"limitFound"`
			} `json:"rate"`
		}
		if json.Unmarshal(b, &sum) == nil && sum.Rate != nil {
			res.settled, res.limitFound, res.summaryOK = sum.Rate.CallsPerSecond, sum.Rate.LimitFound, true
		}
	}
	res.figures(offset)
	return res, writeSamples(filepath.Join(outDir, "rate-"+sc.name+".samples.csv"), res.samples)
}

// writeSamples writes the counters polled, one line per poll: seconds
// since the upload started, then 2xx, 429 and other answers so far.
func writeSamples(path string, ss []sample) error {
	var b strings.Builder
	b.WriteString("t_s,ok,status_429,other\n")
	for _, s := range ss {
		fmt.Fprintf(&b, "%.3f,%d,%d,%d\n", s.t.Seconds(), s.ok, s.throttled, s.other)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// figures computes the result's figures from its samples.
func (r *result) figures(offset time.Duration) {
	s := r.samples
	if len(s) < 2 {
		return
	}
	last := s[len(s)-1]
	r.calls = last.ok + last.throttled + last.other
	r.throttled = last.throttled
	// Steady state: the last third of the run.
	from := s[0]
	for _, x := range s {
		if x.t <= last.t*2/3 {
			from = x
		}
	}
	if span := (last.t - from.t).Seconds(); span > 0 {
		r.steady = float64(last.ok-from.ok) / span
	}
	// Time to 90%: the first second whose accepted calls reach 0.9 R.
	r.t90 = -1
	if r.sc.limit > 0 && r.sc.halveAt == 0 {
		j := 0
		for i := range s {
			for s[i].t-s[j].t > time.Second {
				j++
			}
			if el := (s[i].t - s[j].t).Seconds(); el >= 0.9 && float64(s[i].ok-s[j].ok)/el >= 0.9*r.sc.limit {
				r.t90 = s[i].t
				break
			}
		}
	}
	// Back under a halved limit: from the change to the first poll after
	// which 2 s pass with at most 1% of the answers 429 (a later probe's
	// lone 429 is not being over the limit).
	if r.sc.halveAt > 0 {
		at := r.sc.halveAt - offset
		r.backUnder = -1
		for i := range s {
			if s[i].t < at {
				continue
			}
			j := i
			for j < len(s)-1 && s[j].t < s[i].t+2*time.Second {
				j++
			}
			if s[j].t < s[i].t+2*time.Second {
				break // the run ended first
			}
			d := s[j].throttled - s[i].throttled
			n := d + (s[j].ok - s[i].ok) + (s[j].other - s[i].other)
			if n > 0 && float64(d) <= 0.01*float64(n) {
				r.backUnder = max(s[i].t-at, 0)
				break
			}
		}
	}
}

func printTable(w io.Writer, rs []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tlimit/s\tsettled/s\tsteady/s\t% of aim\t429s\t% 429\tto 90%\tback under\t")
	for _, r := range rs {
		aim, aimName := r.sc.limit, ""
		if r.sc.halveAt > 0 {
			aim = r.sc.limit / 2
		}
		limit := fmt.Sprint(r.sc.limit)
		switch {
		case r.sc.limit == 0:
			aim = float64(r.sc.conc) / r.sc.latency.Seconds()
			limit, aimName = "none", fmt.Sprintf(" C/L=%.0f", aim)
		case r.sc.halveAt > 0:
			limit = fmt.Sprintf("%v→%v@%v", r.sc.limit, r.sc.limit/2, r.sc.halveAt)
		}
		settled := "-"
		if r.summaryOK {
			settled = fmt.Sprintf("%.0f", r.settled)
			if !r.limitFound {
				settled += " (none found)"
			}
		}
		share := 0.0
		if r.calls > 0 {
			share = 100 * float64(r.throttled) / float64(r.calls)
		}
		t90, back := "-", "-"
		if r.t90 > 0 {
			t90 = fmt.Sprintf("%.1fs", r.t90.Seconds())
		} else if r.sc.limit > 0 && r.sc.halveAt == 0 {
			t90 = "never"
		}
		if r.sc.halveAt > 0 {
			back = fmt.Sprintf("%.2fs", r.backUnder.Seconds())
			if r.backUnder < 0 {
				back = "never"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%.1f%%%s\t%d/%d\t%.2f%%\t%s\t%s\t\n",
			r.sc.name, limit, settled, r.steady, 100*r.steady/aim, aimName, r.throttled, r.calls, share, t90, back)
	}
	_ = tw.Flush()
}

// sampleOf is the simulator's GraphQL answers so far (a 503 is one of
// the other answers).
func sampleOf(st simproc.Stats) sample {
	a := st.Answers()
	return sample{ok: a.OK, throttled: a.Throttled, other: a.Shed + a.Other}
}
