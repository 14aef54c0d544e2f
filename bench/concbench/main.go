// Command concbench measures how `bulkload upload` finds the concurrency a
// slow service takes (--concurrency auto, the default), against `bulkload
// sim` in a separate process, with no tuning flag on the upload. For each
// scenario it starts a fresh simulator, starts an upload of a large file,
// polls the simulator's counters (GET /_sim/stats?requests: answers by
// status, and the capacity gate's queue wait, shed and calls in flight)
// four times a second, interrupts the upload after the scenario's time
// (or lets it finish, for the fast scenario) and prints one row of figures:
//
//   - steady state: 2xx answers a second over the last third of the run,
//     as % of the aim (K/L for a capacity, R for a rate limit);
//   - the mean queue wait inside the simulator over the same span, as % of
//     L; the shares of 503 (shed) and 429 answers over the whole run;
//   - the time from the start until a second's 2xx first reach 90% of the
//     steady state;
//   - for a capacity that changes: the time from the change until the
//     first 2 s whose mean queue wait is at most 10% of L;
//   - the limit the upload ended with and what bound it (its summary JSON),
//     its CPU time and peak RSS (rusage);
//   - the rows its results file ends failed (failed, submit_failed);
//   - for a scenario of a group (the shapes of issue 27: slow calls at
//     random, a share of 503s, a Retry-After), its steady state against
//     the best fixed --concurrency of the same group, measured in the same
//     run (-parallel runs them side by side, each on its own port).
//
// The counters polled go to OUT/conc-NAME.samples.csv.
//
//	concbench -bulkload bench/out/bulkload -input bench/out/conc-leads.csv -fast-input bench/out/conc-fast-10000.csv
//	concbench -bulkload bench/out/bulkload -input ... -scenarios bimodal,bimodal-c8,bimodal-c32,bimodal-c128 -parallel
package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	what     string
	lat, jit time.Duration // createLead and submitLead: lat - jit/2 + [0, jit)
	capacity int           // 0: none
	queue    int           // --queue-limit
	capAfter int           // the capacity changes to this at changeAt
	changeAt time.Duration
	rate     float64 // --rate-limit
	aim      float64 // calls/s
	duration time.Duration
	upload   []string // flags beyond the connection's (only where the aim needs one)
	complete bool     // the upload runs to its end (fast scenario)
	// A shape that does not depend on the load (issue 27): createLead's
	// latency distribution (--create-latency-dist), a share of 503s
	// (--fail-503) and their Retry-After (--fail-503-retry-after).
	dist       string
	fail503    float64
	retryAfter string
	// group names the shape a scenario measures: its auto run is compared
	// with the best of its fixed ones (fixed: a reference, --concurrency N).
	group string
	fixed bool
	whole bool // the steady state is over the whole run, climb included
}

// shape is a group of scenarios: the shape with no tuning flag, and with
// --concurrency N for each N, for 30 s.
func shape(name, what string, sc scenario, fixed ...int) []scenario {
	sc.group, sc.duration = name, 30*time.Second
	auto := sc
	auto.name, auto.what = name, what
	out := []scenario{auto}
	for _, n := range fixed {
		f := sc
		f.name, f.what, f.fixed = fmt.Sprintf("%s-c%d", name, n), fmt.Sprintf("%s, --concurrency %d", what, n), true
		f.upload = append(append([]string(nil), sc.upload...), "--concurrency", fmt.Sprint(n))
		out = append(out, f)
	}
	return out
}

