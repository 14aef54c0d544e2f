package ledger

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestStaleRunLocksSwept: two runs killed with SIGKILL leave their lock
// files (NAME.run-ID.lock) beside the ledger; a run removes them when it
// begins, and keeps the lock of a run that is alive.
func TestStaleRunLocksSwept(t *testing.T) {
	if where := os.Getenv("LEDGER_TEST_BEGIN"); where != "" {
		// The run to be killed: it begins, says so, and waits.
		l, err := Open(context.Background(), Config{Where: where})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.BeginRun(context.Background(), RunInfo{Account: acct, Command: "upload", Input: "leads.csv"}, ClaimPolicy{}); err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("begun\n")
		select {}
	}
	dir := t.TempDir()
	where := filepath.Join(dir, "ledger.sqlite")
	l := open(t, where)
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStaleRunLocksSwept$")
		cmd.Env = append(os.Environ(), "LEDGER_TEST_BEGIN="+where)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		cmd.Process.Kill()
		cmd.Wait()
		if line != "begun\n" {
			t.Fatalf("the run to kill said %q, want begun", line)
		}
	}
	// Each run begun removes the killed runs' locks before it: the
	// second killed run the first's, the live run the second's.
	live := begin(t, l, ClaimPolicy{})
	name := filepath.Base(where) + ".run-" + strconv.FormatInt(live.ID, 10) + ".lock"
	if got := runLocks(t, dir); !slices.Equal(got, []string{name}) {
		t.Errorf("lock files after two killed runs and a live one began: %q, want only the live run's %s", got, name)
	}
	next := begin(t, l, ClaimPolicy{})
	if got := runLocks(t, dir); len(got) != 2 || !slices.Contains(got, name) {
		t.Errorf("lock files after another run began: %q, want the live run's %s and its own", got, name)
	}
	end(t, next)
	end(t, live)
	if got := runLocks(t, dir); len(got) != 0 {
		t.Errorf("lock files after every run ended: %q, want none", got)
	}
}

// runLocks lists the run lock files in dir, sorted.
func runLocks(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.Contains(e.Name(), ".run-") && strings.HasSuffix(e.Name(), ".lock") {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}
