package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"modernc.org/sqlite"

	"github.com/bulkload/bulkload/outfile"
)

// SQLite result codes (the primary code, the low byte of an extended one)
// that Open and the statements turn into the package's errors.
const (
	sqliteBusy    = 5
	sqliteLocked  = 6
	sqliteCorrupt = 11
	sqliteNotADB  = 26
)

// sqliteDialect is the SQLite store: one file, opened with WAL and
// synchronous=NORMAL (a commit survives the process's death, as the
// results journal's lines do; a power loss may lose the last commits but
// never breaks the file), every transaction BEGIN IMMEDIATE (it takes the
// write lock at once, so claims never deadlock on an upgrade), and a busy
// timeout for another process's transaction.
type sqliteDialect struct {
	path string
}

// openSQLite opens the ledger file at path, creating it with mode 0600
// (and its folder, 0700) when it does not exist. An existing file must be
// a regular file of the running user's with no other hard link (a planted
// link must not receive the leads' ids); a wider mode is narrowed to 0600.
func openSQLite(path string, busy time.Duration) (*sql.DB, dialect, error) {
	if strings.ContainsAny(path, "?#") {
		return nil, nil, fmt.Errorf("a ledger path may not contain ? or #")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("create its folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrExist) {
		f, err = outfile.OpenOwned(path, os.O_RDWR, 0o600)
	}
	if err != nil {
		return nil, nil, err
	}
	// SQLite opens the file itself; a descriptor of ours left open
	// would drop its POSIX locks when closed later.
	if err := f.Close(); err != nil {
		return nil, nil, err
	}
	dsn := path + "?_busy_timeout=" + strconv.FormatInt(busy.Milliseconds(), 10) +
		"&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate&_foreign_keys=1"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, nil, err
	}
	// One connection: this process's transactions on the file queue in
	// database/sql instead of meeting SQLite's lock; other processes'
	// wait for the busy timeout.
	db.SetMaxOpenConns(1)
	return db, &sqliteDialect{path: path}, nil
}

func (*sqliteDialect) name() string           { return "sqlite" }
func (*sqliteDialect) rebind(q string) string { return q }
func (*sqliteDialect) forUpdate() string      { return "" }
func (*sqliteDialect) migrations() []string {
	return migrations("INTEGER PRIMARY KEY AUTOINCREMENT", " WITHOUT ROWID")
}
func (*sqliteDialect) lockSchema(context.Context, *sql.Tx) error { return nil } // BEGIN IMMEDIATE holds the file

// runLock names the lock (outfile.Lock) whose flock shows that run id is
// alive: its file is NAME.run-ID.lock beside the ledger.
func (d *sqliteDialect) runLock(id int64) string {
	return d.path + ".run-" + strconv.FormatInt(id, 10)
}

// hold takes run id's lock and then removes the locks of dead runs
// (sweep). Only a check of whether a run is alive (alive, sweep) ever
// holds another run's lock, for as long as a flock takes: the lock of a
// run that is only now starting is tried again for a while.
func (d *sqliteDialect) hold(ctx context.Context, _ *sql.DB, id int64) (func(), error) {
	var l *outfile.FileLock
	var err error
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		l, err = outfile.Lock(d.runLock(id), "upload")
		if !errors.Is(err, outfile.ErrLocked) || wait >= 100*time.Millisecond {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("hold the run's lock: %w", err)
	}
	d.sweep(ctx, id)
	return func() { _ = l.Unlock() }, nil
}

// sweep removes the lock files of dead runs beside the ledger
// (NAME.run-ID.lock): a run removes its own when it ends, but one killed
// (SIGKILL, the OOM killer, a power cut) leaves it, and a later run
// removes it only when it meets one of that run's leads. Without the
// sweep they would pile up in the state folder, one a killed run. A lock
// file a live run holds stays; one that cannot be checked is left for the
// next run.
func (d *sqliteDialect) sweep(ctx context.Context, own int64) {
	dir, base := filepath.Split(d.path)
	entries, err := os.ReadDir(filepath.Clean(dir))
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base+".run-")
		if !ok {
			continue
		}
		n, ok := strings.CutSuffix(rest, ".lock")
		id, err := strconv.ParseInt(n, 10, 64)
		if !ok || err != nil || id == own || id <= 0 || ctx.Err() != nil {
			continue
		}
		_, _ = d.alive(ctx, nil, id)
	}
}

// alive reports whether run id's process still holds its flock. A lock
// file nobody holds is a dead run's: it is removed on the way.
func (d *sqliteDialect) alive(_ context.Context, _ querier, id int64) (bool, error) {
	p := d.runLock(id)
	if _, err := os.Lstat(outfile.LockPath(p)); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	l, err := outfile.Lock(p, "check")
	switch {
	case errors.Is(err, outfile.ErrLocked):
		return true, nil
	case err != nil:
		return false, err
	}
	return false, l.Unlock()
}

func (d *sqliteDialect) classify(err error) error {
	var se *sqlite.Error
	if err == nil || !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff {
	case sqliteBusy, sqliteLocked:
		return fmt.Errorf("%w (it waited for its write lock in vain: another run's transaction, or a program holding the file): %w", ErrLocked, err)
	case sqliteCorrupt, sqliteNotADB:
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return err
}
