package app

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/leadsim"
)

// A night's run: invalid rows within --max-invalid, rows never reached
// when the service died, rows the service refused. Moved from
// cmd/bulkload's night_test.go (argv turned into options); the cron line,
// the nights under one export name and the re-drop refused stay there,
// end to end. --refusals with standard input is refused by the job's
// Prepare, as it was under --simulate on the command line, before any
// simulator is started.

// partnerFileWithInvalid writes the sample with rows bad made invalid
// (a zip code of three digits) to dir/name and returns its path and row
// count.
func partnerFileWithInvalid(t *testing.T, dir, name string, bad ...int) (string, int) {
	t.Helper()
	recs := sampleRecords(t)
	zip := slices.Index(recs[0], "zipCode")
	out := slices.Clone(recs)
	for _, r := range bad {
		out[r] = slices.Clone(recs[r])
		out[r][zip] = "123"
	}
	path := filepath.Join(dir, name)
	writeCSV(t, path, out)
	return path, len(out) - 1
}

// TestInvalidRowsWithinLimitAreNotAFailedRun: invalid rows within
// --max-invalid are the partner's to fix: the upload exits 0 once every
// valid row is settled, and reports them in the summary, its JSON, the
// metrics (count and share) and the rejects file. --strict makes them fail
// the run; validate always does.
func TestInvalidRowsWithinLimitAreNotAFailedRun(t *testing.T) {
	t.Parallel()
	s := startSim(t, leadsim.Options{})
	dir := t.TempDir()
	input, rows := partnerFileWithInvalid(t, dir, "acme.csv", 3, 7, 11)
	cases := []struct {
		name        string
		strict      bool // --strict
		wantCode    int
		wantSuccess float64
	}{
		{"default", false, ExitOK, 1},
		{"--strict", true, ExitRowsFailed, 0},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Each run in a folder of its own: an upload of an input that
			// an earlier one beside it sent is refused (see
			// TestResumeAfterMidnight).
			sub := filepath.Join(dir, string(rune('a'+i)))
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(sub, "run")
			summary, rejects, prom := out+".summary.json", out+".rejects.csv", out+".prom"
			res := runUpload(t, s, uploadJob(input, out+".results.csv", func(j *UploadJob) {
				j.Checks.Strict = tc.strict
				j.In.Rejects = rejects
				j.In.SummaryJSON = summary
				j.Metrics.File = prom
			}))
			if res.code != tc.wantCode {
				t.Fatalf("upload %s with 3 of %d rows invalid: exit %d, want %d\n%s", tc.name, rows, res.code, tc.wantCode, res.stderr)
			}
			sum := readSummaryJSON(t, summary)
			share := 3.0 / float64(rows)
			if sum["invalid"] != 3.0 || sum["exitCode"] != float64(tc.wantCode) || math.Abs(sum["invalidShare"].(float64)-share) > 1e-9 {
				t.Errorf("summary JSON invalid = %v, invalidShare = %v, exitCode = %v; want 3, %v, %d", sum["invalid"], sum["invalidShare"], sum["exitCode"], share, tc.wantCode)
			}
			if got := sum["processed"].(float64) + sum["submitted"].(float64); got != float64(rows-3) {
				t.Errorf("rows sent and settled = %v, want %d", got, rows-3)
			}
			vals, _ := parseMetrics(t, prom)
			for key, want := range map[string]float64{
				"bulkload_rows_total{status=invalid}": 3,
				"bulkload_invalid_ratio":              share,
				"bulkload_last_run_success":           tc.wantSuccess,
				"bulkload_last_run_exit_code":         float64(tc.wantCode),
			} {
				if got, ok := vals[key]; !ok || math.Abs(got-want) > 1e-9 {
					t.Errorf("%s = %v (present %v), want %v", key, got, ok, want)
				}
			}
			if recs := readCSVFile(t, rejects); len(recs) != 1+3 {
				t.Errorf("rejects file has %d data rows, want 3", len(recs)-1)
			}
		})
	}

	// validate's job is to find invalid rows: any one exits 1. Its
	// --metrics-file lets a dry-run cron job be monitored.
	vprom := filepath.Join(dir, "v.prom")
	v := newValidateJob(input)
	v.In.Results = filepath.Join(dir, "v.csv")
	v.Metrics.File = vprom
	v.Metrics.JobName = "acme-dry"
	res := runValidate(t, v)
	if res.code != ExitRowsFailed {
		t.Errorf("validate with 3 invalid rows: exit %d, want %d\n%s", res.code, ExitRowsFailed, res.stderr)
	}
	vals, jobs := parseMetrics(t, vprom)
	for key, want := range map[string]float64{
		"bulkload_rows_total{status=valid}":   float64(rows - 3),
		"bulkload_rows_total{status=invalid}": 3,
		"bulkload_last_run_exit_code":         ExitRowsFailed,
		"bulkload_last_run_success":           0,
	} {
		if got, ok := vals[key]; !ok || got != want {
			t.Errorf("validate --metrics-file: %s = %v (present %v), want %v", key, got, ok, want)
		}
	}
	if !jobs["acme-dry"] {
		t.Errorf("validate --metrics-file job_name labels %v, want acme-dry", jobs)
	}
	// Over --max-invalid nothing is sent, exit 1.
	before := totalCreates(s)
	over := filepath.Join(dir, "over")
	if err := os.Mkdir(over, 0o755); err != nil {
		t.Fatal(err)
	}
	res = runUpload(t, s, uploadJob(input, filepath.Join(over, "over.csv"), func(j *UploadJob) { j.Checks.MaxInvalid = "2" }))
	if res.code != ExitRowsFailed || totalCreates(s) != before {
		t.Errorf("over --max-invalid: exit %d, %d sent; want 1, none\n%s", res.code, totalCreates(s)-before, res.stderr)
	}
}

