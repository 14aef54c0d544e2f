package ledger

import "strings"

// migrations are the schema's steps, in order: step i brings a ledger of
// schema i to schema i+1, in the transaction of Open. Both stores run the
// same statements; only the type of a generated id differs (idType), and
// SQLite keeps the leads in their key's order (clustered, WITHOUT ROWID:
// one B-tree to write per lead instead of a table and its key's index;
// PostgreSQL has no such table option, clustered indexes).
// A step is never edited once released: a change is a new step.
//
// Times are Unix milliseconds (BIGINT), so that both stores compare them
// alike; booleans are 0 or 1.
func migrations(idType, leadsOptions string) []string {
	step1 := `
CREATE TABLE accounts (
	id         ID,
	endpoint   TEXT NOT NULL,
	client_id  TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	UNIQUE (endpoint, client_id)
);
CREATE TABLE runs (
	id           ID,
	account_id   BIGINT NOT NULL REFERENCES accounts (id),
	command      TEXT NOT NULL,
	host         TEXT NOT NULL,
	pid          BIGINT NOT NULL,
	input        TEXT NOT NULL,
	results      TEXT NOT NULL,
	job_name     TEXT NOT NULL,
	shard        TEXT NOT NULL,
	started_at   BIGINT NOT NULL,
	ended_at     BIGINT,
	exit_code    INTEGER,
	input_sha256 TEXT NOT NULL DEFAULT '',
	summary      TEXT
);
CREATE INDEX runs_started ON runs (started_at);
CREATE INDEX runs_results ON runs (results);
CREATE TABLE leads (
	account_id   BIGINT NOT NULL REFERENCES accounts (id),
	lead_key     TEXT NOT NULL,
	lead_id      TEXT NOT NULL,
	content_hash TEXT NOT NULL,
	state        TEXT NOT NULL,
	ambiguous    INTEGER NOT NULL DEFAULT 0,
	service_id   TEXT NOT NULL DEFAULT '',
	result_code  INTEGER NOT NULL DEFAULT 0,
	bid          TEXT NOT NULL DEFAULT '',
	run_id       BIGINT NOT NULL,
	row_no       BIGINT NOT NULL,
	claimed_at   BIGINT NOT NULL,
	answered_at  BIGINT NOT NULL DEFAULT 0,
	sent_run_id  BIGINT NOT NULL DEFAULT 0,
	sent_at      BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (account_id, lead_key)
)LEADS_OPTIONS;
`
	step1 = strings.ReplaceAll(step1, " ID,", " "+idType+",")
	return []string{strings.ReplaceAll(step1, "LEADS_OPTIONS", leadsOptions)}
}
