// Command hangbench measures how `bulkload upload` meets a hung service,
// against `bulkload sim --hang-after N` in a separate process, in both
// forms of the hang (--hang-mode held: requests processed, answers held;
// unread: requests held unread, nothing processed), with no tuning flag on
// the upload but --timeout and --outage-wait (issue 27's aim: --timeout 5s
// --outage-wait 30s, exit 4 within 50 s, 0 failed). For each form it
// starts a fresh simulator, uploads the input until the run stops, notes
// when the first request was held (GET /_sim/stats, ten times a second),
// then heals the simulator (POST /_sim/heal) and resumes the upload to its
// end, and prints one row of figures:
//
//   - the first run: its exit status and wall time; the time from the hang
//     to the outage's start and to the run's end; rows by status (failed,
//     submit_failed, unverified, not sent) and what bound it (summary JSON);
//
//   - the resume: its exit status, wall time and rows by status, and the
//     simulator's leads against the rows and its submissions against the
//     rows submitted (every lead once: as many leads as rows, besides the
//     duplicate records of the rows a held hang had processed and the
//     resume sent again, none of which any row ends with; as many
//     submissions as rows submitted).
//
//     hangbench -bulkload bench/out/bulkload -input bench/out/hang-leads-1000.csv
package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bulkload/bulkload/bench/internal/simproc"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// config is the command line.
type config struct {
	bin, input, outDir string
	modes              []string
	hangAfter, port    int
	timeout, wait      time.Duration
	latency            time.Duration
	env                []string // the uploads' environment (measure sets it)
}

// result is one form's figures.
type result struct {
	mode                  string
	exit                  int
	wall, toOutage, toEnd time.Duration
	first                 map[string]int // rows by status after the first run, "not sent" included
	bound                 string
	outageCause           string
	resumeExit            int
	resumeWall            time.Duration
	final                 map[string]int // "duplicate": rows whose result code is 1002
	rows                  int
	leadsCreated          int // not counting duplicate records
	duplicates            int // duplicate records the simulator made
	submissions           int
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flag.NewFlagSet("hangbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.bin, "bulkload", "", "path of the bulkload binary (required)")
	fs.StringVar(&c.input, "input", "", "lead file to upload, every row valid (required)")
	fs.StringVar(&c.outDir, "out", "bench/out", "directory for logs, results and summaries")
	modes := fs.String("modes", "held,unread", "comma-separated hang modes of the simulator")
	fs.IntVar(&c.hangAfter, "hang-after", 150, "the simulator hangs after this many lead endpoint requests")
	fs.IntVar(&c.port, "port", 18911, "loopback port of the simulator")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Second, "the upload's --timeout")
	fs.DurationVar(&c.wait, "outage-wait", 30*time.Second, "the upload's --outage-wait")
	fs.DurationVar(&c.latency, "latency", 50*time.Millisecond, "createLead and submitLead latency of the simulator")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if c.bin == "" || c.input == "" {
		fmt.Fprintln(stderr, "hangbench: -bulkload and -input are required")
		return 2
	}
	c.modes = strings.Split(*modes, ",")
	var results []result
	for _, m := range c.modes {
		fmt.Fprintf(stderr, "== hang %s after %d requests, --timeout %v --outage-wait %v\n", m, c.hangAfter, c.timeout, c.wait)
		r, err := measure(ctx, c, strings.TrimSpace(m))
		if err != nil {
			fmt.Fprintf(stderr, "hangbench: %s: %v\n", m, err)
			return 1
		}
		results = append(results, r)
	}
	printTable(stdout, c, results)
	for _, r := range results {
		if !r.ok(c) {
			return 1
		}
	}
	return 0
}

// ok reports whether r meets the aims: exit 4 within 50 s of the hang (at
// --timeout 5s --outage-wait 30s: 3 x --timeout + --outage-wait + 5 s), no
// row failed, and a resume that ends every row with every lead once.
func (r result) ok(c config) bool {
	bound := 3*c.timeout + c.wait + 5*time.Second
	return r.exit == 4 && r.toEnd <= bound && r.first["failed"] == 0 && r.first["submit_failed"] == 0 &&
		r.resumeExit == 0 && r.final["processed"]+r.final["submitted"] == r.rows && r.final["duplicate"] == 0 &&
		r.leadsCreated == r.rows && r.submissions == r.final["submitted"]
}

