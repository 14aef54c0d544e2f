//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/internal/pgtest"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/ledger"
)

// The PostgreSQL server of this test binary, started by the first test
// that needs it and stopped by TestMain (a machine without PostgreSQL fails
// those tests: .ci/run installs it).
var (
	pgOnce   sync.Once
	pgServer *pgtest.Server
	pgErr    error
)

func postgresLedger(t testing.TB) string {
	t.Helper()
	pgOnce.Do(func() { pgServer, pgErr = pgtest.Start() })
	if pgErr != nil {
		t.Fatal(pgErr)
	}
	u, err := pgServer.NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// eachLedger runs f with a new ledger of each store: a SQLite file, and a
// database of a real PostgreSQL server. The ledger reaches bulkload in
// BULKLOAD_LEDGER, as a Kubernetes Secret would give a URL with its
// password.
func eachLedger(t *testing.T, f func(t *testing.T, where string)) {
	for _, st := range []struct {
		name  string
		where func(testing.TB) string
	}{
		{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "state", "ledger.sqlite") }},
		{"postgres", postgresLedger},
	} {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel() // a simulator, a folder and a database of its own
			f(t, st.where(t))
		})
	}
}

// ledgerEnv is the environment of a run on the ledger at where.
func ledgerEnv(where string) map[string]string {
	env := secretEnv()
	env["BULKLOAD_LEDGER"] = where
	return env
}

// ledgerUpload uploads input to s into results, with the ledger at where,
// and returns the run and its summary JSON.
func ledgerUpload(t *testing.T, s *sim, where, input, results string, extra ...string) (cliResult, map[string]any) {
	t.Helper()
	sum := results + ".json"
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--summary-json", sum, "--rate", "0", "--progress", "off")
	args = append(args, extra...)
	res := runCLI(t, ledgerEnv(where), append(args, input)...)
	m := map[string]any{}
	if _, err := os.Stat(sum); err == nil {
		m = readSummaryJSON(t, sum)
	}
	return res, m
}

func num(m map[string]any, key string) int {
	f, _ := m[key].(float64)
	return int(f)
}

// sentTwice lists the leadIds the service got more than one createLead
// for.
func sentTwice(s *sim) []string {
	var out []string
	for id, n := range s.Stats().CreateCalls {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s (%d)", id, n))
		}
	}
	slices.Sort(out)
	return out
}

// cumulative writes the sample with n new leads appended (rows copied
// with their own leadId and e-mail and no SSN, so that the service takes
// them as new), as a partner's cumulative export.
func cumulative(t *testing.T, path string, n int) {
	t.Helper()
	recs := sampleRecords(t)
	col := func(name string) int { return slices.Index(recs[0], name) }
	for i := range n {
		rec := slices.Clone(recs[1+i])
		rec[col("leadId")] = fmt.Sprintf("NEW-%d", i+1)
		rec[col("email")] = fmt.Sprintf("new%d.%s", i+1, rec[col("email")])
		rec[col("socialSecurityNumber")] = ""
		recs = append(recs, rec)
	}
	writeCSV(t, path, recs)
}

