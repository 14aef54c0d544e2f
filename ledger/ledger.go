// Package ledger is bulkload's memory across runs: a database of every lead
// an upload sent, per service account (endpoint and client id), and of
// every run with its summary. It stands beside the pipeline: the upload
// engine claims each lead in it before the first createLead call and
// records the answer after, so that a lead created in an earlier run (a
// re-dropped export, a cumulative one, a rerun under another results file)
// is not sent again, and two runs or shards sharing it never send one lead
// twice; the application records each run's summary in it, for `bulkload
// history`, `bulkload report --run` and `bulkload summary`.
//
// Two stores share one schema, its migrations and every statement but
// the many-row ones of a run's writer (batcher): SQLite
// (modernc.org/sqlite, pure Go), a file of mode 0600 in the user's state
// folder by default, and PostgreSQL (github.com/jackc/pgx/v5) for runs
// spread over machines. They differ only where the databases do (a
// dialect): how a write transaction takes its lock, and how a run shows
// that it is alive (an flock on a file beside the SQLite file, a session
// advisory lock in PostgreSQL), which the OS or the server releases when
// the process dies, so that a run killed with SIGKILL leaves nothing to
// clean by hand.
//
// What survives what. A claim is committed before the lead's first
// createLead call goes out (the claimer waits for its transaction), and an
// answer soon after it came (answers share transactions with the next
// claims: a group commit). A SQLite ledger runs in WAL mode with
// synchronous=NORMAL: a commit is in the OS's hands when it returns, so it
// survives the process's death (SIGKILL, an OOM kill, a panic) as the
// results journal's lines do (report.Journal.AppendDurable), but a power
// cut or a kernel crash may take the last commits back (the file itself
// stays whole). That is the journal's own guarantee, and what it costs is
// the same: a lead whose claim a power cut took is sent again by the next
// run, as a resume sends a lead whose journal line a power cut took
// (synchronous=FULL would cost an fsync for every transaction). A lost answer leaves its lead claimed, and the next run
// that meets it sends it with the own-lead check (Decision.Ambiguous). A
// PostgreSQL ledger's commits are the server's (fsync on: they survive
// both).
//
// The ledger holds no SSN and no date of birth, not even a plain hash of
// them: a lead's content is known by an HMAC-SHA256 of its normalised
// LeadInput under a key made at random for each ledger and kept in it.
// docs/design.md has the schema and the reasons.
package ledger

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bulkload/bulkload/lead"
)

// Errors of Open, wrapped by its error: each names the ledger and says
// what to do; the caller stops the run before anything is sent.
var (
	// ErrCorrupt: the file is not a SQLite database, or not one bulkload
	// can read (damaged, another program's).
	ErrCorrupt = errors.New("not a readable ledger")
	// ErrLocked: another process held the ledger's write lock longer than
	// the busy timeout.
	ErrLocked = errors.New("ledger locked by another process")
	// ErrNewer: the ledger's schema is newer than this bulkload knows.
	ErrNewer = errors.New("ledger written by a newer bulkload")
	// ErrUnreachable: the PostgreSQL server could not be reached or
	// refused the connection.
	ErrUnreachable = errors.New("ledger database unreachable")
	// ErrNoLedger: Config.MustExist, and there is no ledger file.
	ErrNoLedger = errors.New("no ledger")
)

// DefaultBusyTimeout is how long a write to a SQLite ledger waits for
// another process's transaction before it fails with ErrLocked.
const DefaultBusyTimeout = 5 * time.Second

// Config is how Open opens a ledger.
type Config struct {
	// Where is a file path (SQLite) or a postgres:// or postgresql://
	// URL (PostgreSQL).
	Where string
	// BusyTimeout bounds a SQLite write's wait for another process's
	// transaction; 0: DefaultBusyTimeout.
	BusyTimeout time.Duration
	// Now is the clock of the times recorded; nil: time.Now.
	Now func() time.Time
	// Poll is the first wait of a claim held by a live run, doubling to
	// a second; 0: 50 ms.
	Poll time.Duration
	// MustExist refuses to create a SQLite ledger (ErrNoLedger): a
	// command that only reads one (history) must not leave an empty file.
	MustExist bool
}

// IsURL reports whether where names a PostgreSQL ledger.
func IsURL(where string) bool {
	return strings.HasPrefix(where, "postgres://") || strings.HasPrefix(where, "postgresql://")
}

// DefaultPath is the SQLite ledger of a user who names none:
// $XDG_STATE_HOME/bulkload/ledger.sqlite, or, without XDG_STATE_HOME,
// $HOME/.local/state/bulkload/ledger.sqlite (the XDG Base Directory
// default). getenv is the process's environment; neither set is an error.
func DefaultPath(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "bulkload", "ledger.sqlite"), nil
	}
	if h := getenv("HOME"); h != "" && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "bulkload", "ledger.sqlite"), nil
	}
	return "", errors.New("neither XDG_STATE_HOME nor HOME is set to an absolute path, so there is no state folder for the ledger")
}

