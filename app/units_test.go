package app

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/pace"
	"github.com/bulkload/bulkload/source"
	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
)

// TestBuildInfoFrom proves the version comes from the build info the
// toolchain stamps (go build in a git checkout), not from a constant.
func TestBuildInfoFrom(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/bulkload/bulkload", Version: "v1.4.2"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "4b825dc642cb6eb9a060e54bf8d69288fbee4904"},
			{Key: "vcs.time", Value: "2026-11-20T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	got := buildInfoFrom(bi, true)
	want := BuildInfo{Version: "v1.4.2", Revision: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", Time: "2026-11-20T10:00:00Z", Modified: true, GoVersion: "go1.26.8"}
	if got != want {
		t.Errorf("buildInfoFrom = %+v, want %+v", got, want)
	}
	s := got.String()
	for _, part := range []string{"v1.4.2", "4b825dc642cb", "(modified)", "2026-11-20T10:00:00Z", "go1.26.8"} {
		if !strings.Contains(s, part) {
			t.Errorf("String() = %q, lacks %q", s, part)
		}
	}
	if none := buildInfoFrom(nil, false); none.GoVersion != runtime.Version() || none.Revision != "" {
		t.Errorf("buildInfoFrom(nil, false) = %+v, want the running Go version and no revision", none)
	}
	// Without a revision, the line names why.
	for _, tc := range []struct {
		settings []debug.BuildSetting
		version  string
		want     string
	}{
		{[]debug.BuildSetting{{Key: "-buildvcs", Value: "false"}}, "(devel)", "-buildvcs=false"},
		{nil, "(devel)", "this build has no VCS stamp: VCS stamping was off or found no git clone"},
		{nil, "v1.4.2", "a module build"},
	} {
		bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: tc.version}, Settings: tc.settings}
		if s := buildInfoFrom(bi, true).String(); !strings.Contains(s, tc.want) {
			t.Errorf("buildInfoFrom(%v, %s).String() = %q, want it to say %q", tc.settings, tc.version, s, tc.want)
		}
	}
}

