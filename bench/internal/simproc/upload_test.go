package simproc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startSh starts `sh -c script` as an upload, its output to a file of the
// test's own.
func startSh(t *testing.T, script string) *Upload {
	t.Helper()
	up, err := StartUpload(context.Background(), "sh", []string{"-c", script}, []string{"A=b"}, filepath.Join(t.TempDir(), "upload.log"))
	if err != nil {
		t.Fatal(err)
	}
	return up
}

func TestUploadEndsByItself(t *testing.T) {
	up := startSh(t, `echo "ran with A=$A"; exit 3`)
	if got := up.Wait(time.Minute); got != 3 {
		t.Errorf("Wait = %d, want the exit status 3", got)
	}
	if up.State() == nil || up.State().ExitCode() != 3 {
		t.Errorf("State() = %v after Wait, want exit status 3", up.State())
	}
	b, err := os.ReadFile(up.Log)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != "ran with A=b" {
		t.Errorf("the upload's log holds %q, want its output in the environment given", got)
	}
}

func TestUploadInterruptedThenKilled(t *testing.T) {
	// The first SIGINT is answered (exit 7); a process that ignores it is
	// killed once the grace has passed.
	up := startSh(t, `trap 'exit 7' INT; echo ready; while :; do sleep 0.05; done`)
	waitFor(t, up.Log, "ready")
	up.Interrupt()
	if got := up.Wait(time.Minute); got != 7 {
		t.Errorf("Wait after Interrupt = %d, want 7 (the script's answer to SIGINT)", got)
	}
	deaf := startSh(t, `trap '' INT; echo ready; while :; do sleep 0.05; done`)
	waitFor(t, deaf.Log, "ready")
	deaf.Interrupt()
	if got := deaf.Wait(100 * time.Millisecond); got != -1 {
		t.Errorf("Wait of an upload deaf to SIGINT = %d, want -1 (killed)", got)
	}
}

func TestStartUploadNoBinary(t *testing.T) {
	_, err := StartUpload(context.Background(), filepath.Join(t.TempDir(), "bulkload"), nil, nil, filepath.Join(t.TempDir(), "upload.log"))
	if err == nil || !strings.Contains(err.Error(), "start upload") {
		t.Errorf("StartUpload of a missing binary: %v, want start upload: ...", err)
	}
}

// waitFor waits until the file at path holds text (a script's signal that
// it is ready).
func waitFor(t *testing.T, path, text string) {
	t.Helper()
	for range 1000 {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), text) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never held %q", path, text)
}
