package app

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bulkload/bulkload/internal/resultstest"
	"github.com/bulkload/bulkload/leadsim"
)

// The metrics an upload writes and pushes. Moved from cmd/bulkload's
// metrics_test.go (argv turned into options; a wrong secret as
// runOpts.secret, not BULKLOAD_CLIENT_SECRET).

// parseMetrics reads a --metrics-file (resultstest.ReadMetrics).
func parseMetrics(t *testing.T, path string) (map[string]float64, map[string]bool) {
	return resultstest.ReadMetrics(t, path)
}

// sensitiveValues and assertNoSensitive are resultstest's.
func sensitiveValues(t *testing.T, path string) []string {
	return resultstest.SensitiveValues(t, path)
}
func assertNoSensitive(t *testing.T, what, text string, values []string) {
	resultstest.AssertNoSensitive(t, what, text, values)
}

// The metrics file agrees with the summary JSON of the same run.
func TestUploadMetricsFileMatchesSummary(t *testing.T) {
	t.Parallel()
	s := startSim(t, leadsim.Options{})
	path := filepath.Join(t.TempDir(), "leads.prom")
	res, _, summaryPath := uploadSample(t, s, func(j *UploadJob) { j.Metrics.File = path })
	if res.code != ExitOK {
		t.Fatalf("upload exit = %d\n%s", res.code, res.stderr)
	}
	sum := readSummaryJSON(t, summaryPath)
	vals, jobs := parseMetrics(t, path)
	if !jobs["leads"] || len(jobs) != 1 {
		t.Errorf("job_name labels = %v, want only leads (the input's base name)", jobs)
	}
	num := func(k string) float64 {
		v, ok := sum[k].(float64)
		if !ok {
			t.Fatalf("summary JSON %s = %v, not a number", k, sum[k])
		}
		return v
	}
	for key, want := range map[string]float64{
		"bulkload_rows_total{status=submitted}":          num("submitted"),
		"bulkload_rows_total{status=processed}":          num("processed"),
		"bulkload_rows_total{status=invalid}":            num("invalid"),
		"bulkload_rows_total{status=failed}":             num("failed"),
		"bulkload_qualified_total":                       num("qualified"),
		"bulkload_bid_value_dollars_total":               num("totalBidCents") / 100,
		"bulkload_tokens_fetched_total":                  num("tokensFetched"),
		"bulkload_last_run_success":                      1,
		"bulkload_last_run_exit_code":                    0,
		"bulkload_run_in_progress":                       0,
		"bulkload_api_calls_total{operation=createLead}": num("submitted") + num("processed"),
		"bulkload_api_calls_total{operation=submitLead}": num("submitted"),
	} {
		if got, ok := vals[key]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", key, got, ok, want)
		}
	}
	if vals["bulkload_rows_total{status=submitted}"] == 0 {
		t.Error("no submitted rows: the sample should qualify some leads")
	}
	var calls float64
	for k, v := range vals {
		if strings.HasPrefix(k, "bulkload_api_calls_total{") {
			calls += v
		}
	}
	if calls != num("apiCalls") {
		t.Errorf("sum of bulkload_api_calls_total = %v, summary apiCalls = %v", calls, num("apiCalls"))
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("metrics file mode = %v (%v), want 0644", fi.Mode().Perm(), err)
	}
	b, _ := os.ReadFile(path)
	assertNoSensitive(t, "metrics file", string(b), sensitiveValues(t, filepath.Join(samples, "leads.csv")))
}

// A run that fails says so in bulkload_last_run_success, whatever stopped
// it: here refused credentials, before any row.
func TestUploadMetricsFailedRun(t *testing.T) {
	t.Parallel()
	s := startSim(t, leadsim.Options{})
	path := filepath.Join(t.TempDir(), "m.prom")
	dir := t.TempDir()
	j := uploadJob(filepath.Join(samples, "leads.csv"), filepath.Join(dir, "r.csv"), func(j *UploadJob) {
		j.Up.Rate = Rate{Auto: true} // no --rate: its default
		j.Metrics.File = path
		j.Metrics.JobName = "acme"
	})
	res := runUpload(t, s, j, runOpts{secret: "wrong"})
	if res.code != ExitAuth {
		t.Fatalf("exit = %d, want %d\n%s", res.code, ExitAuth, res.stderr)
	}
	vals, jobs := parseMetrics(t, path)
	if !jobs["acme"] {
		t.Errorf("job_name labels = %v, want acme (--job-name)", jobs)
	}
	if got, ok := vals["bulkload_last_run_success"]; !ok || got != 0 {
		t.Errorf("bulkload_last_run_success = %v (present %v), want 0", got, ok)
	}
	if got := vals["bulkload_last_run_exit_code"]; got != ExitAuth {
		t.Errorf("bulkload_last_run_exit_code = %v, want %d", got, ExitAuth)
	}
}

// An unwritable metrics file is refused before the first call.
func TestUploadMetricsFileUnwritable(t *testing.T) {
	t.Parallel()
	s := startSim(t, leadsim.Options{})
	dir := t.TempDir()
	res := runUpload(t, s, uploadJob(filepath.Join(samples, "leads.csv"), filepath.Join(dir, "r.csv"), func(j *UploadJob) {
		j.Up.Rate = Rate{Auto: true} // no --rate: its default
		j.Metrics.File = filepath.Join(dir, "nodir", "m.prom")
	}))
	if res.code != ExitUsage {
		t.Fatalf("exit = %d, want %d\n%s", res.code, ExitUsage, res.stderr)
	}
	if !strings.Contains(res.stderr, "--metrics-file") {
		t.Errorf("stderr does not name --metrics-file:\n%s", res.stderr)
	}
	if n := s.Stats().LeadsCreated; n != 0 {
		t.Errorf("%d leads created before the unwritable metrics file was refused", n)
	}
}

// Two shards of a backfill push to two groups of the Pushgateway: the
// second does not overwrite the first.
func TestUploadShardsPushToTheirOwnGroups(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	pushes := map[string]string{}
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		pushes[groupPath(r.URL.Path)] = r.Method
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer gw.Close()
	s := startSim(t, leadsim.Options{})
	dir := t.TempDir()
	for _, shard := range []string{"0/2", "1/2"} {
		res := runUpload(t, s, uploadJob(filepath.Join(samples, "leads.csv"), filepath.Join(dir, "{name}.{shard}.results.csv"), func(j *UploadJob) {
			j.Up.Shard = shard
			j.Metrics.Pushgateway = gw.URL
			j.Metrics.JobName = "backfill-acme"
		}))
		if res.code != ExitOK {
			t.Fatalf("--shard %s: exit %d\n%s", shard, res.code, res.stderr)
		}
	}
	want := map[string]string{
		"/metrics/job/bulkload/job_name/backfill-acme/shard/0-of-2": http.MethodPost,
		"/metrics/job/bulkload/job_name/backfill-acme/shard/1-of-2": http.MethodPost,
	}
	mu.Lock()
	defer mu.Unlock()
	if !maps.Equal(pushes, want) {
		t.Errorf("pushes = %v, want %v", pushes, want)
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