func scenarios() []scenario {
	return []scenario{
		{name: "cap64", what: "L 1 s ±0.2, K 64, queue 64", lat: time.Second, jit: 400 * time.Millisecond, capacity: 64, queue: 64, aim: 64, duration: 40 * time.Second},
		{name: "cap256", what: "L 2 s, K 256, queue 256", lat: 2 * time.Second, capacity: 256, queue: 256, aim: 128, duration: 50 * time.Second},
		{name: "cap8", what: "L 20 ms, K 8, queue 8", lat: 20 * time.Millisecond, capacity: 8, queue: 8, aim: 400, duration: 30 * time.Second},
		{name: "cap8c8", what: "L 20 ms, K 8, queue 8, --concurrency 8", lat: 20 * time.Millisecond, capacity: 8, queue: 8, aim: 400, duration: 30 * time.Second, upload: []string{"--concurrency", "8"}},
		{name: "cap8c9", what: "L 20 ms, K 8, queue 8, --concurrency 9", lat: 20 * time.Millisecond, capacity: 8, queue: 8, aim: 400, duration: 30 * time.Second, upload: []string{"--concurrency", "9"}},
		{name: "cap8c10", what: "L 20 ms, K 8, queue 8, --concurrency 10", lat: 20 * time.Millisecond, capacity: 8, queue: 8, aim: 400, duration: 30 * time.Second, upload: []string{"--concurrency", "10"}},
		{name: "rate150", what: "L 300 ms ±100, R 150/s, K none", lat: 300 * time.Millisecond, jit: 200 * time.Millisecond, rate: 150, aim: 150, duration: 40 * time.Second},
		{name: "halve", what: "L 1 s ±0.2, K 64 → 32 at 25 s, queue 32", lat: time.Second, jit: 400 * time.Millisecond, capacity: 64, queue: 32, capAfter: 32, changeAt: 25 * time.Second, aim: 32, duration: 45 * time.Second},
		{name: "halve64", what: "L 1 s ±0.2, K 64 → 32 at 25 s, queue 64", lat: time.Second, jit: 400 * time.Millisecond, capacity: 64, queue: 64, capAfter: 32, changeAt: 25 * time.Second, aim: 32, duration: 45 * time.Second},
		{name: "mem512", what: "L 1 s, K none, --max-concurrency 512 --rate 0", lat: time.Second, aim: 512, duration: 30 * time.Second, upload: []string{"--max-concurrency", "512", "--rate", "0"}},
		{name: "fast", what: "no latency, no limit, 10,000 leads, defaults", complete: true, duration: 3 * time.Minute},
		{name: "fast8", what: "the same, --concurrency 8 (the old default)", complete: true, duration: 3 * time.Minute, upload: []string{"--concurrency", "8"}},
		{name: "fast8r0", what: "the same, --concurrency 8 --rate 0 (issue 27's reference)", complete: true, duration: 3 * time.Minute, upload: []string{"--concurrency", "8", "--rate", "0"}},
		{name: "cap8whole", what: "L 20 ms, K 8, queue 8, 20 s: aims over the whole run", lat: 20 * time.Millisecond, capacity: 8, queue: 8, aim: 400, duration: 20 * time.Second, group: "cap8whole", whole: true},
		{name: "cap8whole-c8", what: "the same, --concurrency 8", lat: 20 * time.Millisecond, capacity: 8, queue: 8, aim: 400, duration: 20 * time.Second, group: "cap8whole", fixed: true, whole: true, upload: []string{"--concurrency", "8"}},
	}
}

// shapes are issue 27's service shapes that do not depend on the load,
// each with the fixed limits it is measured against.
func shapes() []scenario {
	var out []scenario
	for _, g := range [][]scenario{
		shape("bimodal", "createLead 50 ms, or 2 s for a random 10%; no capacity", scenario{dist: "bimodal:50ms,2s,0.1"}, 8, 32, 128),
		shape("bimodalk32", "the same behind a capacity of 32 (no queue bound)", scenario{dist: "bimodal:50ms,2s,0.1", capacity: 32}, 16, 32, 64),
		shape("lognormal", "createLead lognormal, median 100 ms, sigma 1; capacity 64", scenario{dist: "lognormal:100ms,1", capacity: 64}, 32, 64, 128),
		shape("pareto", "createLead pareto, at least 50 ms, alpha 1.5; no capacity", scenario{dist: "pareto:50ms,1.5"}, 8, 32, 128),
		shape("fail10", "10% of calls 503, L 50 ms; no capacity", scenario{lat: 50 * time.Millisecond, fail503: 0.1, upload: []string{"--max-attempts", "10"}}, 8, 32, 128),
		shape("fail20", "20% of calls 503, L 50 ms; no capacity", scenario{lat: 50 * time.Millisecond, fail503: 0.2, upload: []string{"--max-attempts", "10"}}, 8, 32, 128),
		shape("ra2", "every 10th call 503 with Retry-After: 2, L 20 ms; no capacity", scenario{lat: 20 * time.Millisecond, fail503: 0.1, retryAfter: "2", upload: []string{"--max-attempts", "10"}}, 8, 32, 128),
	} {
		out = append(out, g...)
	}
	return out
}

