package simproc

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets this test binary stand in for `bulkload sim` where
// SIMPROC_FAKE_SIM is set (fakeSim).
func TestMain(m *testing.M) {
	if os.Getenv("SIMPROC_FAKE_SIM") != "" {
		os.Exit(fakeSim(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeSim writes its arguments to stdout (the simulator's log), listens
// on the address after --addr until SIGTERM, and returns 0.
func fakeSim(args []string) int {
	os.Stdout.WriteString(strings.Join(args, " ") + "\n")
	addr := ""
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--addr" {
			addr = args[i+1]
		}
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		os.Stdout.WriteString(err.Error() + "\n")
		return 2
	}
	<-term
	ln.Close()
	return 0
}

// freeAddr returns a loopback address nothing listens on (a moment ago).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestStartAndStop(t *testing.T) {
	t.Setenv("SIMPROC_FAKE_SIM", "1")
	addr := freeAddr(t)
	logPath := filepath.Join(t.TempDir(), "sim.log")
	sim, err := Start(context.Background(), os.Args[0], addr, []string{"--capacity", "8"}, logPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://" + addr; sim.Base != want {
		t.Errorf("Base = %q, want %q", sim.Base, want)
	}
	if conn, err := net.Dial("tcp", addr); err != nil {
		t.Errorf("after Start nothing listens on %s: %v", addr, err)
	} else {
		conn.Close()
	}
	sim.Stop()
	if st := sim.cmd.ProcessState; st == nil || !st.Exited() || st.ExitCode() != 0 {
		t.Errorf("after Stop the simulator's state is %v, want exited 0 (it ends on SIGTERM)", st)
	}
	if conn, err := net.Dial("tcp", addr); err == nil {
		conn.Close()
		t.Errorf("after Stop something still listens on %s", addr)
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(b)), "sim --addr "+addr+" --log-level warn --capacity 8"; got != want {
		t.Errorf("the simulator's arguments (its log) = %q, want %q", got, want)
	}
}

func TestStartRefusesAPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	logPath := filepath.Join(t.TempDir(), "sim.log")
	_, err = Start(context.Background(), "/nonexistent/bulkload", ln.Addr().String(), nil, logPath)
	if err == nil || !strings.Contains(err.Error(), "port "+port+" is already in use") {
		t.Errorf("Start on a port in use: %v, want port %s is already in use", err, port)
	}
	if _, err := os.Stat(logPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Start on a port in use left a log file (stat: %v)", err)
	}
}

func TestStartNoBinary(t *testing.T) {
	_, err := Start(context.Background(), filepath.Join(t.TempDir(), "bulkload"), freeAddr(t), nil, filepath.Join(t.TempDir(), "sim.log"))
	if err == nil || !strings.Contains(err.Error(), "start simulator") {
		t.Errorf("Start of a missing binary: %v, want start simulator: ...", err)
	}
}

func TestWaitPortGivesUp(t *testing.T) {
	addr := freeAddr(t)
	if err := WaitPort(addr, 10*time.Millisecond); err == nil || !strings.Contains(err.Error(), "did not listen on "+addr) {
		t.Errorf("WaitPort(%s) with nothing listening: %v", addr, err)
	}
}

func TestUploadArgsAndEnv(t *testing.T) {
	args := strings.Join(UploadArgs("http://127.0.0.1:1"), " ")
	want := "upload --endpoint http://127.0.0.1:1/graphql --auth-url http://127.0.0.1:1" +
		" --tenant-id sim-tenant --client-id bulkload-sim-client --app-id sim-debt-core"
	if args != want {
		t.Errorf("UploadArgs = %q, want %q", args, want)
	}
	if strings.Contains(args, clientSecret) {
		t.Errorf("UploadArgs %q holds the client secret: it belongs in the environment", args)
	}
	env := Env("BULKLOAD_LEDGER=off")
	if n := len(env); n < 2 || env[n-2] != "BULKLOAD_CLIENT_SECRET=bulkload-sim-secret" || env[n-1] != "BULKLOAD_LEDGER=off" {
		t.Errorf("Env ends %q, want the secret then BULKLOAD_LEDGER=off", env[max(0, len(env)-2):])
	}
}

func TestExitCode(t *testing.T) {
	exit3 := exec.Command("sh", "-c", "exit 3").Run()
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{exit3, 3},
		{errors.New("not started"), -1},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
