package simproc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// Upload is a running `bulkload upload`.
type Upload struct {
	// Log is the file its output goes to.
	Log string
	// Started is when its process started.
	Started time.Time
	// Done receives the error of its Wait once, when it has ended (Watch
	// puts back what it takes).
	Done chan error

	cmd *exec.Cmd
}

// StartUpload starts BIN ARGS... (UploadArgs, then the upload's own flags
// and its input) in the environment env, its output to a new file at
// logPath, which is closed once the process has ended.
func StartUpload(ctx context.Context, bin string, args, env []string, logPath string) (*Upload, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start upload: %w", err)
	}
	u := &Upload{Log: logPath, Started: time.Now(), Done: make(chan error, 1), cmd: cmd}
	go func() {
		err := cmd.Wait()
		log.Close()
		u.Done <- err
	}()
	return u, nil
}

// Interrupt sends the upload SIGINT, as an operator's Ctrl-C.
func (u *Upload) Interrupt() { _ = u.cmd.Process.Signal(os.Interrupt) }

// Kill ends the upload at once (SIGKILL).
func (u *Upload) Kill() { _ = u.cmd.Process.Kill() }

// Wait waits until the upload has ended, and kills it if it has not within
// grace; it returns the exit status (ExitCode).
func (u *Upload) Wait(grace time.Duration) int {
	select {
	case err := <-u.Done:
		return ExitCode(err)
	case <-time.After(grace):
		u.Kill()
		return ExitCode(<-u.Done)
	}
}

// State is the ended upload's state (its rusage): nil before Wait or Done
// has reported its end.
func (u *Upload) State() *os.ProcessState { return u.cmd.ProcessState }
