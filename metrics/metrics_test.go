package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bulkload/bulkload/internal/fakeclock"
	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
)

// readFile parses a metrics file as node_exporter's textfile collector
// would.
func readFile(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return mfs
}

// value returns the value of the series of name whose labels include want,
// and whether there is one.
func value(mfs map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	mf := mfs[name]
	if mf == nil {
		return 0, false
	}
	for _, m := range mf.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if got[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

func TestFileDuringAndAfterRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "acme.prom")
	clk := fakeclock.New(time.Unix(1_800_000_000, 0))
	r := New(Config{Job: "acme", File: path, Interval: time.Hour, Now: clk.Now})
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	stats := submitter.Stats{TokensFetched: 2, CurrentRate: 40, Outages: 2, OutageWaiting: true}
	stats.CreateLead = submitter.OpStats{Calls: 3, Retries: 1, OK: 3, Throttled: 1}
	stats.SubmitLead = submitter.OpStats{Calls: 1, OK: 1}
	r.SetAPI(func() submitter.Stats { return stats })
	r.Observe(lead.Row{Row: 1, Status: lead.StatusSubmitted, ResultCode: 1013, BidValue: "$45.00"})
	r.Observe(lead.Row{Row: 2, Status: lead.StatusInvalid})

	// Written at Start: in progress, no finished run yet.
	mfs := readFile(t, path)
	job := map[string]string{Label: "acme"}
	if v, ok := value(mfs, "bulkload_run_in_progress", job); !ok || v != 1 {
		t.Errorf("in progress at start = %v, %v; want 1", v, ok)
	}
	if _, ok := value(mfs, "bulkload_last_run_success", job); ok {
		t.Errorf("bulkload_last_run_success present before any run finished")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, %v; want 0644", fi.Mode().Perm(), err)
	}

	clk.Advance(90 * time.Second)
	sum := &summary.Summary{RowsRead: 8, Counts: lead.Counts{Submitted: 1, Invalid: 1, Failed: 2, Unverified: 1}, NotSent: 3, Qualified: 1, BidCents: 4500}
	if err := r.Finish(context.Background(), sum, 1); err != nil {
		t.Fatal(err)
	}
	mfs = readFile(t, path)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"bulkload_rows_total", map[string]string{"status": "submitted"}, 1},
		{"bulkload_rows_total", map[string]string{"status": "invalid"}, 1},
		{"bulkload_rows_total", map[string]string{"status": "failed"}, 2},
		{"bulkload_rows_total", map[string]string{"status": "unverified"}, 1},
		{"bulkload_rows_total", map[string]string{"status": "not_sent"}, 3},
		{"bulkload_invalid_ratio", nil, 0.125}, // 1 of 8 rows
		{"bulkload_qualified_total", nil, 1},
		{"bulkload_bid_value_dollars_total", nil, 45},
		{"bulkload_api_calls_total", map[string]string{"operation": "createLead"}, 3},
		{"bulkload_api_retries_total", map[string]string{"operation": "createLead"}, 1},
		{"bulkload_api_attempts_total", map[string]string{"operation": "createLead", "outcome": "429"}, 1},
		{"bulkload_api_attempts_total", map[string]string{"operation": "submitLead", "outcome": "ok"}, 1},
		{"bulkload_tokens_fetched_total", nil, 2},
		{"bulkload_outages_total", nil, 2},
		{"bulkload_outage_waiting", nil, 0}, // the run is over
		{"bulkload_run_duration_seconds", nil, 90},
		{"bulkload_run_in_progress", nil, 0},
		{"bulkload_last_run_timestamp_seconds", nil, float64(clk.Now().Unix())},
		{"bulkload_last_run_success", nil, 0},
		{"bulkload_last_run_exit_code", nil, 1},
	} {
		labels := map[string]string{Label: "acme"}
		for k, v := range c.labels {
			labels[k] = v
		}
		if got, ok := value(mfs, c.name, labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
}

// A run that never finishes (killed, hung) must not hide the last finished
// run from the staleness alert: its timestamp and success are carried over.
func TestPreviousRunCarriedOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acme.prom")
	clk := fakeclock.New(time.Unix(1_800_000_000, 0))
	first := New(Config{Job: "acme", File: path, Now: clk.Now})
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	if err := first.Finish(context.Background(), &summary.Summary{}, 0); err != nil {
		t.Fatal(err)
	}
	clk.Advance(24 * time.Hour)
	second := New(Config{Job: "acme", File: path, Interval: time.Hour, Now: clk.Now})
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	defer second.Finish(context.Background(), nil, 0)
	mfs := readFile(t, path)
	job := map[string]string{Label: "acme"}
	if v, ok := value(mfs, "bulkload_last_run_timestamp_seconds", job); !ok || v != 1_800_000_000 {
		t.Errorf("last run timestamp during the second run = %v, %v; want the first run's end", v, ok)
	}
	if v, ok := value(mfs, "bulkload_last_run_success", job); !ok || v != 1 {
		t.Errorf("last run success during the second run = %v, %v; want 1", v, ok)
	}
	if v, ok := value(mfs, "bulkload_last_run_exit_code", job); !ok || v != 0 {
		t.Errorf("last run exit code during the second run = %v, %v; want 0", v, ok)
	}
	if v, ok := value(mfs, "bulkload_last_success_timestamp_seconds", job); !ok || v != 1_800_000_000 {
		t.Errorf("last success during the second run = %v, %v; want the first run's end", v, ok)
	}
}