// TestBoundBy: what bound a run, from the waits for a place and for the
// Rate and how much of the rate the calls used.
func TestBoundBy(t *testing.T) {
	auto := &UploadOptions{Concurrency: Concurrency{Auto: true}, MaxConcurrency: 256, Rate: Rate{Auto: true}}
	conc := func(full float64, limit, max int, latencyCuts int) pace.ConcurrencySnapshot {
		return pace.ConcurrencySnapshot{Auto: true, Limit: limit, Max: max, LatencyCuts: latencyCuts, RosePast: limit + 4,
			Waited: time.Duration(full * float64(100*time.Second)), Since: 100 * time.Second}
	}
	tests := []struct {
		name string
		st   submitter.Stats
		up   *UploadOptions
		want string
		// input is the time the reader waited for rows, of the 100 s.
		input time.Duration
	}{
		{"capacity", submitter.Stats{Attempts: 5000, Concurrency: conc(0.9, 52, 256, 3), RateWaited: 95 * time.Second, RateAllowed: 200}, auto, summary.BoundCapacity, 0},
		// cap8 (L 20 ms, K 8): 256 workers wait for the rate while 9 are
		// in flight, and --rate auto, never answered 429, has climbed to
		// 516/s: the capacity the concurrency found bound the run, not
		// the climb.
		{"capacity found, rate climbing and waited longer", submitter.Stats{Attempts: 37000, Concurrency: conc(0.8, 9, 256, 5), RateWaited: 98 * time.Second, RateAllowed: 450, CurrentRate: 516}, auto, summary.BoundCapacity, 0},
		{"both climbing, rate waited longer", submitter.Stats{Attempts: 37000, Concurrency: conc(0.8, 64, 256, 0), RateWaited: 98 * time.Second, RateAllowed: 450, CurrentRate: 516}, auto, summary.BoundRateClimb, 0},
		{"rate limit found, concurrency climbing", submitter.Stats{Attempts: 14000, Concurrency: conc(0.9, 64, 256, 0), RateWaited: 80 * time.Second, RateAllowed: 150, LimitFound: true, SettledRate: 145}, auto, summary.BoundRateLimit, 0},
		{"fixed concurrency, rate climbing", submitter.Stats{Attempts: 37000, Concurrency: pace.ConcurrencySnapshot{Limit: 9, Max: 9, Waited: 80 * time.Second, Since: 100 * time.Second}, RateWaited: 98 * time.Second, RateAllowed: 450, CurrentRate: 516},
			&UploadOptions{Concurrency: Concurrency{N: 9}, Rate: Rate{Auto: true}}, summary.BoundConcurrency, 0},
		{"max-concurrency", submitter.Stats{Attempts: 5000, Concurrency: conc(0.9, 256, 256, 0)}, auto, summary.BoundMaxConcurrency, 0},
		{"concurrency climbing", submitter.Stats{Attempts: 5000, Concurrency: conc(0.9, 64, 256, 0)}, auto, summary.BoundConcurrencyClimb, 0},
		{"rate limit", submitter.Stats{Attempts: 14000, Concurrency: conc(0.1, 64, 256, 0), RateWaited: 90 * time.Second, RateAllowed: 150, LimitFound: true, SettledRate: 145}, auto, summary.BoundRateLimit, 0},
		{"rate climbing", submitter.Stats{Attempts: 14000, Concurrency: conc(0.1, 64, 256, 0), RateWaited: 90 * time.Second, RateAllowed: 150}, auto, summary.BoundRateClimb, 0},
		{"waits for the rate it does not use", submitter.Stats{Attempts: 5000, Concurrency: conc(0.2, 64, 256, 0), RateWaited: 90 * time.Second, RateAllowed: 150}, auto, summary.BoundInput, 60 * time.Second},
		// Nothing held the calls back and the reader did not wait:
		// every row at hand, the calls' own time set the pace (400 rows
		// against random 2 s calls said "the input: rows came slower").
		{"rows at hand, no limit held", submitter.Stats{Attempts: 500, Concurrency: conc(0.1, 64, 256, 0)}, auto, summary.BoundLatency, 0},
		{"input", submitter.Stats{Attempts: 500, Concurrency: conc(0.1, 64, 256, 0)}, auto, summary.BoundInput, 60 * time.Second},
		{"input, a few retries", submitter.Stats{Attempts: 500, Retries: 5, Status503: 5, BackoffWaited: 2 * time.Second, Wire: 25 * time.Second, Concurrency: conc(0.1, 64, 256, 0)}, auto, summary.BoundInput, 60 * time.Second},
		// fail20-c8 on the 16-core run: 20% of the calls 503, 8 workers,
		// every place taken 0% of the time: the rows waited out their
		// backoff, they did not come slower.
		{"fixed concurrency, 503s and their backoff", submitter.Stats{Attempts: 6900, Retries: 1300, Status503: 1300, BackoffWaited: 480 * time.Second, Wire: 345 * time.Second,
			Concurrency: pace.ConcurrencySnapshot{Limit: 8, Max: 8, Waited: 0, Since: 100 * time.Second}},
			&UploadOptions{Concurrency: Concurrency{N: 8}, Rate: Rate{Auto: true}}, summary.BoundErrors, 0},
		// fail20 with no tuning flag: 256 workers, 11% of the time every
		// place taken.
		{"auto, 503s and their backoff", submitter.Stats{Attempts: 240000, Retries: 48000, Status503: 48000, BackoffWaited: 12000 * time.Second, Wire: 12000 * time.Second, Concurrency: conc(0.11, 133, 256, 0)}, auto, summary.BoundErrors, 0},
		{"fixed concurrency", submitter.Stats{Attempts: 500, Concurrency: pace.ConcurrencySnapshot{Limit: 8, Max: 8, Waited: 80 * time.Second, Since: 100 * time.Second}},
			&UploadOptions{Concurrency: Concurrency{N: 8}, Rate: Rate{Auto: true}}, summary.BoundConcurrency, 0},
		{"fixed rate", submitter.Stats{Attempts: 2000, Concurrency: conc(0.1, 64, 256, 0), RateWaited: 90 * time.Second, RateAllowed: 20},
			&UploadOptions{Concurrency: Concurrency{Auto: true}, Rate: Rate{PerSecond: 20}}, summary.BoundRate, 0},
		{"max rate", submitter.Stats{Attempts: 10000, Concurrency: conc(0.1, 64, 256, 0), RateWaited: 90 * time.Second, RateAllowed: 100, CurrentRate: 100},
			&UploadOptions{Concurrency: Concurrency{Auto: true}, Rate: Rate{Auto: true}, MaxRate: 100}, summary.BoundMaxRate, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.st.RateAllowed > 0 {
				tc.st.RateLimited = tc.st.Concurrency.Since // a rate in force the whole run
			}
			b := boundBy(tc.st, tc.input, tc.up)
			if b == nil || b.Kind != tc.want {
				t.Fatalf("boundBy = %+v, want kind %s", b, tc.want)
			}
			if strings.Contains(b.Text, "no limit found") {
				t.Errorf("text %q says no limit was found", b.Text)
			}
			if b.Kind == summary.BoundErrors && (!strings.Contains(b.Text, "503") || !strings.Contains(b.Text, "backoff") || strings.Contains(b.Text, "slower")) {
				t.Errorf("text %q: want the 503s and the backoff named, not rows that came slower", b.Text)
			}
			t.Logf("%s: %s", b.Kind, b.Text)
		})
	}
}

