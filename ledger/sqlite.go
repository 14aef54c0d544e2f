package ledger

import (
	"context"
	"database/sql"
	"database/sql/driver"
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

// sqliteChunks are the row counts of the many-row statements, largest
// first: a batch is written as statements of these sizes, each prepared
// once (compiling a statement for each lead cost more than running it).
func sqliteChunks() [3]int { return [3]int{claimChunk, 8, 1} }

// sqliteChunk is the index in sqliteChunks of the largest size not over n.
func sqliteChunk(n int) int {
	sizes := sqliteChunks()
	for i, size := range sizes {
		if size <= n {
			return i
		}
	}
	return len(sizes) - 1
}

// sqliteBatch is the SQLite store's batcher: for each chunk size the
// claims' insert and the answers' upsert, prepared on the driver's
// connection the first time it is met, and their arguments, reused from
// one statement to the next. The values every row of the run has (its
// account, its id, a claim's state) are in the statements' text, the
// others are plain ?s, one for each value of each row: modernc.org/sqlite
// binds each parameter apart, and looks a numbered parameter's name up
// for each (a statement of 64 answers with its shared values numbered
// cost half again the ledger's CPU).
type sqliteBatch struct {
	acct, run int64
	// runV is run, boxed once.
	runV any
	// dc is the connection the statements were prepared on; nil: none.
	// A connection database/sql closed (it broke) took its statements
	// with it: they are prepared anew on the next.
	dc               any
	claimIns, answer [3]driver.Stmt
	args             []driver.NamedValue
}

func (d *sqliteDialect) batcher(account, run int64) batcher {
	return &sqliteBatch{acct: account, run: run, runV: run}
}

func (b *sqliteBatch) claimChunk(n int) int  { return sqliteChunks()[sqliteChunk(n)] }
func (b *sqliteBatch) answerChunk(n int) int { return sqliteChunks()[sqliteChunk(n)] }

// prepare prepares the statements on dc, unless they are.
func (b *sqliteBatch) prepare(ctx context.Context, dc any) error {
	if dc != nil && b.dc == dc {
		return nil
	}
	b.dc = nil
	p, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return fmt.Errorf("the SQLite driver's connection (%T) prepares no statement", dc)
	}
	b.claimIns, b.answer = [3]driver.Stmt{}, [3]driver.Stmt{}
	claimRow := fmt.Sprintf("(%d, ?, ?, ?, '%s', %d, ?, ?)", b.acct, StateClaimed, b.run)
	answerRow := fmt.Sprintf("(%d, ?, ?, ?, ?, ?, ?, ?, ?, %d, ?, ?, ?, ?, ?)", b.acct, b.run)
	for i, n := range sqliteChunks() {
		var err error
		if b.claimIns[i], err = p.PrepareContext(ctx, `INSERT INTO leads (`+claimCols+`) VALUES `+repeatRow(claimRow, n)+` ON CONFLICT (account_id, lead_key) DO NOTHING`); err == nil {
			b.answer[i], err = p.PrepareContext(ctx, `INSERT INTO leads (`+answerCols+`) VALUES `+repeatRow(answerRow, n)+answerSet)
		}
		if err != nil {
			b.dc = dc
			b.close(dc)
			return err
		}
	}
	b.dc = dc
	return nil
}

func (b *sqliteBatch) add(v any) {
	b.args = append(b.args, driver.NamedValue{Ordinal: len(b.args) + 1, Value: v})
}

// exec runs the statement of rows rows of stmts with the arguments added,
// and returns the rows it changed.
func (b *sqliteBatch) exec(ctx context.Context, stmts *[3]driver.Stmt, rows int) (int64, error) {
	defer func() { clear(b.args); b.args = b.args[:0] }()
	i := sqliteChunk(rows)
	if sqliteChunks()[i] != rows {
		return 0, fmt.Errorf("no statement of %d rows", rows)
	}
	res, err := stmts[i].(driver.StmtExecContext).ExecContext(ctx, b.args)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (b *sqliteBatch) claims(ctx context.Context, dc any, items []ClaimItem, now int64) (int64, error) {
	if err := b.prepare(ctx, dc); err != nil {
		return 0, err
	}
	at := any(now)
	for _, it := range items {
		b.add(it.Key.Lead)
		b.add(it.Key.LeadID)
		b.add(it.Key.Hash)
		b.add(int64(it.Row))
		b.add(at)
	}
	return b.exec(ctx, &b.claimIns, len(items))
}

func (b *sqliteBatch) answers(ctx context.Context, dc any, answers []Answer, now int64) error {
	if err := b.prepare(ctx, dc); err != nil {
		return err
	}
	at, zero := any(now), any(int64(0))
	for _, a := range answers {
		sentRun, sentAt := zero, zero
		if a.Created {
			sentRun, sentAt = b.runV, at
		}
		b.add(a.Key.Lead)
		b.add(a.Key.LeadID)
		b.add(a.Key.Hash)
		b.add(string(a.Status))
		b.add(int64(boolInt(a.Ambiguous)))
		b.add(a.ServiceID)
		b.add(int64(a.ResultCode))
		b.add(a.Bid)
		b.add(int64(a.Row))
		b.add(at)
		b.add(at)
		b.add(sentRun)
		b.add(sentAt)
	}
	_, err := b.exec(ctx, &b.answer, len(answers))
	return err
}

// repeatRow is n rows row: "(1, ?), (1, ?)".
func repeatRow(row string, n int) string {
	return row + strings.Repeat(", "+row, n-1)
}

func (b *sqliteBatch) close(dc any) {
	if b.dc != dc || dc == nil {
		return
	}
	for _, s := range append(b.claimIns[:], b.answer[:]...) {
		if s != nil {
			s.Close()
		}
	}
	b.dc = nil
}