// TestLedgerNightAfterNight is issue 29's night after night, on each
// store: the partner re-drops yesterday's export (another name, another
// results file): nothing is sent, every row already_sent, exit 0, and the
// summary says so; a cumulative export sends only its new rows; a row
// whose content changed under its leadId is a conflict (exit 1) until
// --resend-changed; every run is in the history, and a run's report is
// the run's, whatever ran after. On main the re-drop sent every row again
// and exited 0 with $0.00.
func TestLedgerNightAfterNight(t *testing.T) {
	t.Parallel()
	eachLedger(t, func(t *testing.T, where string) {
		s := startTestSim(t, leadsim.Options{})
		dir := t.TempDir()
		first := filepath.Join(dir, "leads.csv")
		writeCSV(t, first, sampleRecords(t))

		res, night1 := ledgerUpload(t, s, where, first, filepath.Join(dir, "night1.results.csv"))
		if res.code != app.ExitOK {
			t.Fatalf("night 1: exit %d\n%s", res.code, res.stderr)
		}
		valid := num(night1, "rowsRead") - num(night1, "invalid")
		if valid == 0 || num(night1, "totalBidCents") == 0 {
			t.Fatalf("night 1 sent nothing worth a bid: %v", night1)
		}

		// The partner re-drops the same export under another name.
		redropped := filepath.Join(dir, "leads-again.csv")
		writeCSV(t, redropped, sampleRecords(t))
		res, night2 := ledgerUpload(t, s, where, redropped, filepath.Join(dir, "night2.results.csv"))
		if res.code != app.ExitOK {
			t.Fatalf("re-drop: exit %d, want 0\n%s", res.code, res.stderr)
		}
		if got := num(night2, "alreadySent"); got != valid {
			t.Errorf("re-drop: %d rows already_sent, want every valid row (%d)", got, valid)
		}
		if num(night2, "processed")+num(night2, "submitted") != 0 || num(night2, "totalBidCents") != 0 || num(night2, "qualified") != 0 {
			t.Errorf("re-drop: processed %d, submitted %d, bids %d, qualified %d; want nothing of its own", num(night2, "processed"), num(night2, "submitted"), num(night2, "totalBidCents"), num(night2, "qualified"))
		}
		if !strings.Contains(res.stderr, "already sent") {
			t.Errorf("re-drop: the summary has no already sent line:\n%s", res.stderr)
		}
		for row, r := range finalByRow(t, filepath.Join(dir, "night2.results.csv"), num(night2, "rowsRead")) {
			if r["status"] == "already_sent" && (r["id"] == "" || !strings.Contains(r["note"], "run 1 on ") || r["bidValue"] != "") {
				t.Errorf("re-drop row %d = %v, want the earlier lead's id and run 1 in the note, no bid of its own", row, r)
			}
		}
		if twice := sentTwice(s); len(twice) > 0 {
			t.Errorf("leads sent twice: %v", twice)
		}

		// A cumulative export: yesterday's rows and 3 new ones.
		cum := filepath.Join(dir, "cumulative.csv")
		cumulative(t, cum, 3)
		res, night3 := ledgerUpload(t, s, where, cum, filepath.Join(dir, "night3.results.csv"))
		if res.code != app.ExitOK {
			t.Fatalf("cumulative: exit %d\n%s", res.code, res.stderr)
		}
		if got := num(night3, "processed") + num(night3, "submitted"); got != 3 || num(night3, "alreadySent") != valid {
			t.Errorf("cumulative: %d rows sent and %d already_sent, want 3 and %d", got, num(night3, "alreadySent"), valid)
		}
		if twice := sentTwice(s); len(twice) > 0 {
			t.Errorf("leads sent twice: %v", twice)
		}

		// Row 1 changed under its leadId: a conflict.
		recs := sampleRecords(t)
		recs[1][slices.Index(recs[0], "address1")] = "1 Changed Street"
		changed := filepath.Join(dir, "changed.csv")
		writeCSV(t, changed, recs)
		res, night4 := ledgerUpload(t, s, where, changed, filepath.Join(dir, "night4.results.csv"))
		if res.code != app.ExitRowsFailed || num(night4, "conflict") != 1 {
			t.Fatalf("changed row: exit %d, conflict %d; want exit 1 and 1 conflict\n%s", res.code, num(night4, "conflict"), res.stderr)
		}
		r1 := finalByRow(t, filepath.Join(dir, "night4.results.csv"), num(night4, "rowsRead"))[1]
		if r1["status"] != "conflict" || !strings.Contains(r1["error"], "other content") {
			t.Errorf("changed row 1 = %v, want conflict", r1)
		}
		res, _ = ledgerUpload(t, s, where, changed, filepath.Join(dir, "night5.results.csv"), "--resend-changed")
		if res.code != app.ExitOK {
			t.Fatalf("--resend-changed: exit %d\n%s", res.code, res.stderr)
		}
		if n := s.Stats().CreateCalls[r1["leadId"]]; n != 2 {
			t.Errorf("--resend-changed sent the changed row %d times in all, want 2 (once each content)", n)
		}

		// The history has every run; night 1's report is night 1's.
		hist := runCLI(t, ledgerEnv(where), "history")
		for i := 1; i <= 5; i++ {
			if !strings.Contains(hist.stdout, fmt.Sprintf("night%d.results.csv", i)) {
				t.Errorf("history lacks night %d:\n%s", i, hist.stdout)
			}
		}
		run1, _ := night1["settings"].(map[string]any)["ledgerRun"].(float64)
		page := filepath.Join(dir, "night1.html")
		if res := runCLI(t, ledgerEnv(where), "report", "--run", strconv.Itoa(int(run1)), "-o", page); res.code != app.ExitOK {
			t.Fatalf("report --run %v: exit %d\n%s", run1, res.code, res.stderr)
		}
		html, _ := os.ReadFile(page)
		if !strings.Contains(string(html), night1["totalBidValue"].(string)) || !strings.Contains(string(html), "(this run)") {
			t.Errorf("report --run %v lacks night 1's bids %v or its place in the history", run1, night1["totalBidValue"])
		}
	})
}

