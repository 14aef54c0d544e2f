// Package simproc starts and stops `bulkload sim` in a process of its own,
// and gives an upload the flags and environment that connect it to that
// simulator: what the bench drivers (concbench, ratebench, hangbench)
// share.
package simproc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// The simulator's credentials (leadsim's defaults).
const (
	tenantID     = "sim-tenant"
	clientID     = "bulkload-sim-client"
	appID        = "sim-debt-core"
	clientSecret = "bulkload-sim-secret"
)

// Sim is a running `bulkload sim`.
type Sim struct {
	// Base is its root URL, http://ADDR.
	Base string
	// Started is when its process started: the clock of its timed changes
	// (--rate-limit-change, --capacity-change).
	Started time.Time

	cmd *exec.Cmd
	log *os.File
}

// Start starts `BIN sim --addr ADDR --log-level warn ARGS...`, its output
// to a new file at logPath, and waits until it listens on addr (10 s at
// most). It refuses an addr something already listens on.
func Start(ctx context.Context, bin, addr string, args []string, logPath string) (*Sim, error) {
	if conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
		conn.Close()
		_, port, _ := net.SplitHostPort(addr)
		return nil, fmt.Errorf("port %s is already in use: stop what listens there or pass -port", port)
	}
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"sim", "--addr", addr, "--log-level", "warn"}, args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start simulator: %w", err)
	}
	s := &Sim{Base: "http://" + addr, Started: time.Now(), cmd: cmd, log: log}
	if err := WaitPort(addr, 10*time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Stop ends the simulator: SIGTERM, then SIGKILL if it has not ended
// within 5 s. It closes the log file.
func (s *Sim) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	s.log.Close()
}

// WaitPort waits until something listens on addr, within the given time.
func WaitPort(addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			conn.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the simulator did not listen on %s within %v", addr, within)
}

// UploadArgs returns `upload` and the flags that connect it to the
// simulator at base (http://ADDR): endpoint, token URL, tenant, client and
// application. The secret goes in the environment (Env), never on the
// command line.
func UploadArgs(base string) []string {
	return []string{"upload", "--endpoint", base + "/graphql", "--auth-url", base,
		"--tenant-id", tenantID, "--client-id", clientID, "--app-id", appID}
}

// Env returns this process's environment with the simulator's client
// secret (BULKLOAD_CLIENT_SECRET) and then extra (NAME=value).
func Env(extra ...string) []string {
	return append(append(os.Environ(), "BULKLOAD_CLIENT_SECRET="+clientSecret), extra...)
}

// ExitCode is the exit status of a process that Wait or Run returned err
// for; -1 if it did not exit (it could not be started or waited for).
func ExitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	default:
		return -1
	}
}
