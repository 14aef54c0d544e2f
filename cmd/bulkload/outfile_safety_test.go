//go:build unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
)

// TestPlantedLinksNeverFollowed is issue 18 item 8: in a shared runs
// directory, a link planted at an output's path (--results, --rejects,
// --summary-json, --metrics-file, the results file's lock, a resumed
// results file) must not have its target written. The run is refused
// before anything is sent, or writes a new file in the link's place; the
// target is untouched either way.
func TestPlantedLinksNeverFollowed(t *testing.T) {
	t.Parallel()
	input := filepath.Join(samples, "leads.csv")
	for _, tc := range []struct {
		name   string
		plant  string // which output's path gets the link
		resume bool
	}{
		{"results", "results.csv", false},
		{"resumed results", "results.csv", true},
		{"rejects", "rejects.csv", false},
		{"summary json", "summary.json", false},
		{"metrics file", "bulkload.prom", false},
		{"lock file", "results.csv.lock", false},
		{"meta file", "results.csv.meta", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startTestSim(t, leadsim.Options{})
			dir := t.TempDir()
			victim := filepath.Join(t.TempDir(), "victim")
			if err := os.WriteFile(victim, []byte("victim\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, filepath.Join(dir, tc.plant)); err != nil {
				t.Fatal(err)
			}
			args := slices.Concat([]string{"upload"}, s.args(), []string{
				"--results", filepath.Join(dir, "results.csv"),
				"--rejects", filepath.Join(dir, "rejects.csv"),
				"--summary-json", filepath.Join(dir, "summary.json"),
				"--metrics-file", filepath.Join(dir, "bulkload.prom"),
				"--progress", "off", "--rate", "0",
			})
			if tc.resume {
				args = append(args, "--resume")
			}
			res := runCLI(t, secretEnv(), append(args, input)...)
			if b, _ := os.ReadFile(victim); string(b) != "victim\n" {
				t.Errorf("the link's target now holds %d bytes (%.40q...), want it untouched\nexit %d\n%s", len(b), b, res.code, res.stderr)
			}
			if st, err := os.Stat(victim); err == nil && st.Mode().Perm() != 0o644 {
				t.Errorf("the link's target's mode changed to %v", st.Mode().Perm())
			}
			if res.code != app.ExitOK && res.code != app.ExitRowsFailed {
				if res.code != app.ExitUsage {
					t.Errorf("exit %d, want the run refused with %d or done\n%s", res.code, app.ExitUsage, res.stderr)
				}
				if n := len(s.Stats().CreateCalls); n > 0 {
					t.Errorf("a refused run sent %d leads", n)
				}
			}
		})
	}
}

// TestPreCreatedRejectsGetsNoPII is issue 18 item 8's second repro: another
// user pre-creates export.rejects.csv with mode 0666 and keeps it open.
// bulkload must not write SSNs or dates of birth into that file: the run
// writes a new file of its own, mode 0600, and the planted one stays empty.
// A file owned by another user is refused outright (checked when the test
// runs as root, which can make one).
func TestPreCreatedRejectsGetsNoPII(t *testing.T) {
	t.Parallel()
	// leads.csv with row 2's e-mail broken: it is rejected, SSN and all.
	b, err := os.ReadFile(filepath.Join(samples, "leads.csv"))
	if err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(t.TempDir(), "export.csv")
	b = []byte(strings.Replace(string(b), "wei_miller2@icloud.com", "not-an-email", 1))
	if err := os.WriteFile(input, b, 0o600); err != nil {
		t.Fatal(err)
	}
	pii := []string{"639991338", "1989-09-15"}
	owners := []int{os.Geteuid()}
	if os.Geteuid() == 0 {
		owners = append(owners, 65534)
	}
	for _, owner := range owners {
		dir := t.TempDir()
		rejects := filepath.Join(dir, "export.rejects.csv")
		if err := os.WriteFile(rejects, nil, 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(rejects, 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(rejects, owner, owner); err != nil {
			t.Fatal(err)
		}
		planted, err := os.Open(rejects) // the planter's descriptor
		if err != nil {
			t.Fatal(err)
		}
		defer planted.Close()
		res := runCLI(t, nil, "validate", "--results", filepath.Join(dir, "r.csv"), "--rejects", rejects, input)
		got, _ := io.ReadAll(planted)
		if len(got) > 0 {
			t.Errorf("owner %d: the pre-created rejects file received %d bytes", owner, len(got))
		}
		assertNoSensitive(t, "the pre-created rejects file", string(got), pii)
		if owner != os.Geteuid() {
			if res.code != app.ExitUsage || !strings.Contains(res.stderr, "belongs to user id") {
				t.Errorf("rejects file of another user: exit %d, want %d naming its owner\n%s", res.code, app.ExitUsage, res.stderr)
			}
			continue
		}
		st, err := os.Stat(rejects)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("rejects mode %v, want 0600", st.Mode().Perm())
		}
		if b, _ := os.ReadFile(rejects); !strings.Contains(string(b), pii[0]) {
			t.Errorf("validate wrote no rejected row (exit %d)\n%s", res.code, res.stderr)
		}
	}
}