// TestBoundBySteady: "bound by" speaks of the run's steady part, after
// auto's climb: its waits and calls a second, the median of the limit
// there, and pin advice that takes nothing from what auto had (the median,
// never below the mean); none after an outage (issue 27 item 5: identical
// runs advised 47 and 51 against a capacity of 48, the figures a point on
// the sawtooth, and "pin it with --concurrency 1" after a hang).
func TestBoundBySteady(t *testing.T) {
	auto := &UploadOptions{Concurrency: Concurrency{Auto: true}, MaxConcurrency: 256, Rate: Rate{Auto: true}}
	// 100 s: a climb of 20 s (every place taken), then 80 s at a limit
	// whose median is 48 and mean 49.2, every place taken 60% of it.
	steady := pace.ConcurrencySnapshot{Auto: true, Limit: 47, Max: 256, LatencyCuts: 9, RosePast: 53,
		Waited: 68 * time.Second, Since: 100 * time.Second,
		Steady: 80 * time.Second, SteadyWaited: 48 * time.Second, SteadyAttempts: 3840, SteadyLimit: 48, SteadyMeanLimit: 49.2}
	tests := []struct {
		name     string
		st       submitter.Stats
		want     string
		says     []string
		saysNot  []string
		waitFrom float64
	}{
		{"steady figures and a pin that takes nothing", submitter.Stats{Attempts: 5000, Concurrency: steady}, summary.BoundCapacity,
			[]string{"48 calls/s at a median of 48 in flight after the climb", "pin it with --concurrency 50"}, []string{"at 47 in flight"}, 0.6},
		{"an outage: no pin", submitter.Stats{Attempts: 5000, Concurrency: steady, Outages: 1}, summary.BoundCapacity,
			[]string{"no pin advised"}, []string{"pin it with"}, 0.6},
		{"a short steady part: the whole run", submitter.Stats{Attempts: 5000, Concurrency: func() pace.ConcurrencySnapshot {
			c := steady
			c.Steady, c.SteadyWaited, c.SteadyAttempts = 10*time.Second, 0, 480
			return c
		}()}, summary.BoundCapacity, []string{"50 calls/s"}, nil, 0.68},
		{"a steady part under a second: no pin", submitter.Stats{Attempts: 60, Concurrency: func() pace.ConcurrencySnapshot {
			c := steady
			c.Waited, c.Since = 100*time.Millisecond, 200*time.Millisecond
			c.Steady, c.SteadyWaited, c.SteadyAttempts = 162*time.Millisecond, 81*time.Millisecond, 40
			return c
		}()}, summary.BoundCapacity, []string{"162ms and 40 calls after the climb, too few to advise a pin"}, []string{"pin it with"}, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := boundBy(tc.st, 0, auto)
			if b == nil || b.Kind != tc.want || b.ConcurrencyWaitShare < tc.waitFrom-0.001 || b.ConcurrencyWaitShare > tc.waitFrom+0.001 {
				t.Fatalf("boundBy = %+v, want kind %s and a wait share of %v", b, tc.want, tc.waitFrom)
			}
			for _, w := range tc.says {
				if !strings.Contains(b.Text, w) {
					t.Errorf("text %q does not say %q", b.Text, w)
				}
			}
			for _, w := range tc.saysNot {
				if strings.Contains(b.Text, w) {
					t.Errorf("text %q says %q", b.Text, w)
				}
			}
		})
	}
	if got := concurrencyReport(submitter.Stats{Concurrency: steady}).Settled; got != 50 {
		t.Errorf("concurrencyReport().Settled = %d, want 50 (the median 48 is under the mean 49.2)", got)
	}
}

