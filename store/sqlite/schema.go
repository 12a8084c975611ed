package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are applied in order; migrations[i] takes the schema from
// version i to i+1. Never edit one that has shipped: append a new one.
var migrations = []string{
	// 1: the initial schema. Times are Unix microseconds, NULL when unset.
	`
CREATE TABLE approvals (
	id              TEXT PRIMARY KEY,
	state           TEXT NOT NULL CHECK (state IN
	                  ('pending','approved','denied','expired','cancelled','executing','done')),
	effect          BLOB NOT NULL,
	digest          BLOB NOT NULL,
	tool            TEXT NOT NULL,
	effect_class    TEXT NOT NULL,
	card            BLOB,
	card_hash       BLOB NOT NULL,
	nonce           BLOB NOT NULL,
	created_at      INTEGER NOT NULL,
	expires_at      INTEGER NOT NULL,
	requester       TEXT NOT NULL,
	user            TEXT NOT NULL,
	session         TEXT NOT NULL,
	task            TEXT NOT NULL,
	step            TEXT NOT NULL,
	policy_version  TEXT NOT NULL,
	taint           TEXT NOT NULL,
	rationale       TEXT NOT NULL,
	merged          INTEGER NOT NULL DEFAULT 0,
	approver        TEXT NOT NULL DEFAULT '',
	reason          TEXT NOT NULL DEFAULT '',
	evidence        BLOB,
	resolved_at     INTEGER,
	idempotency_key TEXT NOT NULL DEFAULT '',
	consumed_at     INTEGER,
	result          BLOB,
	finished_at     INTEGER
) STRICT;
-- Merging and the pending caps read only pending rows of one session or
-- user: partial indexes keep that cost independent of the ticket count.
CREATE INDEX approvals_pending_session ON approvals (session, digest, expires_at) WHERE state = 'pending';
CREATE INDEX approvals_pending_user ON approvals (user, expires_at) WHERE state = 'pending';
CREATE INDEX approvals_pending_expiry ON approvals (expires_at) WHERE state = 'pending';
CREATE INDEX approvals_executing ON approvals (consumed_at) WHERE state = 'executing';

CREATE TABLE credentials (
	id              BLOB PRIMARY KEY,
	user            TEXT NOT NULL,
	public_key      BLOB NOT NULL,
	sign_count      INTEGER NOT NULL,
	backup_eligible INTEGER NOT NULL,
	backup_state    INTEGER NOT NULL,
	aaguid          BLOB,
	created_at      INTEGER
) STRICT;
CREATE INDEX credentials_user ON credentials (user, created_at);

CREATE TABLE invites (
	token_hash  BLOB PRIMARY KEY,
	user        TEXT NOT NULL,
	created_at  INTEGER,
	expires_at  INTEGER NOT NULL,
	redeemed_at INTEGER
) STRICT;

CREATE TABLE counters (
	key          TEXT NOT NULL,
	window_start INTEGER NOT NULL,
	n            INTEGER NOT NULL,
	PRIMARY KEY (key, window_start)
) STRICT, WITHOUT ROWID;

CREATE TABLE streaks (
	key   TEXT PRIMARY KEY,
	count INTEGER NOT NULL,
	last  INTEGER
) STRICT, WITHOUT ROWID;

CREATE TABLE audit (
	seq  INTEGER PRIMARY KEY,
	time INTEGER NOT NULL,
	task TEXT NOT NULL,
	hash BLOB NOT NULL,
	body TEXT NOT NULL
) STRICT;
CREATE INDEX audit_time ON audit (time);
CREATE INDEX audit_task ON audit (task);

CREATE TABLE grants (
	id         TEXT PRIMARY KEY,
	user       TEXT NOT NULL,
	spec       BLOB NOT NULL,
	remaining  INTEGER NOT NULL CHECK (remaining >= 0),
	created_at INTEGER,
	expires_at INTEGER NOT NULL
) STRICT;
`,
	// 2: contract v2. New states (revoked, failed, abandoned) need a new
	// CHECK, which SQLite can only get by rebuilding the table; executing
	// tickets gain an owner, a fence and a lease, tickets the approver group,
	// and credentials, invites and grants a revocation time. Tickets left
	// executing by an older version get fence 1 and a lease that ended when
	// they were consumed: Expired lists them and Reclaim re-runs them with
	// their key, as Recover did.
	`
CREATE TABLE approvals_v2 (
	id              TEXT PRIMARY KEY,
	state           TEXT NOT NULL CHECK (state IN ('pending','approved','denied','expired','cancelled',
	                  'revoked','executing','done','failed','abandoned')),
	effect          BLOB NOT NULL,
	digest          BLOB NOT NULL,
	tool            TEXT NOT NULL,
	effect_class    TEXT NOT NULL,
	card            BLOB,
	card_hash       BLOB NOT NULL,
	nonce           BLOB NOT NULL,
	created_at      INTEGER NOT NULL,
	expires_at      INTEGER NOT NULL,
	requester       TEXT NOT NULL,
	user            TEXT NOT NULL,
	session         TEXT NOT NULL,
	task            TEXT NOT NULL,
	step            TEXT NOT NULL,
	policy_version  TEXT NOT NULL,
	taint           TEXT NOT NULL,
	rationale       TEXT NOT NULL,
	approvers       TEXT NOT NULL DEFAULT '',
	merged          INTEGER NOT NULL DEFAULT 0,
	approver        TEXT NOT NULL DEFAULT '',
	reason          TEXT NOT NULL DEFAULT '',
	evidence        BLOB,
	resolved_at     INTEGER,
	idempotency_key TEXT NOT NULL DEFAULT '',
	consumed_at     INTEGER,
	owner           TEXT NOT NULL DEFAULT '',
	fence           INTEGER NOT NULL DEFAULT 0,
	lease_until     INTEGER,
	result          BLOB,
	finished_at     INTEGER
) STRICT;
INSERT INTO approvals_v2 (id, state, effect, digest, tool, effect_class, card, card_hash, nonce,
	created_at, expires_at, requester, user, session, task, step, policy_version, taint, rationale,
	merged, approver, reason, evidence, resolved_at, idempotency_key, consumed_at, owner, fence,
	lease_until, result, finished_at)
SELECT id, state, effect, digest, tool, effect_class, card, card_hash, nonce,
	created_at, expires_at, requester, user, session, task, step, policy_version, taint, rationale,
	merged, approver, reason, evidence, resolved_at, idempotency_key, consumed_at, '',
	CASE WHEN state IN ('executing','done') THEN 1 ELSE 0 END,
	CASE WHEN state = 'executing' THEN consumed_at END, result, finished_at
FROM approvals;
DROP TABLE approvals;
ALTER TABLE approvals_v2 RENAME TO approvals;
CREATE INDEX approvals_pending_session ON approvals (session, digest, expires_at) WHERE state = 'pending';
CREATE INDEX approvals_pending_user ON approvals (user, expires_at) WHERE state = 'pending';
CREATE INDEX approvals_pending_expiry ON approvals (expires_at) WHERE state = 'pending';
CREATE INDEX approvals_executing ON approvals (lease_until, id) WHERE state = 'executing';
-- List pages by (created_at, id).
CREATE INDEX approvals_created ON approvals (created_at, id);

ALTER TABLE credentials ADD COLUMN revoked_at INTEGER;
ALTER TABLE invites ADD COLUMN revoked_at INTEGER;
ALTER TABLE grants ADD COLUMN revoked_at INTEGER;
`,
	// 3: a credential carries the enrolling side's seal (a MAC), so a row
	// written into the database by anyone else does not approve.
	`ALTER TABLE credentials ADD COLUMN seal BLOB;`,
	// 4: when a ticket's card was first shown, and the approvals of a
	// ticket that needs several people: a JSON array of
	// {"approver","evidence","at"} (at in Unix microseconds, evidence in
	// base64), NULL until the first vote. Votes are read and written
	// under the write lock BEGIN IMMEDIATE takes, so the array is the
	// ticket's whole tally, never a stale copy.
	`ALTER TABLE approvals ADD COLUMN shown_at INTEGER;
ALTER TABLE approvals ADD COLUMN votes TEXT;`,
	// 5: an approver's queue reads, per source, one range of pending
	// tickets by expiry: its user's (approvals_pending_user) and each of
	// its groups' (this index).
	`CREATE INDEX approvals_pending_group ON approvals (approvers, expires_at, id) WHERE state = 'pending';`,
	// 6: answers refused as too soon, by hash, per ticket, so that every
	// process on the file refuses them again (store.Early).
	`CREATE TABLE early_answers (
	ticket_id  TEXT NOT NULL,
	hash       BLOB NOT NULL,
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (ticket_id, hash)
) STRICT, WITHOUT ROWID;`,
	// 7: the group a ticket escalates to and when, so that group's queue
	// reads its escalated tickets as one more index range. Tickets
	// parked before this migration name none: their escalation group
	// decides them through List, as before.
	`ALTER TABLE approvals ADD COLUMN escalates_to TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN escalates_at INTEGER;
CREATE INDEX approvals_pending_escalation ON approvals (escalates_to, expires_at, id)
	WHERE state = 'pending' AND escalates_to != '';`,
}

// migrate brings the schema to len(migrations), each step in its own
// BEGIN IMMEDIATE transaction so that processes opening the file together
// apply each migration once.
func (s *Store) migrate(ctx context.Context) error {
	// A file already at this build's version is read, not written: a
	// replica opening a busy database waits for no writer.
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v); err == nil && v == len(migrations) {
		return nil
	}
	if _, err := s.db.ExecContext(ctx,
		`CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL) STRICT`); err != nil {
		return fmt.Errorf("sqlite: migrate: %v", err)
	}
	for {
		done := false
		err := s.write(ctx, "migrate", func(tx runner) error {
			var v int
			err := tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
			switch {
			case err == sql.ErrNoRows:
				if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
					return dbErr(err)
				}
			case err != nil:
				return dbErr(err)
			}
			if v > len(migrations) {
				return fmt.Errorf("schema version %d is newer than this build supports (%d)", v, len(migrations))
			}
			if v == len(migrations) {
				done = true
				return nil
			}
			// Several statements: unprepared, as preparing compiles only one.
			if err := tx.script(ctx, migrations[v]); err != nil {
				return dbErr(err)
			}
			_, err = tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, v+1)
			return dbErr(err)
		})
		if err != nil || done {
			return err
		}
	}
}
