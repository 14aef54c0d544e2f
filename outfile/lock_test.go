package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestLockIsExclusiveAndNamesTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.csv")
	l, err := Lock(path, "upload")
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	_, err = Lock(path, "validate")
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second Lock = %v, want ErrLocked naming process %d", err, os.Getpid())
	}
	if err := l.Unlock(); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if _, err := os.Stat(LockPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left after Unlock: %v", err)
	}
	l2, err := Lock(path, "upload")
	if err != nil {
		t.Fatalf("Lock after Unlock: %v", err)
	}
	if err := l2.Unlock(); err != nil {
		t.Fatal(err)
	}
}

// TestLockErrorNamesThePathOnce: a lock that cannot be taken says so with
// the lock file's path once ("open X.lock: open X.lock: ..." repeated it),
// and a missing directory is named as such.
func TestLockErrorNamesThePathOnce(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link.results.csv")
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), LockPath(link)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"missing directory", filepath.Join(dir, "nowhere", "x.results.csv"), "the directory " + filepath.Join(dir, "nowhere") + " does not exist"},
		{"a link planted as the lock file", link, "it is a symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Lock(tc.path, "upload")
			if err == nil {
				l.Unlock()
				t.Fatalf("Lock(%s) = nil error, want one", tc.path)
			}
			msg := err.Error()
			if n := strings.Count(msg, LockPath(tc.path)); n != 1 {
				t.Errorf("Lock(%s) = %q: names the lock file %d times, want once", tc.path, msg, n)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("Lock(%s) = %q, want it to say %q", tc.path, msg, tc.want)
			}
		})
	}
}
