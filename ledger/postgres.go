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

// The PostgreSQL store's many-row statements: one row of each array
// parameter a lead (unnest), so that a statement has 7 or 14 parameters
// whatever its rows, each array encoded at once, instead of 8 or 15 a row.
const (
	pgClaimSQL = `INSERT INTO leads (` + claimCols + `)
SELECT $1::bigint, t.k, t.id, t.h, 'claimed', $2::bigint, t.r, $3::bigint
FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[]) AS t (k, id, h, r)
ON CONFLICT (account_id, lead_key) DO NOTHING`
	pgAnswerSQL = `INSERT INTO leads (` + answerCols + `)
SELECT $1::bigint, t.k, t.id, t.h, t.st, t.amb, t.sid, t.rc, t.bid, $2::bigint, t.r, $3::bigint, $3::bigint, t.sr, t.sa
FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::integer[], $9::text[], $10::integer[], $11::text[], $12::bigint[], $13::bigint[], $14::bigint[])
	AS t (k, id, h, st, amb, sid, rc, bid, r, sr, sa)` + answerSet
)

// pgBatch is the PostgreSQL store's batcher: pgx's own connection beneath
// database/sql (its statement cache prepares each statement once a
// connection), the rows' values as arrays, reused from one statement to
// the next.
type pgBatch struct {
	acct, run                           int64
	keys, ids, hashes, states, sids, bs []string
	ambs, codes                         []int32
	rows, sentRuns, sentAts             []int64
}

func (postgresDialect) batcher(account, run int64) batcher {
	return &pgBatch{acct: account, run: run}
}

// claimChunk: claims in chunks as large as SQLite's largest, so that a
// chunk that meets a lead the ledger holds is read back alike; answers in
// one statement.
func (b *pgBatch) claimChunk(n int) int  { return min(n, claimChunk) }
func (b *pgBatch) answerChunk(n int) int { return n }

func pgConn(dc any) (*pgx.Conn, error) {
	c, ok := dc.(*stdlib.Conn)
	if !ok {
		return nil, fmt.Errorf("the PostgreSQL driver's connection is a %T, not pgx's", dc)
	}
	return c.Conn(), nil
}

// reset empties the arrays, keeping their room.
func (b *pgBatch) reset() {
	for _, s := range []*[]string{&b.keys, &b.ids, &b.hashes, &b.states, &b.sids, &b.bs} {
		clear(*s)
		*s = (*s)[:0]
	}
	b.ambs, b.codes = b.ambs[:0], b.codes[:0]
	b.rows, b.sentRuns, b.sentAts = b.rows[:0], b.sentRuns[:0], b.sentAts[:0]
}

func (b *pgBatch) claims(ctx context.Context, dc any, items []ClaimItem, now int64) (int64, error) {
	c, err := pgConn(dc)
	if err != nil {
		return 0, err
	}
	defer b.reset()
	for _, it := range items {
		b.keys = append(b.keys, it.Key.Lead)
		b.ids = append(b.ids, it.Key.LeadID)
		b.hashes = append(b.hashes, it.Key.Hash)
		b.rows = append(b.rows, int64(it.Row))
	}
	tag, err := c.Exec(ctx, pgClaimSQL, b.acct, b.run, now, b.keys, b.ids, b.hashes, b.rows)
	return tag.RowsAffected(), err
}

func (b *pgBatch) answers(ctx context.Context, dc any, answers []Answer, now int64) error {
	c, err := pgConn(dc)
	if err != nil {
		return err
	}
	defer b.reset()
	for _, a := range answers {
		var sentRun, sentAt int64
		if a.Created {
			sentRun, sentAt = b.run, now
		}
		b.keys = append(b.keys, a.Key.Lead)
		b.ids = append(b.ids, a.Key.LeadID)
		b.hashes = append(b.hashes, a.Key.Hash)
		b.states = append(b.states, string(a.Status))
		b.ambs = append(b.ambs, int32(boolInt(a.Ambiguous)))
		b.sids = append(b.sids, a.ServiceID)
		b.codes = append(b.codes, int32(a.ResultCode))
		b.bs = append(b.bs, a.Bid)
		b.rows = append(b.rows, int64(a.Row))
		b.sentRuns = append(b.sentRuns, sentRun)
		b.sentAts = append(b.sentAts, sentAt)
	}
	_, err = c.Exec(ctx, pgAnswerSQL, b.acct, b.run, now, b.keys, b.ids, b.hashes, b.states, b.ambs, b.sids, b.codes, b.bs, b.rows, b.sentRuns, b.sentAts)
	return err
}

func (b *pgBatch) close(any) {}