func measure(ctx context.Context, c config, mode string) (result, error) {
	res := result{mode: mode}
	addr := fmt.Sprintf("127.0.0.1:%d", c.port)
	sim, err := simproc.Start(ctx, c.bin, addr, []string{
		"--create-latency", c.latency.String(), "--submit-latency", c.latency.String(),
		"--hang-after", fmt.Sprint(c.hangAfter), "--hang-mode", mode,
	}, filepath.Join(c.outDir, "hang-"+mode+".sim.log"))
	if err != nil {
		return res, err
	}
	defer sim.Stop()
	base := sim.Base
	rows, err := countRows(c.input)
	if err != nil {
		return res, err
	}
	res.rows = rows

	results := filepath.Join(c.outDir, "hang-"+mode+".results.csv")
	summary := filepath.Join(c.outDir, "hang-"+mode+".summary.json")
	for _, p := range []string{results, summary} {
		_ = os.Remove(p)
	}
	// A ledger of its own (the default one is shared by every run of
	// this user, and would find the leads of the form run before already
	// sent): XDG_STATE_HOME, which also binaries from before --ledger take.
	state, err := os.MkdirTemp("", "hangbench-state-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(state)
	c.env = simproc.Env("XDG_STATE_HOME=" + state)
	upArgs := append(simproc.UploadArgs(base),
		"--progress", "off", "--timeout", c.timeout.String(), "--outage-wait", c.wait.String(),
		"--results", results, "--summary-json", summary)

	// The first run, and when the hang began.
	client := &http.Client{Timeout: 2 * time.Second}
	hungAt := make(chan time.Time, 1)
	pollCtx, stopPoll := context.WithCancel(ctx)
	go func() {
		for pollCtx.Err() == nil {
			if st, err := stats(client, base); err == nil && st.Rejections["hung"] > 0 {
				hungAt <- time.Now()
				return
			}
			select {
			case <-pollCtx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	res.exit, err = upload(ctx, c, filepath.Join(c.outDir, "hang-"+mode+".upload.log"), append(upArgs, "--overwrite", c.input))
	if err != nil {
		stopPoll()
		return res, err
	}
	end := time.Now()
	stopPoll()
	res.wall = end.Sub(start)
	var hang time.Time
	select {
	case hang = <-hungAt:
	default:
		return res, errors.New("the simulator held no request: the hang came after the input's end (lower -hang-after)")
	}
	res.toEnd = end.Sub(hang)
	var sj struct {
		BoundBy *struct{ Kind, Text string } `json:"boundBy"`
		Outages []struct {
			Start time.Time `json:"start"`
			Cause string    `json:"cause"`
		} `json:"outages"`
		NotSent int `json:"notSent"`
	}
	if err := readJSON(summary, &sj); err != nil {
		return res, err
	}
	if sj.BoundBy != nil {
		res.bound = sj.BoundBy.Kind
	}
	if len(sj.Outages) > 0 {
		res.toOutage = sj.Outages[0].Start.Sub(hang)
		res.outageCause = sj.Outages[0].Cause
	}
	if res.first, err = statuses(results); err != nil {
		return res, err
	}
	res.first["not sent"] = sj.NotSent

	// The resume, once the simulator answers again.
	resp, err := client.Post(base+"/_sim/heal", "", nil)
	if err != nil {
		return res, fmt.Errorf("heal: %w", err)
	}
	resp.Body.Close()
	start = time.Now()
	res.resumeExit, err = upload(ctx, c, filepath.Join(c.outDir, "hang-"+mode+".resume.log"), append(upArgs, "--resume", c.input))
	if err != nil {
		return res, err
	}
	res.resumeWall = time.Since(start)
	if res.final, err = statuses(results); err != nil {
		return res, err
	}
	st, err := stats(client, base)
	if err != nil {
		return res, err
	}
	res.duplicates = st.ResultCodes[1002]
	res.leadsCreated, res.submissions = st.LeadsCreated-res.duplicates, st.Submissions
	return res, nil
}

// upload runs bulkload with args, its output to logPath, and returns its
// exit status.
func upload(ctx context.Context, c config, logPath string, args []string) (int, error) {
	lf, err := os.Create(logPath)
	if err != nil {
		return 0, err
	}
	defer lf.Close()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env = c.env
	cmd.Stdout, cmd.Stderr = lf, lf
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), nil
	case err != nil:
		return 0, fmt.Errorf("run upload: %w", err)
	}
	return 0, nil
}

// simStats is what hangbench reads of GET /_sim/stats.
type simStats struct {
	LeadsCreated int            `json:"leadsCreated"`
	Submissions  int            `json:"submissions"`
	Rejections   map[string]int `json:"rejections"`
	ResultCodes  map[int]int    `json:"resultCodes"`
}

func stats(client *http.Client, base string) (simStats, error) {
	var st simStats
	resp, err := client.Get(base + "/_sim/stats")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	// Decode before st is read: in "return st, f(&st)" the order of the
	// read and the call is not fixed by the language.
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// statuses counts the rows of a results file (CSV) by status, and under
// "duplicate" those whose result code is 1002.
func statuses(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return countStatuses(f)
}

func countStatuses(r io.Reader) (map[string]int, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("results file: %w", err)
	}
	col, code := -1, -1
	for i, h := range head {
		switch h {
		case "status":
			col = i
		case "resultCode":
			code = i
		}
	}
	if col < 0 || code < 0 {
		return nil, errors.New("results file has no status or resultCode column")
	}
	out := map[string]int{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("results file: %w", err)
		}
		if col < len(rec) {
			out[rec[col]]++
		}
		if code < len(rec) && rec[code] == "1002" {
			out["duplicate"]++
		}
	}
}

// countRows counts the data rows of a CSV input (lines after the header;
// the generated inputs have no line breaks inside fields).
func countRows(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return max(0, bytes.Count(b, []byte("\n"))-1), nil
}

func printTable(w io.Writer, c config, rs []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "hang\texit\thang→outage\thang→exit\taim\tfailed\tsubmit_failed\tunverified\tcreated\tnot sent\tbound by\tresume exit\tresume s\trows done\tleads (+dup records)\tsubmissions/submitted\tok\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%d\t%.1f s\t%.1f s\t≤ %.0f s\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%.1f\t%d/%d\t%d (+%d)\t%d/%d\t%v\t\n",
			r.mode, r.exit, r.toOutage.Seconds(), r.toEnd.Seconds(), (3*c.timeout + c.wait + 5*time.Second).Seconds(),
			r.first["failed"], r.first["submit_failed"], r.first["unverified"], r.first["created"], r.first["not sent"], r.bound,
			r.resumeExit, r.resumeWall.Seconds(), r.final["processed"]+r.final["submitted"], r.rows, r.leadsCreated,
			r.duplicates, r.submissions, r.final["submitted"], r.ok(c))
	}
	tw.Flush()
}