// Ledger is one open ledger. It is safe for concurrent use.
type Ledger struct {
	db    *sql.DB
	d     dialect
	where string // for messages: the path, or the URL without credentials
	key   []byte // the HMAC key of content hashes
	now   func() time.Time
	poll  time.Duration
	// hashers are content hashers (ContentHash) to reuse: an HMAC keyed
	// anew for every lead, and its JSON buffer, were a tenth of the
	// ledger's allocations, whose garbage collections an upload pays for.
	hashers sync.Pool
}

// hasher is a content hash's state, reused (Ledger.hashers).
type hasher struct {
	mac hash.Hash
	buf []byte
	sum []byte
}

// dialect is where the two stores differ.
type dialect interface {
	// name is "sqlite" or "postgres".
	name() string
	// rebind turns the statements' ? placeholders into the dialect's.
	rebind(q string) string
	// migrations are the schema's steps, in order, in the dialect's DDL.
	migrations() []string
	// lockSchema serialises migrations between processes, within tx.
	lockSchema(ctx context.Context, tx *sql.Tx) error
	// forUpdate is appended to a SELECT of a lead that a claim may change.
	forUpdate() string
	// hold shows, for as long as the run is alive, that run id is: the
	// returned release ends it. The OS or the server ends it when the
	// process dies.
	hold(ctx context.Context, db *sql.DB, id int64) (release func(), err error)
	// alive reports whether run id still holds it.
	alive(ctx context.Context, q querier, id int64) (bool, error)
	// classify turns a database error into one of the package's.
	classify(err error) error
	// batcher is what writes the many-row statements of run's
	// transactions, for account.
	batcher(account, run int64) batcher
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Open opens the ledger cfg.Where names, creating it (a SQLite file of mode
// 0600, or the tables in a PostgreSQL database) and bringing its schema up
// to date. A SQLite file that is not a database is ErrCorrupt, one locked
// too long ErrLocked, a server that cannot be reached ErrUnreachable: never
// a fresh ledger in its place. The caller closes it.
func Open(ctx context.Context, cfg Config) (*Ledger, error) {
	l := &Ledger{now: cfg.Now, poll: cfg.Poll}
	if l.now == nil {
		l.now = time.Now
	}
	if l.poll <= 0 {
		l.poll = 50 * time.Millisecond
	}
	var err error
	if IsURL(cfg.Where) {
		l.where = RedactURL(cfg.Where)
		l.db, l.d, err = openPostgres(ctx, cfg.Where)
	} else {
		l.where = cfg.Where
		if cfg.MustExist {
			if _, serr := os.Lstat(cfg.Where); errors.Is(serr, fs.ErrNotExist) {
				return nil, fmt.Errorf("%w at %s", ErrNoLedger, cfg.Where)
			}
		}
		l.db, l.d, err = openSQLite(cfg.Where, cmpDuration(cfg.BusyTimeout, DefaultBusyTimeout))
	}
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", l.where, err)
	}
	// Runs that start at once on a new SQLite ledger meet while one of
	// them creates it: SQLite answers some of those meetings (a journal
	// mode being set, a read lock being upgraded) busy at once, without
	// its busy timeout. They wait here instead, as long.
	busy := cmpDuration(cfg.BusyTimeout, DefaultBusyTimeout)
	deadline := time.Now().Add(busy)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err = l.migrate(ctx)
		if err == nil || !errors.Is(err, ErrLocked) || time.Now().After(deadline) {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			err = ctx.Err()
		}
		if ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		l.db.Close()
		return nil, fmt.Errorf("ledger %s: %w", l.where, err)
	}
	return l, nil
}

func cmpDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// String names the ledger for a message: its path, or its URL without
// user info and query values.
func (l *Ledger) String() string { return l.where }

// Kind is "sqlite" or "postgres".
func (l *Ledger) Kind() string { return l.d.name() }

// Close closes the ledger.
func (l *Ledger) Close() error { return l.db.Close() }

// RedactURL is a PostgreSQL URL fit for a message or a log: its password
// and query values replaced by REDACTED (the user name stays).
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://(unparseable URL)"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if k == "host" || k == "sslmode" {
				continue
			}
			q.Set(k, "REDACTED")
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// schemaVersion is the number of migrations this bulkload knows.
func (l *Ledger) schemaVersion() int { return len(l.d.migrations()) }