// The default job_name is stable across nights: the dates of a nightly
// export's name are left out, so each night is the same series and the
// same Pushgateway group.
func TestStableJobName(t *testing.T) {
	for _, tc := range []struct{ input, want string }{
		{"/srv/acme/leads.csv", "leads"},
		{"acme_20261122.csv", "acme"},
		{"acme_20261123.csv.gz", "acme"},
		{"exports/acme-2026-11-22.jsonl", "acme"},
		{"acme_2026_11_22_leads.csv", "acme_leads"},
		{"acme-2026-11-22T023000.csv", "acme"},
		{"acme_20261122_0230.csv", "acme"},
		{"20261122.csv", "bulkload"},
		{"partner42_export.csv", "partner42_export"},
		{"acme_2026.csv", "acme_2026"}, // a year alone is not a date
		{"-", "stdin"},
	} {
		if got := stableJobName(tc.input); got != tc.want {
			t.Errorf("stableJobName(%q) = %q, want %q", tc.input, got, tc.want)
		}
	}
}

// TestProgressShowsTheOutage: while the run waits out an outage, the bar
// and the log line say what it waits for, since when, and for how long.
func TestProgressShowsTheOutage(t *testing.T) {
	o := submitter.Outage{Start: time.Date(2026, 11, 24, 2, 31, 7, 0, time.UTC), IdentityProvider: true, Cause: "503 temporarily_unavailable"}
	want := "waiting for the identity provider (503 temporarily_unavailable since 02:31:07, 14 s)"
	if got := o.Waiting(o.Start.Add(14 * time.Second)); got != want {
		t.Fatalf("Waiting = %q, want %q", got, want)
	}
	for _, mode := range []string{"bar", "log"} {
		t.Run(mode, func(t *testing.T) {
			var out bytes.Buffer
			var done atomic.Int64
			log := slog.New(slog.NewTextHandler(&out, nil))
			p := newProgress(&out, mode, log, &done, func() int64 { return 100 })
			p.begin = time.Now()
			p.outage = func() string { return want }
			if mode == "bar" {
				p.draw()
			} else {
				p.logLine()
			}
			if !strings.Contains(out.String(), want) {
				t.Errorf("progress %s = %q, want it to say %q", mode, out.String(), want)
			}
		})
	}
}

func TestProgressShowsTheRate(t *testing.T) {
	var out bytes.Buffer
	var done atomic.Int64
	done.Store(10)
	p := newProgress(&out, "bar", nil, &done, func() int64 { return 100 })
	p.begin = time.Now().Add(-time.Second)
	p.rate = func() *summary.Rate {
		return &summary.Rate{Auto: true, CallsPerSecond: 291, LimitFound: true, Attempts: 1000, Status429: 4}
	}
	p.draw()
	if want := "291/s settled, 0.4% 429"; !strings.Contains(out.String(), want) {
		t.Errorf("progress bar = %q, want it to contain %q", out.String(), want)
	}
}

func TestRateFlag(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Rate
		wantErr bool
	}{
		{"auto", Rate{Auto: true}, false},
		{"0", Rate{}, false},
		{"20", Rate{PerSecond: 20}, false},
		{"2.5", Rate{PerSecond: 2.5}, false},
		{"-1", Rate{}, true},
		{"fast", Rate{}, true},
		{"NaN", Rate{}, true},
		{"Inf", Rate{}, true},
	} {
		var r Rate
		err := r.Set(tc.in)
		if (err != nil) != tc.wantErr || (err == nil && r != tc.want) {
			t.Errorf("Set(%q) = %+v, %v; want %+v, error %v", tc.in, r, err, tc.want, tc.wantErr)
		}
	}
}