// TestLedgerConcurrentRuns: two runs of one file at once (cron's and a
// manual one, each with its own results file) send each lead once: a lead
// one run holds, the other waits for and finds sent. On main each run sent
// every lead.
func TestLedgerConcurrentRuns(t *testing.T) {
	t.Parallel()
	eachLedger(t, func(t *testing.T, where string) {
		s := startTestSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 5 * time.Millisecond}})
		dir := t.TempDir()
		input := filepath.Join(dir, "leads.csv")
		writeCSV(t, input, sampleRecords(t))
		var wg sync.WaitGroup
		sums := make([]map[string]any, 2)
		for i := range 2 {
			wg.Go(func() {
				res, m := ledgerUpload(t, s, where, input, filepath.Join(dir, fmt.Sprintf("run%d.results.csv", i)), "--concurrency", "4")
				if res.code != app.ExitOK {
					t.Errorf("run %d: exit %d\n%s", i, res.code, res.stderr)
				}
				sums[i] = m
			})
		}
		wg.Wait()
		valid := num(sums[0], "rowsRead") - num(sums[0], "invalid")
		sent := 0
		for _, m := range sums {
			sent += num(m, "processed") + num(m, "submitted")
		}
		if sent != valid || num(sums[0], "alreadySent")+num(sums[1], "alreadySent") != valid {
			t.Errorf("the two runs sent %d and found %d already sent, want %d each", sent, num(sums[0], "alreadySent")+num(sums[1], "alreadySent"), valid)
		}
		if twice := sentTwice(s); len(twice) > 0 {
			t.Errorf("leads sent twice: %v", twice)
		}
	})
}

// TestLedgerShards: three shards of a backfill on three machines share one
// ledger; a rerun of the whole file afterwards (another results file)
// sends nothing.
func TestLedgerShards(t *testing.T) {
	t.Parallel()
	eachLedger(t, func(t *testing.T, where string) {
		s := startTestSim(t, leadsim.Options{})
		dir := t.TempDir()
		input := filepath.Join(dir, "backfill.csv")
		writeCSV(t, input, sampleRecords(t))
		var wg sync.WaitGroup
		for k := range 3 {
			wg.Go(func() {
				res, _ := ledgerUpload(t, s, where, input, filepath.Join(dir, fmt.Sprintf("shard-%d.results.csv", k)), "--shard", fmt.Sprintf("%d/3", k))
				if res.code != app.ExitOK {
					t.Errorf("shard %d: exit %d\n%s", k, res.code, res.stderr)
				}
			})
		}
		wg.Wait()
		res, m := ledgerUpload(t, s, where, input, filepath.Join(dir, "whole.results.csv"))
		if res.code != app.ExitOK || num(m, "alreadySent") != num(m, "rowsRead")-num(m, "invalid") {
			t.Errorf("the whole file after its shards: exit %d, %d already sent of %d valid rows; want 0 and all\n%s", res.code, num(m, "alreadySent"), num(m, "rowsRead")-num(m, "invalid"), res.stderr)
		}
		if twice := sentTwice(s); len(twice) > 0 {
			t.Errorf("leads sent twice: %v", twice)
		}
	})
}

