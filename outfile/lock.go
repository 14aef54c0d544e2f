package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrLocked is wrapped by Lock's error when another process holds the lock
// of the results file: two runs on one results file would send every lead
// twice and interleave the journal.
var ErrLocked = errors.New("results file in use by another run")

// LockPath is the lock file of the results file at path: NAME.lock beside
// it. It exists while a run holds the lock and names that run's process.
func LockPath(path string) string { return path + ".lock" }

// FileLock is the exclusive lock of one results file, held for a run. The
// owner calls Unlock; if the process dies, the OS releases the lock.
type FileLock struct {
	f    *os.File
	path string
}

// Lock takes the exclusive advisory lock (flock) of the results file at path
// for this process, without waiting. The lock is on a file of its own,
// LockPath(path), because compaction renames a new file over the results
// file, and a lock on the old one would not keep out a run that opens the
// new one. The lock file holds this process's id, start time and command,
// so that a second run can say which process holds it; when the lock is
// held, the error wraps ErrLocked and names that process.
func Lock(path, command string) (*FileLock, error) {
	lp := LockPath(path)
	for range 10 {
		// Never through a planted link, nor into another user's file.
		f, err := OpenOwned(lp, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			if dir := filepath.Dir(path); errors.Is(err, fs.ErrNotExist) && !exists(dir) {
				return nil, fmt.Errorf("lock results file %s: the directory %s does not exist: %w", path, dir, err)
			}
			return nil, fmt.Errorf("lock results file %s: %w", path, err)
		}
		held, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock results file %s: %w", path, err)
		}
		if held {
			owner := readOwner(f)
			f.Close()
			return nil, fmt.Errorf("%w: %s is locked by %s (lock file %s)", ErrLocked, path, owner, lp)
		}
		// The run that held it may have removed the lock file between our
		// open and our lock: then we locked a file nobody else will open.
		// Lock the one at the path instead.
		if same, err := sameFile(f, lp); err != nil || !same {
			f.Close()
			continue
		}
		info := fmt.Sprintf("pid=%d started=%s command=%s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339), command)
		if err := errors.Join(f.Truncate(0), writeAt(f, info)); err != nil {
			unlock(f)
			f.Close()
			return nil, fmt.Errorf("lock results file %s: write lock file %s: %w", path, lp, err)
		}
		return &FileLock{f: f, path: lp}, nil
	}
	return nil, fmt.Errorf("lock results file %s: lock file %s keeps being replaced", path, lp)
}

func writeAt(f *os.File, s string) error {
	_, err := f.WriteAt([]byte(s), 0)
	return err
}

func sameFile(f *os.File, path string) (bool, error) {
	a, err := f.Stat()
	if err != nil {
		return false, err
	}
	b, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return os.SameFile(a, b), nil
}

// readOwner describes the process a lock file names ("process 1234
// (bulkload upload, started 2026-01-02T03:04:05Z)").
func readOwner(f *os.File) string {
	b := make([]byte, 512)
	n, _ := f.ReadAt(b, 0)
	fields := map[string]string{}
	for kv := range strings.FieldsSeq(string(b[:n])) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			fields[k] = v
		}
	}
	pid, err := strconv.Atoi(fields["pid"])
	if err != nil {
		return "another process (it has not written its id yet)"
	}
	return fmt.Sprintf("process %d (bulkload %s, started %s)", pid, fields["command"], fields["started"])
}

// Unlock removes the lock file and releases the lock. It may be called more
// than once.
func (l *FileLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	// Remove before unlocking: a run waiting on this file finds, once it
	// gets the lock, that the path names another file (or none) and
	// starts over on the path.
	err := os.Remove(l.path)
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// exists reports whether anything is at path.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