func TestRowsStatus(t *testing.T) {
	cases := []struct {
		name         string
		sum          summary.Summary
		invalidFails bool
		want         int
	}{
		{"all valid", summary.Summary{Mode: "validate", RowsRead: 3, Counts: lead.Counts{Valid: 3}}, true, ExitOK},
		{"one invalid, validate", summary.Summary{Mode: "validate", RowsRead: 3, Counts: lead.Counts{Valid: 2, Invalid: 1}}, true, ExitRowsFailed},
		{"rows unaccounted", summary.Summary{Mode: "validate", RowsRead: 4, Counts: lead.Counts{Valid: 3}}, true, ExitRowsFailed},
		{"more counted than read", summary.Summary{Mode: "upload", RowsRead: 2, Counts: lead.Counts{Processed: 3}}, false, ExitRowsFailed},
		{"all sent", summary.Summary{Mode: "upload", RowsRead: 3, Counts: lead.Counts{Processed: 1, Submitted: 2}}, false, ExitOK},
		{"invalid within --max-invalid, upload", summary.Summary{Mode: "upload", RowsRead: 300, Counts: lead.Counts{Processed: 294, Invalid: 6}}, false, ExitOK},
		{"invalid, upload --strict", summary.Summary{Mode: "upload", RowsRead: 300, Counts: lead.Counts{Processed: 294, Invalid: 6}}, true, ExitRowsFailed},
		{"invalid and failed, upload", summary.Summary{Mode: "upload", RowsRead: 3, Counts: lead.Counts{Processed: 1, Invalid: 1, Failed: 1}}, false, ExitRowsFailed},
		{"submit failed", summary.Summary{Mode: "upload", RowsRead: 3, Counts: lead.Counts{Processed: 2, SubmitFailed: 1}}, false, ExitRowsFailed},
		{"failed", summary.Summary{Mode: "upload", RowsRead: 1, Counts: lead.Counts{Failed: 1}}, false, ExitRowsFailed},
		{"unverified", summary.Summary{Mode: "upload", RowsRead: 1, Counts: lead.Counts{Unverified: 1}}, false, ExitRowsFailed},
		{"left created", summary.Summary{Mode: "upload", RowsRead: 1, Counts: lead.Counts{Created: 1}}, false, ExitRowsFailed},
		{"not sent", summary.Summary{Mode: "upload", RowsRead: 2, Counts: lead.Counts{Processed: 1}, NotSent: 1}, false, ExitRowsFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := StatusOf(rowsStatus(&tc.sum, tc.invalidFails)); got != tc.want {
				t.Errorf("rowsStatus(%+v, %v) = %d, want %d", tc.sum, tc.invalidFails, got, tc.want)
			}
		})
	}
}