// TestNotReachedShown: the service dies a few rows into a 3,000-row file:
// the rows the run never read are in the accounting ("N not reached, left
// for --resume"), the summary JSON and the metrics, not only in the last
// error line, and --resume sends them.
func TestNotReachedShown(t *testing.T) {
	t.Parallel()
	var sw *outageSwitch
	s := startSimHandler(t, leadsim.Options{}, func(srv *leadsim.Server) http.Handler {
		sw = &outageSwitch{h: srv.Handler(), downFrom: 12}
		return sw
	})
	dir := t.TempDir()
	recs := sampleRecords(t)
	big := [][]string{recs[0]}
	for v := range 60 {
		for _, rec := range recs[1:] {
			rec = slices.Clone(rec)
			rec[slices.Index(recs[0], "leadId")] += fmt.Sprintf("-%d", v)
			rec[slices.Index(recs[0], "email")] = fmt.Sprintf("v%d.%s", v, rec[slices.Index(recs[0], "email")])
			rec[slices.Index(recs[0], "socialSecurityNumber")] = ""
			big = append(big, rec)
		}
	}
	input := filepath.Join(dir, "big.csv")
	writeCSV(t, input, big)
	summary, prom := filepath.Join(dir, "s.json"), filepath.Join(dir, "m.prom")
	job := func(concurrency int, resume bool) *UploadJob {
		return uploadJob(input, filepath.Join(dir, "r.csv"), func(j *UploadJob) {
			j.Up.Concurrency = Concurrency{N: concurrency}
			j.Up.MaxConsecutiveFailures = 5
			j.Up.OutageWait = time.Second
			j.In.SummaryJSON = summary
			j.Metrics.File = prom
			j.Up.Resume = resume
		})
	}
	res := runUpload(t, s, job(1, false))
	if res.code != ExitUnreachable {
		t.Fatalf("exit %d, want %d\n%s", res.code, ExitUnreachable, res.stderr)
	}
	sj := readSummaryJSON(t, summary)
	read, notReached := sj["rowsRead"].(float64), sj["notReached"].(float64)
	if sj["inputRows"] != 3000.0 || read+notReached != 3000 || notReached < 2000 {
		t.Fatalf("inputRows %v, rowsRead %v, notReached %v: want 3000 = read + not reached, most not reached", sj["inputRows"], read, notReached)
	}
	if want := fmt.Sprintf("; %d not reached, left for --resume", int(notReached)); !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "not reached") {
		t.Errorf("the accounting does not say %q:\n%s", want, res.stderr)
	}
	if vals, _ := parseMetrics(t, prom); vals["bulkload_rows_total{status=not_reached}"] != notReached {
		t.Errorf("bulkload_rows_total{status=not_reached} = %v, want %v", vals["bulkload_rows_total{status=not_reached}"], notReached)
	}
	sw.healed.Store(true)
	// The resume sends the rows not reached at 8 calls in flight (at the
	// first run's 1, the 2,990-odd rows took most of the test's time).
	if res := runUpload(t, s, job(8, true)); res.code != ExitOK {
		t.Fatalf("--resume: exit %d\n%s", res.code, res.stderr)
	}
	if sj := readSummaryJSON(t, summary); sj["notReached"] != 0.0 {
		t.Errorf("after --resume notReached = %v, want 0", sj["notReached"])
	}
}