// bulkload_last_success_timestamp_seconds moves only on success: a failed
// night keeps the last good night's timestamp, so "no success in 26 h"
// fires a day after the last good run whatever ran since.
func TestLastSuccessOnlyOnSuccess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acme.prom")
	clk := fakeclock.New(time.Unix(1_800_000_000, 0))
	job := map[string]string{Label: "acme"}
	for i, tc := range []struct {
		exit            int
		wantLastSuccess float64
		wantPresent     bool
	}{
		{exit: 1, wantPresent: false}, // no success yet
		{exit: 0, wantLastSuccess: 1_800_086_400, wantPresent: true},
		{exit: 4, wantLastSuccess: 1_800_086_400, wantPresent: true},
		{exit: 130, wantLastSuccess: 1_800_086_400, wantPresent: true},
		{exit: 0, wantLastSuccess: 1_800_345_600, wantPresent: true},
	} {
		clk.Set(time.Unix(1_800_000_000, 0).Add(time.Duration(i) * 24 * time.Hour))
		r := New(Config{Job: "acme", File: path, Interval: time.Hour, Now: clk.Now})
		if err := r.Start(); err != nil {
			t.Fatal(err)
		}
		if err := r.Finish(context.Background(), &summary.Summary{}, tc.exit); err != nil {
			t.Fatal(err)
		}
		mfs := readFile(t, path)
		v, ok := value(mfs, "bulkload_last_success_timestamp_seconds", job)
		if ok != tc.wantPresent || v != tc.wantLastSuccess {
			t.Errorf("night %d (exit %d): last success = %v (present %v), want %v (present %v)", i, tc.exit, v, ok, tc.wantLastSuccess, tc.wantPresent)
		}
		if v, ok := value(mfs, "bulkload_last_run_exit_code", job); !ok || v != float64(tc.exit) {
			t.Errorf("night %d: last run exit code = %v, %v; want %d", i, v, ok, tc.exit)
		}
	}
}

func TestBuildInfo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acme.prom")
	r := New(Config{Job: "acme", File: path, Build: summary.Build{Version: "v1.2.3", Revision: "abc123", GoVersion: "go1.26.8"}})
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	defer r.Finish(context.Background(), nil, 0)
	want := map[string]string{Label: "acme", "version": "v1.2.3", "revision": "abc123", "goversion": "go1.26.8"}
	if v, ok := value(readFile(t, path), "bulkload_build_info", want); !ok || v != 1 {
		t.Errorf("bulkload_build_info%v = %v, %v; want 1", want, v, ok)
	}
}

// Two shards of one backfill, in one directory: each series carries its
// shard, and each shard reads back only its own last run.
func TestShardLabel(t *testing.T) {
	dir := t.TempDir()
	for _, shard := range []string{"0-of-2", "1-of-2"} {
		path := filepath.Join(dir, "backfill-"+shard+".prom")
		r := New(Config{Job: "backfill", Shard: shard, File: path})
		if err := r.Start(); err != nil {
			t.Fatal(err)
		}
		if err := r.Finish(context.Background(), &summary.Summary{Counts: lead.Counts{Submitted: 3}}, 0); err != nil {
			t.Fatal(err)
		}
		mfs := readFile(t, path)
		if v, ok := value(mfs, "bulkload_rows_total", map[string]string{Label: "backfill", ShardLabel: shard, "status": "submitted"}); !ok || v != 3 {
			t.Errorf("shard %s: rows_total{status=submitted,shard=%s} = %v, %v; want 3", shard, shard, v, ok)
		}
		// The next run of the shard carries its last run over.
		again := New(Config{Job: "backfill", Shard: shard, File: path, Interval: time.Hour})
		if err := again.Start(); err != nil {
			t.Fatal(err)
		}
		if _, ok := value(readFile(t, path), "bulkload_last_success_timestamp_seconds", map[string]string{ShardLabel: shard}); !ok {
			t.Errorf("shard %s: the next run lost the last success", shard)
		}
		again.Finish(context.Background(), nil, 0)
	}
}

func TestUnwritableFileFailsAtStart(t *testing.T) {
	r := New(Config{Job: "acme", File: filepath.Join(t.TempDir(), "missing", "acme.prom")})
	if err := r.Start(); err == nil {
		t.Fatal("Start into a missing directory: no error")
	}
}