// TestMemoryBudget proves validate's memory budget sets the Go runtime's
// limit (unless GOGC or GOMEMLIMIT is set) and restores both settings.
func TestMemoryBudget(t *testing.T) {
	const gcPercent, limit = 77, 1 << 40
	defer debug.SetGCPercent(debug.SetGCPercent(gcPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(limit))
	for _, env := range []map[string]string{nil, {"GOGC": "30"}} {
		var seen int64
		budget := newMemoryBudget(func(k string) string { return env[k] })
		if budget.on {
			seen = debug.SetMemoryLimit(-1)
		}
		budget.restore()
		if want := int64(maxGoMemory + source.DefaultWorkers()*perWorkerMemory); env == nil && seen != want {
			t.Errorf("during validate the memory limit is %d, want %d", seen, want)
		}
		if env != nil && budget.on {
			t.Errorf("env %v: the budget is on, want off (the user's GOGC wins)", env)
		}
		if got := debug.SetGCPercent(gcPercent); got != gcPercent {
			t.Errorf("env %v: GOGC after restore = %d, want %d", env, got, gcPercent)
		}
		if got := debug.SetMemoryLimit(-1); got != limit {
			t.Errorf("env %v: memory limit after restore = %d, want %d", env, got, limit)
		}
	}
}

// TestProgressCountsThisRunOnly: a resumed run's rate and ETA count the
// rows this run did, not the earlier run's that it passed at once (it
// showed "18292 rows 72892.7 rows/s ETA 1s" with 17 minutes to go); the
// rows done count them, labelled so; before this run has done a row the
// ETA is unknown, not 0s.
func TestProgressCountsThisRunOnly(t *testing.T) {
	begin := time.Date(2026, 11, 26, 2, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name             string
		done, earlier    int64
		at               time.Duration
		wantBar, wantLog string
		lackBar          string
	}{
		{"resumed", 18292, 18000, 10 * time.Second,
			"61%  18292 rows (18000 from the earlier run)  29.2 rows/s  ETA 6m41s",
			"rows_done=18292 rows_earlier_run=18000 rows_per_s=29.2 pct_done=61.0 eta=6m41s", "72892"},
		{"resumed, nothing of its own yet", 18000, 18000, 2 * time.Second,
			"60%  18000 rows (18000 from the earlier run)  0.0 rows/s  ETA unknown",
			"rows_done=18000 rows_earlier_run=18000 rows_per_s=0.0 pct_done=60.0 eta=unknown", "ETA 0s"},
		{"a first run", 300, 0, 10 * time.Second,
			"1%  300 rows  30.0 rows/s  ETA 16m30s",
			"rows_done=300 rows_per_s=30.0 pct_done=1.0 eta=16m30s", "earlier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bar, logs bytes.Buffer
			var done, earlier atomic.Int64
			done.Store(tc.done)
			earlier.Store(tc.earlier)
			for _, mode := range []string{"bar", "log"} {
				out := &bar
				if mode == "log" {
					out = &logs
				}
				p := newProgress(out, mode, slog.New(slog.NewTextHandler(out, nil)), &done, func() int64 { return 30000 })
				p.earlier = &earlier
				p.begin = begin // as start sets it
				p.now = func() time.Time { return begin.Add(tc.at) }
				if mode == "bar" {
					p.draw()
				} else {
					p.logLine()
				}
			}
			if !strings.Contains(bar.String(), tc.wantBar) || strings.Contains(bar.String(), tc.lackBar) {
				t.Errorf("bar = %q, want %q and no %q", bar.String(), tc.wantBar, tc.lackBar)
			}
			if !strings.Contains(logs.String(), tc.wantLog) {
				t.Errorf("log line = %q, want %q", logs.String(), tc.wantLog)
			}
		})
	}
}

// TestCombinedVerdict: the one verdict of bulkload summary and bulkload
// report over results files, and the reasons it gives beyond the counts.
func TestCombinedVerdict(t *testing.T) {
	code := func(n int) *int { return &n }
	done := func() *summary.Summary {
		s := &summary.Summary{Mode: "summary", RowsRead: 4}
		s.Submitted = 4
		return s
	}
	tests := []struct {
		name   string
		edit   func(s *summary.Summary)
		parts  []part
		strict bool
		want   int
		reason string
	}{
		{"every row settled", func(*summary.Summary) {}, nil, false, ExitOK, ""},
		{"last runs ended with exit 0", func(*summary.Summary) {}, []part{{results: "a.csv", summary: &summary.Summary{ExitCode: code(0)}}}, false, ExitOK, ""},
		{"rows counted twice", func(s *summary.Summary) { s.Submitted = 8 }, nil, false, ExitRowsFailed, "the accounting does not add up (4 read != "},
		{"a row only validated", func(s *summary.Summary) { s.Submitted, s.Valid = 3, 1 }, nil, false, ExitRowsFailed, "1 rows were only validated"},
		{"rows in no file", func(s *summary.Summary) { s.Submitted, s.NotSent = 3, 1 }, nil, false, ExitRowsFailed, "1 rows are in no results file"},
		{"a failed row", func(s *summary.Summary) { s.Submitted, s.Failed = 3, 1 }, nil, false, ExitRowsFailed, ""},
		{"invalid rows, not strict", func(s *summary.Summary) { s.Submitted, s.Invalid = 3, 1 }, nil, false, ExitOK, ""},
		{"invalid rows, strict", func(s *summary.Summary) { s.Submitted, s.Invalid = 3, 1 }, nil, true, ExitRowsFailed, ""},
		{"the last run ended with exit 5", func(*summary.Summary) {}, []part{{results: "a.csv", summary: &summary.Summary{ExitCode: code(5), Stopped: "disk full"}}}, false, ExitRowsFailed, "the last run on a.csv ended with exit 5: disk full"},
		{"a stale summary's exit status is not the file's", func(*summary.Summary) {}, []part{{results: "a.csv"}}, false, ExitOK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := done()
			tc.edit(s)
			err, reasons := combinedVerdict(s, tc.parts, tc.strict)
			if got := StatusOf(err); got != tc.want {
				t.Errorf("combinedVerdict = exit %d (%v), want %d", got, err, tc.want)
			}
			joined := strings.Join(reasons, "\n")
			if (tc.reason == "") != (joined == "") || !strings.Contains(joined, tc.reason) {
				t.Errorf("reasons %q, want %q", reasons, tc.reason)
			}
		})
	}
}