// sample is the simulator's counters at t after the upload's start.
type sample struct {
	t                   time.Duration
	ok, r429, r503, oth int
	admitted            int64
	waitSeconds         float64
	inFlight            int
}

// result is one scenario's figures.
type result struct {
	sc                 scenario
	samples            []sample
	failed             int // rows ended failed or submit_failed
	calls              int
	steady, waitPct    float64
	t90, backUnder     time.Duration
	share503, share429 float64
	limit, peak        int
	boundKind, bound   string
	cpu                time.Duration
	rssMiB             float64
	wall               time.Duration
	rows               int
	exit               int
	peakSimInFlight    int
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("concbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("bulkload", "", "path of the bulkload binary (required)")
	input := fs.String("input", "", "lead file to upload, large enough to outlast every timed scenario (required)")
	fastInput := fs.String("fast-input", "", "lead file of the fast scenarios, uploaded to its end (required for fast, fast8)")
	names := fs.String("scenarios", "cap64,cap256,cap8,rate150,halve,mem512,fast,fast8", "comma-separated scenarios")
	port := fs.Int("port", 18897, "loopback port of the simulator (with -parallel, the first of as many as scenarios)")
	dur := fs.Duration("duration", 0, "length of every timed scenario instead of its own (0: its own)")
	parallel := fs.Bool("parallel", false, "run the scenarios side by side, each with its simulator on its own port, instead of one after the other")
	outDir := fs.String("out", "bench/out", "directory for logs, results and summaries")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *bin == "" || *input == "" {
		fmt.Fprintln(stderr, "concbench: -bulkload and -input are required")
		return 2
	}
	known := map[string]scenario{}
	for _, sc := range append(scenarios(), shapes()...) {
		if *dur > 0 && !sc.complete {
			sc.duration = *dur
		}
		known[sc.name] = sc
	}
	var results []result
	if *parallel {
		return runParallel(ctx, strings.Split(*names, ","), known, *bin, *input, *fastInput, *port, *outDir, stdout, stderr)
	}
	for _, name := range strings.Split(*names, ",") {
		sc, ok := known[strings.TrimSpace(name)]
		if !ok {
			fmt.Fprintf(stderr, "concbench: unknown scenario %q\n", name)
			return 2
		}
		in := *input
		if sc.complete {
			in = *fastInput
			if in == "" {
				fmt.Fprintln(stderr, "concbench: -fast-input is required for", sc.name)
				return 2
			}
		}
		fmt.Fprintf(stderr, "== %s: %s, %v\n", sc.name, sc.what, sc.duration)
		res, err := measure(ctx, sc, *bin, in, *port, *outDir)
		if err != nil {
			fmt.Fprintf(stderr, "concbench: %s: %v\n", sc.name, err)
			return 1
		}
		results = append(results, res)
	}
	printTable(stdout, results)
	return 0
}

// runParallel runs the named scenarios side by side, the i-th with its
// simulator on port+i, and prints one table.
func runParallel(ctx context.Context, names []string, known map[string]scenario, bin, input, fastInput string, port int, outDir string, stdout, stderr io.Writer) int {
	type done struct {
		i   int
		res result
		err error
	}
	ch := make(chan done, len(names))
	for i, name := range names {
		sc, ok := known[strings.TrimSpace(name)]
		if !ok {
			fmt.Fprintf(stderr, "concbench: unknown scenario %q\n", name)
			return 2
		}
		in := input
		if sc.complete {
			in = fastInput
		}
		fmt.Fprintf(stderr, "== %s: %s, %v (port %d)\n", sc.name, sc.what, sc.duration, port+i)
		go func() {
			res, err := measure(ctx, sc, bin, in, port+i, outDir)
			ch <- done{i, res, err}
		}()
	}
	results := make([]result, len(names))
	errs := make([]error, len(names))
	failed := false
	for range names {
		d := <-ch
		if d.err != nil {
			fmt.Fprintf(stderr, "concbench: %s: %v\n", strings.TrimSpace(names[d.i]), d.err)
			failed = true
		}
		results[d.i], errs[d.i] = d.res, d.err
	}
	// The table of the scenarios that ran, and what became of those that
	// failed: one scenario's failure must not hide the others' figures.
	printTable(stdout, results)
	for i, err := range errs {
		if err != nil {
			fmt.Fprintf(stdout, "%s: FAILED: %v\n", strings.TrimSpace(names[i]), err)
		}
	}
	if failed {
		return 1
	}
	return 0
}

func measure(ctx context.Context, sc scenario, bin, input string, port int, outDir string) (result, error) {
	res := result{sc: sc}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	var simArgs []string
	if sc.lat > 0 {
		fixed := sc.lat - sc.jit/2
		simArgs = append(simArgs, "--create-latency", fixed.String(), "--submit-latency", fixed.String())
		if sc.jit > 0 {
			simArgs = append(simArgs, "--create-jitter", sc.jit.String(), "--submit-jitter", sc.jit.String())
		}
	}
	if sc.capacity > 0 {
		simArgs = append(simArgs, "--capacity", fmt.Sprint(sc.capacity), "--queue-limit", fmt.Sprint(sc.queue))
	}
	if sc.changeAt > 0 {
		simArgs = append(simArgs, "--capacity-change", fmt.Sprintf("%d@%v", sc.capAfter, sc.changeAt))
	}
	if sc.rate > 0 {
		simArgs = append(simArgs, "--rate-limit", fmt.Sprint(sc.rate))
	}
	if sc.dist != "" {
		simArgs = append(simArgs, "--create-latency-dist", sc.dist)
	}
	if sc.fail503 > 0 {
		simArgs = append(simArgs, "--fail-503", fmt.Sprint(sc.fail503), "--seed", fmt.Sprint(port))
	}
	if sc.retryAfter != "" {
		simArgs = append(simArgs, "--fail-503-retry-after", sc.retryAfter)
	}
	sim, err := simproc.Start(ctx, bin, addr, simArgs, filepath.Join(outDir, "conc-"+sc.name+".sim.log"))
	if err != nil {
		return res, err
	}
	defer sim.Stop()

	results := filepath.Join(outDir, "conc-"+sc.name+".results.csv")
	summary := filepath.Join(outDir, "conc-"+sc.name+".summary.json")
	_ = os.Remove(summary)
	upArgs := append(simproc.UploadArgs(sim.Base),
		"--progress", "off", "--drain-timeout", "10s", "--overwrite", "--results", results, "--summary-json", summary)
	upArgs = append(append(upArgs, sc.upload...), input)
	// No ledger (issue 29): every run sends every row, and runs side by
	// side do not share one (a build without the ledger ignores it).
	up, err := simproc.StartUpload(ctx, bin, upArgs, simproc.Env("BULKLOAD_LEDGER=off"), filepath.Join(outDir, "conc-"+sc.name+".upload.log"))
	if err != nil {
		return res, err
	}
	start := up.Started

	// The simulator's clock of --capacity-change starts with its process;
	// the figures count from the upload's start.
	offset := start.Sub(sim.Started)
	client := &http.Client{Timeout: 2 * time.Second}
	ended := sim.Watch(client, up, sc.duration, func(st simproc.Stats, t time.Duration) {
		s := sampleOf(st)
		s.t = t
		res.samples = append(res.samples, s)
		res.peakSimInFlight = max(res.peakSimInFlight, s.inFlight)
	})
	if ended && !sc.complete {
		// The input ran out (a service faster than the input is long) or
		// the upload stopped: say which, from its exit status.
		return res, fmt.Errorf("upload ended after %v, before the scenario's %v did (exit %d; an exit 0 is the input used up: a longer -input): see %s",
			time.Since(start).Round(100*time.Millisecond), sc.duration, simproc.ExitCode(<-up.Done), up.Log)
	}
	if !ended {
		if sc.complete {
			up.Kill()
			return res, fmt.Errorf("upload did not finish within %v", sc.duration)
		}
		up.Interrupt()
	}
	res.exit = up.Wait(30 * time.Second)
	res.wall = time.Since(start)
	if ru, ok := up.State().SysUsage().(*syscall.Rusage); ok {
		res.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		res.rssMiB = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	if st, err := sim.Stats(client); err == nil {
		s := sampleOf(st)
		s.t = time.Since(start)
		res.samples = append(res.samples, s)
	}
	if b, err := os.ReadFile(summary); err == nil {
		var sum struct {
			RowsRead    int `json:"rowsRead"`
			Concurrency *struct {
				Limit        int `json:"limit"`
				PeakInFlight int `json:"peakInFlight"`
			} `json:"concurrency"`
			BoundBy *struct {
				Kind string `json:"kind"`
				Text string `json:"text"`
			} `json:"boundBy"`
		}
		if json.Unmarshal(b, &sum) == nil {
			res.rows = sum.RowsRead
			if sum.Concurrency != nil {
				res.limit, res.peak = sum.Concurrency.Limit, sum.Concurrency.PeakInFlight
			}
			if sum.BoundBy != nil {
				res.boundKind, res.bound = sum.BoundBy.Kind, sum.BoundBy.Text
			}
		}
	}
	res.figures(offset)
	res.failed = countFailed(results)
	return res, writeSamples(filepath.Join(outDir, "conc-"+sc.name+".samples.csv"), res.samples)
}

// countFailed counts the rows a results file ends failed or submit_failed
// (the last line of each row); -1 when it cannot be read.
func countFailed(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return -1
	}
	rowCol, statusCol := -1, -1
	for i, h := range head {
		switch h {
		case "row":
			rowCol = i
		case "status":
			statusCol = i
		}
	}
	if rowCol < 0 || statusCol < 0 {
		return -1
	}
	last := map[string]string{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil || len(rec) <= max(rowCol, statusCol) {
			continue
		}
		last[rec[rowCol]] = rec[statusCol]
	}
	n := 0
	for _, st := range last {
		if st == "failed" || st == "submit_failed" {
			n++
		}
	}
	return n
}

// writeSamples writes the counters polled, one line per poll.
func writeSamples(path string, ss []sample) error {
	var b strings.Builder
	b.WriteString("t_s,ok,status_429,status_503,other,admitted,queue_wait_s,in_flight\n")
	for _, s := range ss {
		fmt.Fprintf(&b, "%.3f,%d,%d,%d,%d,%d,%.3f,%d\n", s.t.Seconds(), s.ok, s.r429, s.r503, s.oth, s.admitted, s.waitSeconds, s.inFlight)
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
	r.calls = last.ok + last.r429 + last.r503 + last.oth
	if r.calls > 0 {
		r.share503 = 100 * float64(last.r503) / float64(r.calls)
		r.share429 = 100 * float64(last.r429) / float64(r.calls)
	}
	// Steady state: the last third of the run (of the polls while the
	// upload ran: the last poll, after it ended, is left out of the span
	// of a run that was interrupted).
	end := len(s) - 1
	if !r.sc.complete && end > 1 {
		end--
	}
	to := s[end]
	from := s[0]
	for _, x := range s[:end+1] {
		if x.t <= to.t*2/3 {
			from = x
		}
	}
	if r.sc.complete || r.sc.whole {
		from = s[0]
	}
	if span := (to.t - from.t).Seconds(); span > 0 {
		r.steady = float64(to.ok-from.ok) / span
	}
	if n := to.admitted - from.admitted; n > 0 && r.sc.lat > 0 {
		r.waitPct = 100 * (to.waitSeconds - from.waitSeconds) / float64(n) / r.sc.lat.Seconds()
	}
	// Time to 90% of the steady state: the first second whose 2xx reach it.
	r.t90 = -1
	j := 0
	for i := range s {
		for s[i].t-s[j].t > time.Second {
			j++
		}
		if el := (s[i].t - s[j].t).Seconds(); el >= 0.9 && float64(s[i].ok-s[j].ok)/el >= 0.9*r.steady {
			r.t90 = s[i].t
			break
		}
	}
	// Back from a capacity change: the first 2 s from the change on whose
	// mean queue wait is at most 10% of L.
	if r.sc.changeAt > 0 {
		at := r.sc.changeAt - offset
		r.backUnder = -1
		for i := range s {
			if s[i].t < at {
				continue
			}
			k := i
			for k < len(s)-1 && s[k].t < s[i].t+2*time.Second {
				k++
			}
			if s[k].t < s[i].t+2*time.Second {
				break
			}
			n := s[k].admitted - s[i].admitted
			if n > 0 && (s[k].waitSeconds-s[i].waitSeconds)/float64(n) <= 0.1*r.sc.lat.Seconds() {
				r.backUnder = max(s[i].t-at, 0)
				break
			}
		}
	}
}

func printTable(w io.Writer, rs []result) {
	// A group's auto run against its best fixed one.
	best := map[string]result{}
	for _, r := range rs {
		if b, ok := best[r.sc.group]; r.sc.fixed && (!ok || r.steady > b.steady) {
			best[r.sc.group] = r
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tservice\tsteady/s\t% of aim\tlimit (peak)\tbound by\t503 %\t429 %\tqueue wait % of L\tto 90%\tback ≤10%\tCPU s\tRSS MiB\tfailed rows\texit\t")
	for _, r := range rs {
		aim := "-"
		if r.sc.aim > 0 {
			aim = fmt.Sprintf("%.1f%% of %.0f", 100*r.steady/r.sc.aim, r.sc.aim)
		}
		if b, ok := best[r.sc.group]; ok && r.sc.group != "" && !r.sc.fixed && b.steady > 0 {
			aim = fmt.Sprintf("%.1f%% of %s (%.1f/s)", 100*r.steady/b.steady, b.sc.name, b.steady)
		}
		if r.sc.complete {
			aim = fmt.Sprintf("%d rows in %.2f s = %.0f rows/s", r.rows, r.wall.Seconds(), float64(r.rows)/r.wall.Seconds())
		}
		wait, t90, back := "-", "-", "-"
		if r.sc.lat > 0 && r.sc.capacity > 0 {
			wait = fmt.Sprintf("%.1f%%", r.waitPct)
		}
		if r.t90 > 0 {
			t90 = fmt.Sprintf("%.1fs", r.t90.Seconds())
		}
		if r.sc.changeAt > 0 {
			back = fmt.Sprintf("%.2fs", r.backUnder.Seconds())
			if r.backUnder < 0 {
				back = "never"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%s\t%d (%d)\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t%.2f\t%.1f\t%d\t%d\t\n",
			r.sc.name, r.sc.what, r.steady, aim, r.limit, r.peak, r.boundKind, r.share503, r.share429, wait, t90, back, r.cpu.Seconds(), r.rssMiB, r.failed, r.exit)
	}
	_ = tw.Flush()
	for _, r := range rs {
		fmt.Fprintf(w, "%s: bound by %s (simulator's peak in flight %d)\n", r.sc.name, r.bound, r.peakSimInFlight)
	}
}

// sampleOf is the simulator's answers so far and its capacity gate.
func sampleOf(st simproc.Stats) sample {
	a := st.Answers()
	return sample{ok: a.OK, r429: a.Throttled, r503: a.Shed, oth: a.Other,
		admitted: st.Capacity.Admitted, waitSeconds: st.Capacity.QueueWaitSeconds, inFlight: st.Capacity.InFlight}
}
