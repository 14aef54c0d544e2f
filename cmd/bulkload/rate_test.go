package main

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/summary"
)

func TestRateAutoIsTheDefault(t *testing.T) {
	t.Parallel()
	up := app.NewUploadOptions()
	fs := flag.NewFlagSet("upload", flag.ContinueOnError)
	registerUpload(fs, up)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if !up.Rate.Auto || fs.Lookup("rate").DefValue != "auto" {
		t.Errorf("--rate default = %+v (shown as %q), want auto", up.Rate, fs.Lookup("rate").DefValue)
	}
}

// TestResumeStartsFromTheEarlierPacing: a --resume starts its rate held
// just under the limit the run it continues found, recorded in the summary
// beside the results file (issue 27: a resume of 1,000 rows spent 10 of
// its 16 s climbing again from 20 calls/s). How the rate holds there is
// TestAdaptiveStartsFromALimitFoundBefore's; here, that the limit travels
// from one run to the next.
func TestResumeStartsFromTheEarlierPacing(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{RateLimit: 10, RateBurst: 3, RateLimitRetryAfter: "0.05", CreateLatency: leadsim.Latency{Fixed: 5 * time.Millisecond}})
	dir := t.TempDir()
	input := filepath.Join(dir, "leads.csv")
	opts := synth.Defaults()
	opts.Invalid = 0
	if err := synth.WriteCSVFile(input, opts, 60); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results.csv")
	cmd := exec.Command(os.Args[0], uploadArgs(s, "", results, input, "--rate", "auto", "--concurrency", "4")...)
	cmd.Env = append(os.Environ(), "BULKLOAD_TEST_AS_MAIN=1", "BULKLOAD_CLIENT_SECRET="+simSecret, "XDG_STATE_HOME="+t.TempDir())
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	// The run is interrupted once it has found the limit: --rate auto's
	// first 429 sets its first rate (a lowering), the 429s soon after it
	// may lower it to what the service accepts (lowerings with no limit),
	// and its first cut records the limit found (pace.Adaptive), which the
	// lowering's line gives. Before, it was interrupted at 15 results
	// lines, and under load the cut had sometimes not come yet ("no limit
	// found"); then at the second lowering, until lowerings came before
	// the cut.
	limitFound := regexp.MustCompile(`lowering the shared rate.* limit=`)
	for tick := time.NewTicker(10 * time.Millisecond); !limitFound.MatchString(out.String()); {
		select {
		case <-exited:
			t.Fatalf("the first run ended before it found the limit (want a lowering of the rate that says the limit)\n%s", out)
		case <-tick.C:
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	<-exited
	if code := cmd.ProcessState.ExitCode(); code != app.ExitInterrupted {
		t.Fatalf("first run exit = %d, want %d (interrupted)\n%s", code, app.ExitInterrupted, out)
	}
	earlier, err := summary.Read(results)
	if err != nil {
		t.Fatal(err)
	}
	r := earlier.Rate
	if r == nil || !r.LimitFound || r.Limit <= 0 || r.Status429 == 0 {
		t.Fatalf("interrupted run's summary rate = %+v, want a limit found, with 429s", r)
	}
	res := runCLI(t, secretEnv(), uploadArgs(s, "", results, input, "--rate", "auto", "--concurrency", "4", "--resume", "--log-format", "json")...)
	if res.code != app.ExitOK {
		t.Fatalf("resume exit = %d, want %d\nstderr:\n%s", res.code, app.ExitOK, res.stderr)
	}
	var started bool
	for _, line := range strings.Split(res.stderr, "\n") {
		var rec struct {
			Msg       string  `json:"msg"`
			RateLimit float64 `json:"rate_limit"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && strings.Contains(rec.Msg, "pacing starts where the earlier run settled") {
			started = rec.RateLimit == r.Limit
		}
	}
	if !started {
		t.Errorf("resume did not start its rate at the earlier limit %v:\n%s", r.Limit, res.stderr)
	}
}
