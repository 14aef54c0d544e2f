package main

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/summary"
)

func TestRateAutoIsTheDefault(t *testing.T) {
	var up app.UploadOptions
	fs := flag.NewFlagSet("upload", flag.ContinueOnError)
	up.Register(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if !up.Rate.Auto || fs.Lookup("rate").DefValue != "auto" {
		t.Errorf("--rate default = %+v (shown as %q), want auto", up.Rate, fs.Lookup("rate").DefValue)
	}
}

// TestUploadRateAutoSettles: against a service that allows 15 calls/s (below
// Auto's start), --rate auto comes down under the limit, every
// row succeeds, and the summary says where it settled.
func TestUploadRateAutoSettles(t *testing.T) {
	s := startTestSim(t, leadsim.Options{RateLimit: 15, RateBurst: 1})
	res, rows, summaryPath := uploadSample(t, s, "--rate", "auto", "--concurrency", "4", "--max-attempts", "2")
	if res.code != app.ExitOK {
		t.Fatalf("upload exit = %d, want %d\nstderr:\n%s", res.code, app.ExitOK, res.stderr)
	}
	for row, r := range rows {
		if r["status"] != "processed" && r["status"] != "submitted" {
			t.Errorf("row %d status = %q (%s), want processed or submitted", row, r["status"], r["error"])
		}
	}
	b, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rate     *summary.Rate  `json:"rate"`
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