// TestLedgerKilledRunRerunElsewhere: a run killed with SIGKILL mid-upload,
// then a rerun under another results path ({date} after midnight): the
// rerun acts as a resume. It sends again only the leads the killed run held
// without an answer (their calls may have reached the service: the
// own-lead check settles them), never one whose answer the ledger has; the
// service holds one lead per row. On main the rerun sent every row again.
func TestLedgerKilledRunRerunElsewhere(t *testing.T) {
	t.Parallel()
	eachLedger(t, func(t *testing.T, where string) {
		s := startTestSim(t, leadsim.Options{CreateLatency: leadsim.Latency{Fixed: 150 * time.Millisecond}})
		dir := t.TempDir()
		input := filepath.Join(dir, "leads.csv")
		writeCSV(t, input, sampleRecords(t))
		night1 := filepath.Join(dir, "leads-2026-11-22.results.csv")
		args := append([]string{"upload"}, s.args()...)
		args = append(args, "--rate", "0", "--progress", "off", "--concurrency", "4")
		cmd, out := subprocessEnv(t, []string{"BULKLOAD_LEDGER=" + where}, append(args, "--results", night1, input)...)
		waitForLines(t, night1, 10, 60*time.Second)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()

		l, err := ledger.Open(context.Background(), ledger.Config{Where: where})
		if err != nil {
			t.Fatal(err)
		}
		counts, err := l.Counts(context.Background(), ledger.Account{Endpoint: s.url + "/graphql", ClientID: leadsim.DefaultClientID})
		l.Close()
		if err != nil {
			t.Fatal(err)
		}
		held := counts[ledger.StateClaimed]
		answered := 0
		for st, n := range counts {
			if st != ledger.StateClaimed {
				answered += n
			}
		}
		if answered == 0 {
			t.Fatalf("the killed run left no answer in the ledger (%v): the test tests nothing\n%s", counts, out)
		}
		callsBefore := 0
		for _, n := range s.Stats().CreateCalls {
			callsBefore += n
		}

		res, m := ledgerUpload(t, s, where, input, filepath.Join(dir, "leads-2026-11-23.results.csv"))
		if res.code != app.ExitOK {
			t.Fatalf("rerun: exit %d\n%s", res.code, res.stderr)
		}
		calls := 0
		for _, n := range s.Stats().CreateCalls {
			calls += n
		}
		valid := num(m, "rowsRead") - num(m, "invalid")
		if again := calls - callsBefore; again > valid-answered {
			t.Errorf("the rerun sent %d createLead calls; want at most the %d rows without an answer in the ledger (%d of them held by the killed run)", again, valid-answered, held)
		}
		for id, n := range s.Stats().CreateCalls {
			if n > 2 {
				t.Errorf("lead %s sent %d times", id, n)
			}
		}
		// A lead sent again was the killed run's own: the own-lead check
		// took it, never as a genuine duplicate of another.
		for row, r := range finalByRow(t, filepath.Join(dir, "leads-2026-11-23.results.csv"), num(m, "rowsRead")) {
			if r["id"] == "" || strings.Contains(r["note"], "genuine duplicate") || strings.HasPrefix(r["note"], "Duplicate of lead") && !strings.Contains(r["note"], "earlier attempt created") {
				t.Errorf("rerun row %d = %v, want its own lead", row, r)
			}
		}
		if !strings.Contains(res.stderr, "under another results file") {
			t.Errorf("the rerun does not say it found the earlier run of this input:\n%s", res.stderr)
		}
	})
}

