//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

// failedFirst runs an upload whose every createLead is answered 503 before
// the service sees it: each row ends failed, a plain failure (not
// ambiguous). It returns the arguments (the input last) and the results
// path.
func failedFirst(t *testing.T, s *alteringSim, n int) ([]string, string) {
	t.Helper()
	dir := t.TempDir()
	input := qualifyingRows(t, dir, n)
	results := filepath.Join(dir, "results.csv")
	args := append([]string{"upload"}, s.args()...)
	args = append(args, "--results", results, "--rate", "0", "--progress", "off", "--max-attempts", "1", "--max-consecutive-failures", "0", input)
	s.Refuse.Store(true)
	res := runCLI(t, secretEnv(), args...)
	s.Refuse.Store(false)
	if res.code != app.ExitRowsFailed {
		t.Fatalf("first run exit = %d, want %d\n%s", res.code, app.ExitRowsFailed, res.stderr)
	}
	for row, r := range finalByRow(t, results, n) {
		if r["status"] != "failed" || strings.HasPrefix(r["note"], "[ambiguous:") {
			t.Fatalf("row %d ended %s, note %q; want failed, a plain failure", row, r["status"], r["note"])
		}
	}
	if got := s.Stats().CreatesAnswered(); got != 0 {
		t.Fatalf("the service processed %d createLead calls in the first run, want none", got)
	}
	return args, results
}

// resumeSubmitsAll runs --resume against the plain service and wants every
// row's own lead submitted, once.
func resumeSubmitsAll(t *testing.T, s *alteringSim, args []string, results string, n int) {
	t.Helper()
	s.On.Store(false)
	input := args[len(args)-1]
	res := runCLI(t, secretEnv(), append(args[:len(args)-1:len(args)-1], "--resume", input)...)
	if res.code != app.ExitOK {
		t.Errorf("last --resume exit = %d, want 0\n%s", res.code, res.stderr)
	}
	for row, r := range finalByRow(t, results, n) {
		if r["status"] != "submitted" {
			t.Errorf("row %d ended %s: note %q; want its own lead, created by the run that was cut off, submitted", row, r["status"], r["note"])
		}
	}
	if got := s.Stats().Submissions; got != n {
		t.Errorf("the service holds %d submissions, want %d", got, n)
	}
}

// TestUploadResumeKilledMidCall is issue 18 item 2: run 1 ends rows failed
// after 503s; run 2 (--resume) sends them again, the service creates the
// leads, and run 2 is killed (kill -9) before any answer is journalled; run
// 3 finds each row's last line still failed, gets "Duplicate of lead X",
// and must check that X is the row's own and submit it.
func TestUploadResumeKilledMidCall(t *testing.T) {
	t.Parallel()
	const n = 3
	s := startAlteringSim(t, leadsim.Options{}, func(_ string, r reply) (reply, time.Duration) {
		return r, 10 * time.Minute // processed; the answer never comes
	})
	s.On.Store(false)
	args, results := failedFirst(t, s, n)

	s.On.Store(true)
	input := args[len(args)-1]
	cmd, out := subprocess(t, append(args[:len(args)-1:len(args)-1], "--resume", input)...)
	deadline := time.Now().Add(60 * time.Second)
	for s.Stats().CreatesAnswered() < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if got := s.Stats().CreatesAnswered(); got != n {
		t.Fatalf("the service processed %d createLead calls in the killed run, want %d\n%s", got, n, out)
	}
	resumeSubmitsAll(t, s, args, results, n)
}

// TestUploadResumeFullDisk is issue 18 item 2 with a full disk: run 2
// (--resume) sends the failed rows again, the service creates the leads,
// and the journal cannot record the answers (every write past the file's
// size fails, as on a full disk). Run 3 must check each duplicate answer
// and submit the row's own lead.
func TestUploadResumeFullDisk(t *testing.T) {
	t.Parallel()
	const n = 3
	s := startAlteringSim(t, leadsim.Options{}, nil)
	s.On.Store(false)
	args, results := failedFirst(t, s, n)
	fi, err := os.Stat(results)
	if err != nil {
		t.Fatal(err)
	}

	input := args[len(args)-1]
	// No ledger: its file would meet the full disk first and stop the run
	// before it sends (as it should); this test is the journal's.
	cmd, out := subprocessEnv(t, []string{"BULKLOAD_TEST_FILE_SIZE_LIMIT=" + strconv.FormatInt(fi.Size(), 10), "BULKLOAD_LEDGER=off"}, append(args[:len(args)-1:len(args)-1], "--resume", input)...)
	err = cmd.Wait()
	if err == nil {
		t.Fatalf("the run with a full disk exited 0\n%s", out)
	}
	if got := s.Stats().CreatesAnswered(); got == 0 {
		t.Fatalf("the service processed no createLead in the run with a full disk: the test tests nothing\n%s", out)
	}
	resumeSubmitsAll(t, s, args, results, n)
}
