package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/summary"
)

// TestExitStatusRecordsAgree: the --report folder vanishes while the
// upload runs (after its first createLead), so the run ends with exit 5
// although every row is settled. Every record of the exit status says 5:
// --summary-json, the summary beside the results file, the metrics file;
// and bulkload summary and bulkload report of the results file do not call
// the run a success. Before, the summary JSON and the summary beside the
// results file said exitCode 0 and bulkload summary exited 0.
func TestExitStatusRecordsAgree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gone := filepath.Join(dir, "reports")
	if err := os.Mkdir(gone, 0o700); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	s := startTestSimHandler(t, leadsim.Options{}, func(s *leadsim.Server) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.Handler().ServeHTTP(w, r)
			if r.URL.Path == "/graphql" {
				once.Do(func() { os.RemoveAll(gone) })
			}
		})
	})
	results, sumJSON, prom := filepath.Join(dir, "r.csv"), filepath.Join(dir, "s.json"), filepath.Join(dir, "m.prom")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--summary-json", sumJSON, "--metrics-file", prom, "--report", filepath.Join(gone, "run.html"),
		"--rate", "0", "--progress", "off", filepath.Join(samples, "leads.csv"))
	res := runCLI(t, secretEnv(), args...)
	if res.code != app.ExitIO || !strings.Contains(res.stderr, "--report") {
		t.Fatalf("upload exit = %d, want %d naming --report\n%s", res.code, app.ExitIO, res.stderr)
	}
	for _, path := range []string{sumJSON, summary.Path(results)} {
		if got := readSummaryJSON(t, path)["exitCode"]; got != float64(app.ExitIO) {
			t.Errorf("%s: exitCode %v, want %d", filepath.Base(path), got, app.ExitIO)
		}
	}
	m, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m), "bulkload_last_run_exit_code") || !strings.Contains(string(m), "} 5\n") {
		t.Errorf("metrics file does not say exit 5:\n%s", m)
	}
	if r := runCLI(t, nil, "summary", results); r.code == app.ExitOK || !strings.Contains(r.stderr, "exit 5") {
		t.Errorf("bulkload summary exit = %d, want non-zero naming the run's exit 5\n%s", r.code, r.stderr)
	}
	page := filepath.Join(dir, "later.html")
	runCLI(t, nil, "report", "-o", page, results)
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "(exit 5)") {
		t.Errorf("bulkload report does not say exit 5: %v", err)
	}
}

// TestReportAndSummaryShareOneVerdict: bulkload report and bulkload
// summary of the same results files reach one verdict. Two results files
// of one input (a copy, or the same rows sent twice) count each row and
// bid twice: summary says ACCOUNTING MISMATCH and exits 1, and the page
// says exit 1 and why, never "Nothing to do" over $1,800 of bids that are
// $900. Before, the page took the best of the parts' exit statuses (0).
func TestReportAndSummaryShareOneVerdict(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := uploadedTwice(t, dir)
	check := func(name string, wantCode int, wantText ...string) {
		t.Helper()
		sum := runCLI(t, nil, "summary", a, b)
		page := filepath.Join(dir, name+".html")
		rep := runCLI(t, nil, "report", "-o", page, a, b)
		if rep.code != app.ExitOK {
			t.Fatalf("%s: bulkload report exit = %d\n%s", name, rep.code, rep.stderr)
		}
		html, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		p := string(html)
		if sum.code != wantCode || !strings.Contains(p, "exit status <span data-k=\"exitCode\">"+strconv.Itoa(wantCode)+"</span>") {
			t.Errorf("%s: summary exit %d, page %q; want both %d", name, sum.code, between(p, `id="verdict">`, "</p>"), wantCode)
		}
		for _, w := range wantText {
			if !strings.Contains(p, w) || !strings.Contains(sum.stderr, w) {
				t.Errorf("%s: page or summary lacks %q\npage: %s\nsummary: %s", name, w, between(p, `id="verdict">`, "</ul>"), sum.stderr)
			}
		}
		if strings.Contains(p, "Nothing to do") {
			t.Errorf("%s: the page says nothing is to do: %s", name, between(p, `id="verdict">`, "</p>"))
		}
	}
	// Both summaries fresh: the page adds them up (summary.Merge).
	check("fresh", app.ExitRowsFailed, "the accounting does not add up")
	// The reasons are a list under the verdict, in a real browser, with
	// the page's own style and nothing loaded.
	p := browse(t, filepath.Join(dir, "fresh.html"), "")
	if len(p.console) > 0 || len(p.requests) > 0 {
		t.Errorf("console %q, requests %q: want none", p.console, p.requests)
	}
	if !strings.Contains(p.dom, `<ul class="notes" id="notes"><li>the accounting does not add up`) {
		t.Errorf("the page's notes are not under its verdict:\n%s", between(p.dom, `id="verdict"`, "</section>"))
	}
	// One results file newer than its summary: its rows are read.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(b, later, later); err != nil {
		t.Fatal(err)
	}
	check("rows read", app.ExitRowsFailed, "the accounting does not add up")
}

// between is the text of s after start up to end.
func between(s, start, end string) string {
	_, rest, _ := strings.Cut(s, start)
	out, _, _ := strings.Cut(rest, end)
	return out
}
