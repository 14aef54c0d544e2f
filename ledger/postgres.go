package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// lockClass is the first key of the ledger's advisory locks in
// PostgreSQL ("ledg"), so that they do not meet another application's in
// a shared database.
const lockClass = 0x6c656467

// postgresDialect is the PostgreSQL store, for runs on several machines
// (a Kubernetes Indexed Job's pods): its transactions run at READ
// COMMITTED and lock the lead a claim looks at (SELECT ... FOR UPDATE), so
// that two runs claiming one lead queue on it; a run shows that it is
// alive by holding a session advisory lock, which the server releases when
// the run's connection ends.
type postgresDialect struct{}

// openPostgres connects to the database at url. pgx reads what the URL
// leaves out from the PG* environment variables and ~/.pgpass, as libpq
// does, so the password need not be in the URL.
func openPostgres(ctx context.Context, url string) (*sql.DB, dialect, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// Its message may quote the URL, password and all.
		return nil, nil, errors.New("not a PostgreSQL URL that pgx can read (postgres://USER@HOST:PORT/DATABASE?sslmode=...)")
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(8)
	d := postgresDialect{}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, nil, d.classify(err)
	}
	return db, d, nil
}

func (postgresDialect) name() string { return "postgres" }

// rebind numbers the ? placeholders: $1, $2, ... (no statement of the
// package has a ? in a literal).
func (postgresDialect) rebind(q string) string {
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (postgresDialect) forUpdate() string    { return " FOR UPDATE OF leads" }
func (postgresDialect) migrations() []string { return migrations("BIGSERIAL PRIMARY KEY", "") }

// lockSchema makes concurrent Opens (the shards of a Job starting at once)
// migrate one after the other.
func (postgresDialect) lockSchema(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, 0)`, lockClass)
	return err
}

// runKey is run id's advisory lock key (the second of two int4 keys).
func runKey(id int64) int64 { return id % (1 << 31) }

func (postgresDialect) hold(ctx context.Context, db *sql.DB, id int64) (func(), error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1, $2)`, lockClass, runKey(id)); err != nil {
		conn.Close()
		return nil, fmt.Errorf("hold the run's lock: %w", err)
	}
	return func() {
		_, _ = conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1, $2)`, lockClass, runKey(id))
		conn.Close()
	}, nil
}

func (postgresDialect) alive(ctx context.Context, q querier, id int64) (bool, error) {
	var held bool
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::bigint::oid AND objid = $2::bigint::oid AND objsubid = 2 AND granted)`,
		int64(lockClass), runKey(id)).Scan(&held)
	return held, err
}

func (postgresDialect) classify(err error) error {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return err
}

// retryable reports whether a transaction failed only because another
// one got in its way (a deadlock between two runs' batches of claims, a
// serialization failure): it is run again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}
