package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// RunRecord is one run as the ledger keeps it.
type RunRecord struct {
	ID      int64
	Account Account
	Command string
	Host    string
	PID     int64
	Input   string
	Results string
	JobName string
	Shard   string
	Started time.Time
	// Ended is zero for a run that has not ended: still going (Alive),
	// or killed.
	Ended time.Time
	// ExitCode is nil until the run ends.
	ExitCode    *int
	InputSHA256 string
	// Summary is the run's summary JSON (the --summary-json object), nil
	// until the run ends.
	Summary []byte
	// Alive reports, for a run without an end, whether it is still going.
	Alive bool
}

// Filter selects runs for History.
type Filter struct {
	// Since: runs started at or after it (zero: all).
	Since time.Time
	// JobName: runs of this job (the metrics' job_name); "": all.
	JobName string
	// Results: runs that wrote one of these results files (absolute);
	// empty: all.
	Results []string
	// Input: runs of this input SHA-256; "": all.
	InputSHA256 string
}

// ErrNoRun is wrapped by Run's error for an id the ledger has no run of.
var ErrNoRun = errors.New("no such run in the ledger")

const runColumns = `runs.id, accounts.endpoint, accounts.client_id, command, host, pid, input, results, job_name, shard, started_at, ended_at, exit_code, input_sha256, summary`

// History lists the runs f selects, oldest first.
func (l *Ledger) History(ctx context.Context, f Filter) ([]RunRecord, error) {
	var where []string
	var args []any
	if !f.Since.IsZero() {
		where = append(where, "started_at >= ?")
		args = append(args, f.Since.UnixMilli())
	}
	if f.JobName != "" {
		where = append(where, "job_name = ?")
		args = append(args, f.JobName)
	}
	if f.InputSHA256 != "" {
		where = append(where, "input_sha256 = ?")
		args = append(args, f.InputSHA256)
	}
	if len(f.Results) > 0 {
		where = append(where, "results IN (?"+strings.Repeat(", ?", len(f.Results)-1)+")")
		for _, r := range f.Results {
			args = append(args, r)
		}
	}
	q := `SELECT ` + runColumns + ` FROM runs JOIN accounts ON accounts.id = runs.account_id`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY runs.id"
	rows, err := l.db.QueryContext(ctx, l.d.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", l.where, l.d.classify(err))
	}
	defer rows.Close()
	var out []RunRecord
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("ledger %s: %w", l.where, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger %s: %w", l.where, l.d.classify(err))
	}
	for i := range out {
		if out[i].Ended.IsZero() {
			if out[i].Alive, err = l.d.alive(ctx, l.db, out[i].ID); err != nil {
				return nil, fmt.Errorf("ledger %s: %w", l.where, err)
			}
		}
	}
	return out, nil
}

// Run returns run id; an error wrapping ErrNoRun when the ledger has none.
func (l *Ledger) Run(ctx context.Context, id int64) (RunRecord, error) {
	q := `SELECT ` + runColumns + ` FROM runs JOIN accounts ON accounts.id = runs.account_id WHERE runs.id = ?`
	r, err := scanRun(l.db.QueryRowContext(ctx, l.d.rebind(q), id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return r, fmt.Errorf("ledger %s: run %d: %w", l.where, id, ErrNoRun)
	case err != nil:
		return r, fmt.Errorf("ledger %s: %w", l.where, l.d.classify(err))
	}
	if r.Ended.IsZero() {
		if r.Alive, err = l.d.alive(ctx, l.db, r.ID); err != nil {
			return r, fmt.Errorf("ledger %s: %w", l.where, err)
		}
	}
	return r, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanRun(s scanner) (RunRecord, error) {
	var (
		r           RunRecord
		started     int64
		ended, exit sql.NullInt64
		summary     sql.NullString
	)
	if err := s.Scan(&r.ID, &r.Account.Endpoint, &r.Account.ClientID, &r.Command, &r.Host, &r.PID, &r.Input, &r.Results, &r.JobName, &r.Shard,
		&started, &ended, &exit, &r.InputSHA256, &summary); err != nil {
		return r, err
	}
	r.Started = time.UnixMilli(started)
	if ended.Valid {
		r.Ended = time.UnixMilli(ended.Int64)
	}
	if exit.Valid {
		c := int(exit.Int64)
		r.ExitCode = &c
	}
	if summary.Valid {
		r.Summary = []byte(summary.String)
	}
	return r, nil
}

// Counts is how many leads of an account the ledger holds, by state.
func (l *Ledger) Counts(ctx context.Context, a Account) (map[State]int, error) {
	rows, err := l.db.QueryContext(ctx, l.d.rebind(`SELECT state, COUNT(*) FROM leads JOIN accounts ON accounts.id = leads.account_id WHERE endpoint = ? AND client_id = ? GROUP BY state`), a.Endpoint, a.ClientID)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", l.where, l.d.classify(err))
	}
	defer rows.Close()
	out := map[State]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[State(s)] = n
	}
	return out, rows.Err()
}
