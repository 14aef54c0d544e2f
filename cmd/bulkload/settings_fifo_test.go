//go:build unix

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulkload/bulkload/app"
	"github.com/bulkload/bulkload/leadsim"
	"github.com/bulkload/bulkload/token"
)

// TestSettingsFIFORefused is issue 18 item 11: --client-secret-file,
// --config or --mapping naming a FIFO that nobody writes to used to block
// the run for good, deaf to SIGINT and SIGTERM. bulkload runs as a process
// here: it must exit 2 at once, naming the setting, having sent nothing.
func TestSettingsFIFORefused(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	for _, flag := range []string{"--client-secret-file", "--config", "--mapping"} {
		t.Run(flag, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "setting")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			args := slices.Concat([]string{"upload"}, s.args(), []string{flag, fifo,
				"--results", filepath.Join(dir, "r.csv"), "--progress", "off", filepath.Join(samples, "leads.csv")})
			cmd, out := subprocess(t, args...)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Signal(syscall.SIGTERM)
				select {
				case <-done:
					t.Fatalf("%s FIFO: the run waited on the FIFO until SIGTERM\n%s", flag, out)
				case <-time.After(5 * time.Second):
					_ = cmd.Process.Kill()
					<-done
					t.Fatalf("%s FIFO: the run waited on the FIFO and ignored SIGTERM\n%s", flag, out)
				}
			}
			if code := cmd.ProcessState.ExitCode(); code != app.ExitUsage || !strings.Contains(out.String(), "not a regular file") {
				t.Errorf("%s FIFO: exit %d, want %d saying it is not a regular file\n%s", flag, code, app.ExitUsage, out)
			}
			if n := len(s.Stats().CreateCalls); n > 0 {
				t.Errorf("%d leads sent", n)
			}
		})
	}
}

// TestSecretFileReadableByOthersWarned: a secret file that group or others
// can read is used, with a warning saying so and how to fix it.
func TestSecretFileReadableByOthersWarned(t *testing.T) {
	t.Parallel()
	s := startTestSim(t, leadsim.Options{})
	dir := t.TempDir()
	for _, tc := range []struct {
		mode os.FileMode
		warn bool
	}{{0o600, false}, {0o640, true}, {0o644, true}} {
		secret := filepath.Join(dir, "secret")
		if err := os.WriteFile(secret, []byte(simSecret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(secret, tc.mode); err != nil {
			t.Fatal(err)
		}
		res := runCLI(t, nil, "auth", "check", "--token-url", token.URL(s.url, leadsim.DefaultTenantID),
			"--client-id", leadsim.DefaultClientID, "--app-id", leadsim.DefaultAppID, "--client-secret-file", secret)
		if res.code != app.ExitOK {
			t.Fatalf("mode %04o: exit %d\n%s", tc.mode, res.code, res.stderr)
		}
		if got := strings.Contains(res.stderr, "chmod 600"); got != tc.warn {
			t.Errorf("mode %04o: warned %v, want %v\n%s", tc.mode, got, tc.warn, res.stderr)
		}
	}
}
