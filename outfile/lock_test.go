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