// refuser answers createLead for the leadIds in refuse with a GraphQL
// refusal (BAD_USER_INPUT in a 200 answer), and for those in flaky with
// 503 (retryable: left for --resume); the rest go to h.
type refuser struct {
	h             http.Handler
	refuse, flaky []string
}

func (f *refuser) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/graphql" {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte("createLead")) {
			for _, id := range f.refuse {
				if bytes.Contains(body, []byte(`"`+id+`"`)) {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprint(w, `{"errors":[{"message":"loanAmount: over this partner's limit","extensions":{"code":"BAD_USER_INPUT"}}],"data":null}`)
					return
				}
			}
			for _, id := range f.flaky {
				if bytes.Contains(body, []byte(`"`+id+`"`)) {
					http.Error(w, "busy", http.StatusServiceUnavailable)
					return
				}
			}
		}
	}
	f.h.ServeHTTP(w, r)
}

// TestRefusalsFile: rows the service refused outright go to --refusals in
// the input's own columns with the service's reason (a file the partner
// can fix and send again, as Salesforce's error file); rows that failed
// for the moment (503 until the retries ran out) are not in it: --resume
// sends those. Invalid rows stay in --rejects.
func TestRefusalsFile(t *testing.T) {
	t.Parallel()
	s := startSimHandler(t, leadsim.Options{}, func(srv *leadsim.Server) http.Handler {
		return &refuser{h: srv.Handler(), refuse: []string{"ACME-000005", "ACME-000017"}, flaky: []string{"ACME-000009"}}
	})
	dir := t.TempDir()
	input, _ := partnerFileWithInvalid(t, dir, "acme.csv", 3)
	refusals, rejects := filepath.Join(dir, "acme.refusals.csv"), filepath.Join(dir, "acme.rejects.csv")
	res := runUpload(t, s, uploadJob(input, filepath.Join(dir, "r.csv"), func(j *UploadJob) {
		j.Up.MaxAttempts = 1
		j.In.Rejects = rejects
		j.In.Refusals = refusals
	}))
	if res.code != ExitRowsFailed {
		t.Fatalf("exit %d, want %d (failed rows)\n%s", res.code, ExitRowsFailed, res.stderr)
	}
	recs := readCSVFile(t, refusals)
	header := sampleRecords(t)[0]
	if len(recs) != 3 || recs[0][0] != "error" || !slices.Equal(recs[0][1:], header) {
		t.Fatalf("refusals file: %d rows, header %v; want the error column, the input's columns and 2 rows", len(recs)-1, recs[0])
	}
	id := slices.Index(header, "leadId") + 1
	for i, want := range []string{"ACME-000005", "ACME-000017"} {
		if recs[i+1][id] != want || !strings.Contains(recs[i+1][0], "over this partner's limit") {
			t.Errorf("refusals row %d = %s %q, want %s with the service's reason", i+1, recs[i+1][id], recs[i+1][0], want)
		}
	}
	if rej := readCSVFile(t, rejects); len(rej) != 2 {
		t.Errorf("rejects file has %d rows, want the 1 invalid", len(rej)-1)
	}
	if st, err := os.Stat(refusals); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("refusals file mode %v (%v), want 0600: it holds the partner's data", st, err)
	}
	if res := runUpload(t, s, uploadJob("-", "", func(j *UploadJob) { j.In.Refusals = filepath.Join(dir, "x.csv") })); res.code != ExitUsage || !strings.Contains(res.stderr, "--refusals needs an input file") {
		t.Errorf("--refusals with standard input: exit %d\n%s", res.code, res.stderr)
	}
}