// TestLedgerStoppedRunsAreRecorded: a night whose file never came exits 2
// and says so to the metrics (bulkload_last_run_exit_code 2) and the
// history; a rerun keeps the earlier run's record; a ledger that is not a
// database stops the run with exit 2, nothing sent, and never starts a
// fresh one. On main the missing file (under the cron line's {sha})
// left the metrics as they were.
func TestLedgerStoppedRunsAreRecorded(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	where := filepath.Join(dir, "ledger.sqlite")
	prom := filepath.Join(dir, "acme.prom")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", filepath.Join(dir, "{name}-{date}-{sha}.results.csv"), "--metrics-file", prom, "--job-name", "acme", "--progress", "off")
	res := runCLI(t, ledgerEnv(where), append(args, filepath.Join(dir, "leads.csv"))...)
	if res.code != app.ExitUsage {
		t.Fatalf("missing input: exit %d, want 2\n%s", res.code, res.stderr)
	}
	vals, _ := parseMetrics(t, prom)
	if vals["bulkload_last_run_exit_code"] != 2 {
		t.Errorf("metrics after a missing input: bulkload_last_run_exit_code = %v, want 2", vals["bulkload_last_run_exit_code"])
	}
	hist := runCLI(t, ledgerEnv(where), "history", "--partner", "acme")
	if hist.code != app.ExitOK || !strings.Contains(hist.stdout, "stopped") || !regexp.MustCompile(`(?m)^\s*1\s.*acme\s+2\s`).MatchString(hist.stdout) {
		t.Errorf("history after a missing input: exit %d\n%s%s", hist.code, hist.stdout, hist.stderr)
	}

	// A ledger that is not one: exit 2, nothing sent, the file kept.
	bad := filepath.Join(dir, "bad.sqlite")
	junk := []byte(strings.Repeat("this is no database\n", 300))
	if err := os.WriteFile(bad, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(dir, "in.csv")
	writeCSV(t, input, sampleRecords(t))
	res = runCLI(t, ledgerEnv(bad), append(args[:len(args):len(args)], input)...)
	if res.code != app.ExitUsage || !strings.Contains(res.stderr, "not a readable ledger") || !strings.Contains(res.stderr, "nothing was sent") {
		t.Errorf("corrupt ledger: exit %d, want 2 saying so\n%s", res.code, res.stderr)
	}
	if len(s.Stats().CreateCalls) != 0 {
		t.Errorf("a run on a corrupt ledger sent %v", s.Stats().CreateCalls)
	}
	if b, _ := os.ReadFile(bad); string(b) != string(junk) {
		t.Error("the corrupt ledger was changed")
	}
	if vals, _ := parseMetrics(t, prom); vals["bulkload_last_run_exit_code"] != 2 {
		t.Errorf("metrics after a corrupt ledger: exit code %v, want 2", vals["bulkload_last_run_exit_code"])
	}
}

// TestNoSSNColumn: an export without a column for socialSecurityNumber
// stops before anything is sent (exit 2, naming the column and the flag):
// every lead would come back unqualified, a $0 night that exited 0 on
// main; --allow-no-ssn sends it.
func TestNoSSNColumn(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	recs := sampleRecords(t)
	ssn := slices.Index(recs[0], "socialSecurityNumber")
	for i := range recs {
		recs[i] = slices.Delete(slices.Clone(recs[i]), ssn, ssn+1)
	}
	input := filepath.Join(dir, "nossn.csv")
	writeCSV(t, input, recs)
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--rate", "0", "--progress", "off", "--results", filepath.Join(dir, "r.csv"))
	res := runCLI(t, secretEnv(), append(args, input)...)
	if res.code != app.ExitUsage || !strings.Contains(res.stderr, "no column for socialSecurityNumber") || !strings.Contains(res.stderr, "--allow-no-ssn") || !strings.Contains(res.stderr, "nothing was sent") {
		t.Errorf("no SSN column: exit %d, want 2 naming the column and --allow-no-ssn\n%s", res.code, res.stderr)
	}
	if len(s.Stats().CreateCalls) != 0 {
		t.Errorf("sent %v", s.Stats().CreateCalls)
	}
	res = runCLI(t, secretEnv(), append(args, "--allow-no-ssn", "--overwrite", input)...)
	if res.code != app.ExitOK || len(s.Stats().CreateCalls) == 0 {
		t.Errorf("--allow-no-ssn: exit %d, %d leads sent; want 0 and the rows sent\n%s", res.code, len(s.Stats().CreateCalls), res.stderr)
	}
}

// TestLedgerSummaryCountsEveryRun: a night's results file written by two
// runs (the night's, then a rerun that resumed it) keeps, beside it, only
// the last run's summary; bulkload summary counts the API calls of both
// from the ledger. On main it counted the last run's alone (issue 29: 4,077
// calls where the truth was 8,103).
func TestLedgerSummaryCountsEveryRun(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	where := filepath.Join(dir, "ledger.sqlite")
	input := filepath.Join(dir, "leads.csv")
	writeCSV(t, input, sampleRecords(t))
	results := filepath.Join(dir, "night.results.csv")
	calls := 0
	for _, extra := range [][]string{nil, {"--resume"}} {
		res, m := ledgerUpload(t, s, where, input, results, extra...)
		if res.code != app.ExitOK {
			t.Fatalf("run %v: exit %d\n%s", extra, res.code, res.stderr)
		}
		calls += num(m, "apiCalls")
	}
	out := filepath.Join(dir, "combined.json")
	res := runCLI(t, ledgerEnv(where), "summary", "--summary-json", out, results)
	if res.code != app.ExitOK {
		t.Fatalf("summary: exit %d\n%s", res.code, res.stderr)
	}
	if got := num(readSummaryJSON(t, out), "apiCalls"); got != calls {
		t.Errorf("summary counts %d API calls, want both runs' %d", got, calls)
	}
	if !strings.Contains(res.stderr, "the 2 runs the ledger") {
		t.Errorf("summary does not say where the calls come from:\n%s", res.stderr)
	}
}