// TestWriteRecordsRewrites: a record whose write fails after others were
// written with exit 0 makes the run exit 5, and the records written before
// are written again with 5; the failed one is not tried again, and a run
// that failed already keeps its status.
func TestWriteRecordsRewrites(t *testing.T) {
	for _, tc := range []struct {
		name   string
		runErr error
		want   int
	}{
		{"a run without error", nil, ExitIO},
		{"a run with rows left", errRowsLeft, ExitRowsFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [3][]int
			rec := func(i int, fail bool) record {
				return record{what: "out", write: func(code int) error {
					got[i] = append(got[i], code)
					if fail {
						return errors.New("folder gone")
					}
					return nil
				}}
			}
			var stderr bytes.Buffer
			err := writeRecords(&Env{Stderr: &stderr}, tc.runErr, rec(0, false), rec(1, true), rec(2, false))
			if StatusOf(err) != tc.want {
				t.Fatalf("writeRecords = exit %d, want %d", StatusOf(err), tc.want)
			}
			first := StatusOf(tc.runErr)
			want := [3][]int{{first, tc.want}, {first}, {first, tc.want}}
			if first == tc.want {
				want = [3][]int{{first}, {first}, {first}}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("records written with %v, want %v", got, want)
			}
			if n := strings.Count(stderr.String(), "folder gone"); n != 1 {
				t.Errorf("the failure was told %d times, want once:\n%s", n, stderr.String())
			}
		})
	}
}

// TestWriteRecordsStdoutOnce: --summary-json - (standard output) cannot be
// written again: it is written once, last, with the settled status, after
// a file's failure turned it to 5.
func TestWriteRecordsStdoutOnce(t *testing.T) {
	var got []int
	var stderr bytes.Buffer
	stdout := record{what: "--summary-json", once: true, write: func(code int) error { got = append(got, code); return nil }}
	report := record{what: "--report", write: func(int) error { return errors.New("folder gone") }}
	err := writeRecords(&Env{Stderr: &stderr}, nil, stdout, report)
	if StatusOf(err) != ExitIO || fmt.Sprint(got) != "[5]" {
		t.Errorf("exit %d, standard output written with %v; want 5, once with [5]", StatusOf(err), got)
	}
}

// TestBoundTrackerSpeaksOfItsInterval: the progress line's "bound by" is
// what bound the calls since its last look: retries waited out before it
// (the service's errors then) do not make a later calm interval
// "errors".
func TestBoundTrackerSpeaksOfItsInterval(t *testing.T) {
	up := &UploadOptions{Concurrency: Concurrency{N: 8}}
	snap := func(since time.Duration) pace.ConcurrencySnapshot {
		return pace.ConcurrencySnapshot{Limit: 8, Max: 8, Since: since}
	}
	stats := []submitter.Stats{
		{Attempts: 700, Retries: 140, Status503: 140, BackoffWaited: 50 * time.Second, Concurrency: snap(10 * time.Second)},
		{Attempts: 1400, Retries: 140, Status503: 140, BackoffWaited: 50 * time.Second, Concurrency: snap(20 * time.Second)},
	}
	i := 0
	tr := &boundTracker{stats: func() submitter.Stats { s := stats[i]; i++; return s }, up: up}
	if got := tr.note(); !strings.Contains(got, "bound by "+summary.BoundErrors) {
		t.Errorf("first interval (rows in backoff 62%% of the workers' time): %q, want bound by %s", got, summary.BoundErrors)
	}
	// The second: no retry, no limit held, the reader never waited
	// (no input clock given): the calls' own time.
	if got := tr.note(); !strings.Contains(got, "bound by "+summary.BoundLatency) {
		t.Errorf("second interval (no retry in it): %q, want bound by %s", got, summary.BoundLatency)
	}
}
