package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

// Three shards of one input against one service send every valid row
// exactly once between them, each into its own results file, and
// "bulkload summary" of the three accounts for every row.
func TestUploadShardsSendEveryRowOnce(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	input := filepath.Join(dir, "backfill.csv")
	b, err := os.ReadFile(filepath.Join(samples, "leads.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(input, b, 0o600); err != nil {
		t.Fatal(err)
	}
	exp := readExpected(t)
	var results []string
	skipped := 0
	for k := range 3 {
		summary := filepath.Join(dir, "summary-"+strconv.Itoa(k)+".json")
		args := append([]string{"upload"}, s.args()...)
		args = append(args, "--shard", strconv.Itoa(k)+"/3", "--rate", "0", "--progress", "off", "--summary-json", summary, input)
		res := runCLI(t, secretEnv(), args...)
		if res.code != app.ExitOK {
			t.Fatalf("shard %d/3 exit = %d\n%s", k, res.code, res.stderr)
		}
		path := filepath.Join(dir, "backfill.shard-"+strconv.Itoa(k)+"-of-3.results.csv")
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("shard %d/3 results file: %v", k, err)
		}
		results = append(results, path)
		sum := readSummaryJSON(t, summary)
		if sum["rowsRead"].(float64) != float64(len(exp)) {
			t.Errorf("shard %d/3 read %v rows, want all %d", k, sum["rowsRead"], len(exp))
		}
		n := int(sum["skippedOtherShards"].(float64))
		if n == 0 || n == len(exp) {
			t.Errorf("shard %d/3 skipped %d rows of other shards: the rows are not split", k, n)
		}
		skipped += n
	}
	if skipped != 2*len(exp) {
		t.Errorf("rows skipped as other shards' = %d over 3 shards, want %d (each row taken by exactly one)", skipped, 2*len(exp))
	}
	st := s.Stats()
	if st.LeadsCreated != len(exp) {
		t.Errorf("leads created = %d, want %d (one per row)", st.LeadsCreated, len(exp))
	}
	for id, n := range st.CreateCalls {
		if n != 1 {
			t.Errorf("leadId %q sent %d times, want once", id, n)
		}
	}

	// The combined summary: every row once, exit 0.
	combined := filepath.Join(dir, "all.json")
	res := runCLI(t, nil, append([]string{"summary", "--summary-json", combined}, results...)...)
	if res.code != app.ExitOK {
		t.Fatalf("summary exit = %d\n%s", res.code, res.stderr)
	}
	if strings.Contains(res.stderr, "elapsed") || strings.Contains(res.stderr, "unknown columns") {
		t.Errorf("the combined summary shows a run's timing or an input's columns, which it does not have:\n%s", res.stderr)
	}
	sum := readSummaryJSON(t, combined)
	if got := int(sum["rowsRead"].(float64)); got != len(exp) {
		t.Errorf("combined rows read = %d, want %d", got, len(exp))
	}
	total := 0
	for _, k := range []string{"submitted", "processed", "invalid", "failed", "submitFailed", "unverified", "created", "notSent"} {
		if v, ok := sum[k].(float64); ok {
			total += int(v)
		}
	}
	if total != len(exp) {
		t.Errorf("combined summary accounts for %d rows, want %d", total, len(exp))
	}
	// The calls and tokens of the shards add up (from the summaries the
	// runs wrote beside their results files).
	var calls, tokens float64
	for k := range 3 {
		one := readSummaryJSON(t, filepath.Join(dir, "summary-"+strconv.Itoa(k)+".json"))
		calls += one["apiCalls"].(float64)
		tokens += one["tokensFetched"].(float64)
	}
	if sum["apiCalls"] != calls || sum["tokensFetched"] != tokens || calls == 0 {
		t.Errorf("combined apiCalls %v tokensFetched %v, want the shards' %v and %v", sum["apiCalls"], sum["tokensFetched"], calls, tokens)
	}

	// Two shards of three: the third shard's rows are in no file, which
	// is not a finished backfill.
	partial := filepath.Join(dir, "partial.json")
	res = runCLI(t, nil, "summary", "--summary-json", partial, results[0], results[1])
	if res.code != app.ExitRowsFailed {
		t.Errorf("summary of 2 of 3 shards exit = %d, want %d\n%s", res.code, app.ExitRowsFailed, res.stderr)
	}
	if strings.Contains(res.stderr, "MISMATCH") {
		t.Errorf("summary of 2 of 3 shards: the missing shard's rows are not accounted as not sent\n%s", res.stderr)
	}
	if !strings.Contains(res.stderr, "shard 2 of 3 (--shard 2/3)") {
		t.Errorf("summary of shards 0 and 1 of 3 does not name the missing shard 2:\n%s", res.stderr)
	}
	if n := readSummaryJSON(t, partial)["notSent"].(float64); n == 0 {
		t.Errorf("summary of 2 of 3 shards: notSent = 0, want the third shard's rows")
	}
	if c := readSummaryJSON(t, partial)["exitCode"]; c != float64(app.ExitRowsFailed) {
		t.Errorf("summary of 2 of 3 shards: JSON exitCode = %v, want %d as the process's", c, app.ExitRowsFailed)
	}
	if c := readSummaryJSON(t, combined)["exitCode"]; c != float64(app.ExitOK) {
		t.Errorf("combined summary: JSON exitCode = %v, want %d", c, app.ExitOK)
	}
}
