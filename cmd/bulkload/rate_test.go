package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/report"
)

func TestRateFlag(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    rateFlag
		wantErr bool
	}{
		{"auto", rateFlag{auto: true}, false},
		{"0", rateFlag{}, false},
		{"20", rateFlag{perSecond: 20}, false},
		{"2.5", rateFlag{perSecond: 2.5}, false},
		{"-1", rateFlag{}, true},
		{"fast", rateFlag{}, true},
		{"NaN", rateFlag{}, true},
		{"Inf", rateFlag{}, true},
	} {
		var r rateFlag
		err := r.Set(tc.in)
		if (err != nil) != tc.wantErr || (err == nil && r != tc.want) {
			t.Errorf("Set(%q) = %+v, %v; want %+v, error %v", tc.in, r, err, tc.want, tc.wantErr)
		}
	}
}

func TestRateAutoIsTheDefault(t *testing.T) {
	var up uploadOptions
	fs := flag.NewFlagSet("upload", flag.ContinueOnError)
	up.register(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if !up.rate.auto || fs.Lookup("rate").DefValue != "auto" {
		t.Errorf("--rate default = %+v (shown as %q), want auto", up.rate, fs.Lookup("rate").DefValue)
	}
}

func TestProgressShowsTheRate(t *testing.T) {
	var out bytes.Buffer
	var done atomic.Int64
	done.Store(10)
	p := newProgress(&out, "bar", nil, &done, func() int64 { return 100 })
	p.begin = time.Now().Add(-time.Second)
	p.rate = func() *report.Rate {
		return &report.Rate{Auto: true, CallsPerSecond: 291, LimitFound: true, Attempts: 1000, Status429: 4}
	}
	p.draw()
	if want := "291/s settled, 0.4% 429"; !strings.Contains(out.String(), want) {
		t.Errorf("progress bar = %q, want it to contain %q", out.String(), want)
	}
}

// TestUploadRateAutoSettles: against a service that allows 15 calls/s (below
// auto's start), --rate auto comes down under the limit, every
// row succeeds, and the summary says where it settled.
func TestUploadRateAutoSettles(t *testing.T) {
	s := startTestSim(t, leadsim.Options{RateLimit: 15, RateBurst: 1})
	res, rows, summary := uploadSample(t, s, "--rate", "auto", "--concurrency", "4", "--max-attempts", "2")
	if res.code != exitOK {
		t.Fatalf("upload exit = %d, want %d\nstderr:\n%s", res.code, exitOK, res.stderr)
	}
	for row, r := range rows {
		if r["status"] != "processed" && r["status"] != "submitted" {
			t.Errorf("row %d status = %q (%s), want processed or submitted", row, r["status"], r["error"])
		}
	}
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rate     *report.Rate   `json:"rate"`
		Settings map[string]any `json:"settings"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("summary JSON: %v", err)
	}
	if r := got.Rate; r == nil || !r.Auto || !r.LimitFound || r.CallsPerSecond > 15 || r.CallsPerSecond <= 0 || r.Status429 == 0 {
		t.Errorf("summary JSON rate = %+v, want auto, a limit found, settled in (0, 15] and some 429s", r)
	}
	if got.Settings["rate"] != "auto" {
		t.Errorf("summary JSON settings.rate = %v, want auto", got.Settings["rate"])
	}
	if !strings.Contains(res.stderr, "settled at ") || !strings.Contains(res.stderr, "answered 429 (pin it with --rate ") {
		t.Errorf("summary on stderr lacks the settled rate:\n%s", res.stderr)
	}
}
