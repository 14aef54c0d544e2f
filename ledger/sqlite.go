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

func (d *sqliteDialect) hold(_ context.Context, _ *sql.DB, id int64) (func(), error) {
	l, err := outfile.Lock(d.runLock(id), "upload")
	if err != nil {
		return nil, fmt.Errorf("hold the run's lock: %w", err)
	}
	return func() { _ = l.Unlock() }, nil
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