// migrate brings the schema up to date in one transaction, and makes the
// ledger's key on its first use.
func (l *Ledger) migrate(ctx context.Context) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return l.d.classify(err)
	}
	defer tx.Rollback()
	if err := l.d.lockSchema(ctx, tx); err != nil {
		return l.d.classify(err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS ledger_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)`); err != nil {
		return l.d.classify(err)
	}
	version := 0
	var v string
	switch err := tx.QueryRowContext(ctx, l.d.rebind(`SELECT value FROM ledger_meta WHERE name = ?`), "schema").Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return l.d.classify(err)
	default:
		if _, err := fmt.Sscan(v, &version); err != nil {
			return fmt.Errorf("%w: schema version %q", ErrCorrupt, v)
		}
	}
	steps := l.d.migrations()
	if version > len(steps) {
		return fmt.Errorf("%w (schema %d, this bulkload knows %d): upgrade bulkload", ErrNewer, version, len(steps))
	}
	for _, step := range steps[version:] {
		if _, err := tx.ExecContext(ctx, step); err != nil {
			return fmt.Errorf("migrate the schema: %w", l.d.classify(err))
		}
	}
	if version < len(steps) {
		if _, err := tx.ExecContext(ctx, l.d.rebind(`INSERT INTO ledger_meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`), "schema", fmt.Sprint(len(steps))); err != nil {
			return l.d.classify(err)
		}
	}
	var key string
	switch err := tx.QueryRowContext(ctx, l.d.rebind(`SELECT value FROM ledger_meta WHERE name = ?`), "hash_key").Scan(&key); {
	case errors.Is(err, sql.ErrNoRows):
		key, err = newKey()
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, l.d.rebind(`INSERT INTO ledger_meta (name, value) VALUES (?, ?)`), "hash_key", key); err != nil {
			return l.d.classify(err)
		}
	case err != nil:
		return l.d.classify(err)
	}
	if l.key, err = hex.DecodeString(key); err != nil || len(l.key) < 16 {
		return fmt.Errorf("%w: its content hash key is damaged", ErrCorrupt)
	}
	return l.d.classify(tx.Commit())
}

// Account is one service account: the leads a service knows under one
// client of one endpoint. Endpoint holds no credentials (the caller
// redacts user info and query values).
type Account struct {
	Endpoint string
	ClientID string
}

// account returns the id of a, adding it on first use.
func (l *Ledger) account(ctx context.Context, a Account) (int64, error) {
	q := l.d.rebind(`INSERT INTO accounts (endpoint, client_id, created_at) VALUES (?, ?, ?) ON CONFLICT (endpoint, client_id) DO NOTHING`)
	if _, err := l.db.ExecContext(ctx, q, a.Endpoint, a.ClientID, l.now().UnixMilli()); err != nil {
		return 0, l.d.classify(err)
	}
	var id int64
	err := l.db.QueryRowContext(ctx, l.d.rebind(`SELECT id FROM accounts WHERE endpoint = ? AND client_id = ?`), a.Endpoint, a.ClientID).Scan(&id)
	return id, l.d.classify(err)
}

// ContentHash is the ledger's name for a lead's content: the HMAC-SHA256,
// under the ledger's key, of the LeadInput as it is sent (JSON, fields in
// the interface's order, empty ones left out), in hex.
func (l *Ledger) ContentHash(in lead.Input) string {
	h, _ := l.hashers.Get().(*hasher)
	if h == nil {
		h = &hasher{mac: hmac.New(sha256.New, l.key)}
	}
	defer l.hashers.Put(h)
	h.buf = appendInput(h.buf[:0], &in)
	h.mac.Reset()
	h.mac.Write(h.buf)
	h.sum = h.mac.Sum(h.sum[:0])
	return hex.EncodeToString(h.sum)
}

// Key names one lead in the ledger: by its leadId, or, for a row without
// one, by its content.
type Key struct {
	// Lead is the leads table's key: "id:" + leadId, or "content:" +
	// Hash.
	Lead string
	// LeadID is the partner's leadId; "" when the lead is known by its
	// content.
	LeadID string
	// Hash is the content hash (ContentHash); "" when the content is not
	// known (a row kept by its earlier lead although its cells fail
	// validation now).
	Hash string
}

// KeyOf is the key of a lead with leadID (may be "") and input.
func (l *Ledger) KeyOf(leadID string, in lead.Input) Key {
	h := l.ContentHash(in)
	if leadID != "" {
		return Key{Lead: "id:" + leadID, LeadID: leadID, Hash: h}
	}
	return Key{Lead: "content:" + h, Hash: h}
}

// KeyOfID is the key of a lead known only by its leadId (its content is
// not known here).
func KeyOfID(leadID string) Key { return Key{Lead: "id:" + leadID, LeadID: leadID} }

// newKey makes a ledger's content hash key: 32 random bytes, in hex.
func newKey() (string, error) {
	b := make([]byte, 32)
	if _, err := readRandom(b); err != nil {
		return "", fmt.Errorf("make the ledger's key: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// hostname is this machine's name for a run's record ("" if unknown).
func hostname() string {
	h, _ := os.Hostname()
	return h
}