// TestPush: the push is a POST (it adds to the group: a failed run's push
// leaves the last success's timestamp in place), to the group of the job
// and, for a shard, of the shard, so that shards do not overwrite each
// other; the body repeats no label of the grouping key.
func TestPush(t *testing.T) {
	type push struct {
		method, path string
		mfs          map[string]*dto.MetricFamily
	}
	for _, tc := range []struct {
		name, shard, wantPath string
		exit                  int
		wantLastSuccess       bool
	}{
		{"nightly", "", "/metrics/job/nightly/job_name/acme", 0, true},
		{"failed night", "", "/metrics/job/nightly/job_name/acme", 1, false},
		{"shard", "2-of-4", "/metrics/job/nightly/job_name/acme/shard/2-of-4", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan push, 1)
			gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mfs := map[string]*dto.MetricFamily{}
				dec := expfmt.NewDecoder(r.Body, expfmt.ResponseFormat(r.Header))
				for {
					mf := &dto.MetricFamily{}
					if err := dec.Decode(mf); err != nil {
						if err != io.EOF {
							t.Errorf("decode the pushed body: %v", err)
						}
						break
					}
					mfs[mf.GetName()] = mf
				}
				got <- push{r.Method, r.URL.Path, mfs}
				w.WriteHeader(http.StatusOK)
			}))
			defer gw.Close()
			r := New(Config{Job: "acme", Shard: tc.shard, Pushgateway: gw.URL, PushJob: "nightly"})
			if err := r.Start(); err != nil {
				t.Fatal(err)
			}
			if err := r.Finish(context.Background(), &summary.Summary{Counts: lead.Counts{Submitted: 7}}, tc.exit); err != nil {
				t.Fatal(err)
			}
			p := <-got
			if p.method != http.MethodPost || groupPath(p.path) != groupPath(tc.wantPath) {
				t.Errorf("push %s %s, want POST %s", p.method, p.path, tc.wantPath)
			}
			if v, ok := value(p.mfs, "bulkload_rows_total", map[string]string{"status": "submitted"}); !ok || v != 7 {
				t.Errorf("pushed rows_total{status=submitted} = %v, %v; want 7", v, ok)
			}
			for name, mf := range p.mfs {
				for _, m := range mf.GetMetric() {
					for _, l := range m.GetLabel() {
						if l.GetName() == Label || l.GetName() == ShardLabel {
							t.Errorf("pushed %s carries %s=%q, a label of the grouping key (the Pushgateway refuses it)", name, l.GetName(), l.GetValue())
						}
					}
				}
			}
			if _, ok := value(p.mfs, "bulkload_last_success_timestamp_seconds", nil); ok != tc.wantLastSuccess {
				t.Errorf("exit %d: pushed bulkload_last_success_timestamp_seconds: %v, want %v (only a success sets it; the group keeps the last one)", tc.exit, ok, tc.wantLastSuccess)
			}
		})
	}
}

func TestPushFailureIsReported(t *testing.T) {
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer gw.Close()
	r := New(Config{Job: "acme", Pushgateway: gw.URL})
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	if err := r.Finish(context.Background(), nil, 0); err == nil {
		t.Fatal("a refused push: no error")
	}
}

// groupPath is a Pushgateway push path with its grouping labels in name
// order: client_golang's push builds the path from a map, so the order of
// job_name and shard varies from run to run (the Pushgateway takes either).
func groupPath(p string) string {
	parts := strings.Split(strings.TrimPrefix(p, "/metrics/job/"), "/")
	if len(parts) < 1 || len(parts)%2 != 1 {
		return p
	}
	var pairs []string
	for i := 1; i+1 < len(parts); i += 2 {
		pairs = append(pairs, parts[i]+"/"+parts[i+1])
	}
	slices.Sort(pairs)
	return "/metrics/job/" + strings.Join(append([]string{parts[0]}, pairs...), "/")
}

// TestHelpHints: the series' help texts name the command line's flags
// only through Config.Hints; without hints they name none.
func TestHelpHints(t *testing.T) {
	help := func(h summary.Hints) string {
		path := filepath.Join(t.TempDir(), "acme.prom")
		r := New(Config{Job: "acme", File: path, Interval: time.Hour, Hints: h})
		r.SetAPI(func() submitter.Stats { return submitter.Stats{} })
		if err := r.Start(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	flags := help(summary.Hints{Resume: "--resume", MaxInvalid: "--max-invalid", Concurrency: "--concurrency"})
	for _, w := range []string{
		"not_reached: never read because the run stopped first; --resume sends both).",
		"listed in the rejects file; within --max-invalid they do not fail the run.",
		"calls in flight in force (--concurrency: fixed, or learned by auto).",
	} {
		if !strings.Contains(flags, w) {
			t.Errorf("help with hints lacks %q:\n%s", w, flags)
		}
	}
	plain := help(summary.Hints{})
	if strings.Contains(plain, "--") {
		t.Errorf("help without hints names a flag:\n%s", plain)
	}
	for _, w := range []string{"never read because the run stopped first).", "within the limit on invalid rows they", "in force (fixed, or learned by auto)."} {
		if !strings.Contains(plain, w) {
			t.Errorf("help without hints lacks %q", w)
		}
	}
}
