-- 001: tickets, credentials, invites, counters, streaks, the audit chain
-- and grants. Times are timestamptz (microseconds); NULL means unset.

CREATE TABLE tickets (
	id                    text PRIMARY KEY,
	state                 text NOT NULL CHECK (state IN
		('pending', 'approved', 'denied', 'expired', 'cancelled', 'executing', 'done')),
	effect                bytea NOT NULL,
	digest                bytea NOT NULL CHECK (length(digest) = 32),
	tool                  text NOT NULL,
	effect_class          text NOT NULL,
	card                  bytea,
	card_hash             bytea NOT NULL CHECK (length(card_hash) = 32),
	nonce                 bytea NOT NULL CHECK (length(nonce) = 32),
	created_at            timestamptz NOT NULL,
	expires_at            timestamptz NOT NULL CHECK (expires_at > created_at),
	requester_user        text NOT NULL,
	requester_agent       text NOT NULL,
	requester_delegations text[],
	user_name             text NOT NULL,
	session               text NOT NULL,
	task                  text NOT NULL,
	step                  text NOT NULL,
	policy_version        text NOT NULL,
	taint                 text[],
	rationale             text NOT NULL,
	merged                integer NOT NULL DEFAULT 0,
	approver              text NOT NULL DEFAULT '',
	reason                text NOT NULL DEFAULT '',
	evidence              bytea,
	resolved_at           timestamptz,
	idempotency_key       text NOT NULL DEFAULT '',
	consumed_at           timestamptz,
	result                bytea,
	finished_at           timestamptz,
	-- A ticket that was consumed keeps the intent it was consumed with.
	CHECK (state NOT IN ('executing', 'done') OR (idempotency_key <> '' AND consumed_at IS NOT NULL))
);

-- Merging, pending caps, the pending lists and the expiry sweep read only
-- pending tickets, so their cost follows the pending tickets (of one
-- session or user), never the size of the table. Every index is one more
-- insert per Park, so there is none for what these already serve.
CREATE INDEX tickets_pending_session ON tickets (session, digest, expires_at) WHERE state = 'pending';
CREATE INDEX tickets_pending_session_live ON tickets (session, expires_at) WHERE state = 'pending';
CREATE INDEX tickets_pending_user ON tickets (user_name, expires_at) WHERE state = 'pending';
CREATE INDEX tickets_pending_expiry ON tickets (expires_at) WHERE state = 'pending';
CREATE INDEX tickets_executing ON tickets (consumed_at, id) WHERE state = 'executing';

CREATE TABLE credentials (
	id              bytea PRIMARY KEY,
	user_name       text NOT NULL,
	public_key      bytea NOT NULL,
	sign_count      bigint NOT NULL CHECK (sign_count BETWEEN 0 AND 4294967295),
	backup_eligible boolean NOT NULL,
	backup_state    boolean NOT NULL,
	aaguid          bytea,
	created_at      timestamptz
);
CREATE INDEX credentials_user ON credentials (user_name, created_at, id);

CREATE TABLE invites (
	token_hash  bytea PRIMARY KEY CHECK (length(token_hash) = 32),
	user_name   text NOT NULL,
	created_at  timestamptz,
	expires_at  timestamptz NOT NULL,
	redeemed_at timestamptz
);

-- A counter keeps its two newest windows in one row, so that one upsert
-- decides every case atomically. w1 is the older window (NULL when only
-- one has been seen), w2 the newest.
CREATE TABLE counters (
	key text PRIMARY KEY,
	w1  timestamptz,
	n1  bigint NOT NULL,
	w2  timestamptz NOT NULL,
	n2  bigint NOT NULL
);

CREATE TABLE streaks (
	key   text PRIMARY KEY,
	count integer NOT NULL,
	last  timestamptz
);

CREATE TABLE audit (
	seq                   bigint PRIMARY KEY CHECK (seq > 0),
	time                  bigint NOT NULL,
	ticket_id             text NOT NULL,
	task                  text NOT NULL,
	step                  text NOT NULL,
	session               text NOT NULL,
	tool                  text NOT NULL,
	effect_class          text NOT NULL,
	args_digest           bytea NOT NULL,
	args                  bytea,
	principal_user        text NOT NULL,
	principal_agent       text NOT NULL,
	principal_delegations text[],
	policy_version        text NOT NULL,
	decision              text NOT NULL,
	reason                text NOT NULL,
	taint                 text[],
	approver              text NOT NULL,
	nonce                 text NOT NULL,
	card_hash             text NOT NULL,
	decision_millis       bigint NOT NULL,
	result                text NOT NULL,
	idempotency_key       text NOT NULL,
	prev_hash             bytea NOT NULL,
	hash                  bytea NOT NULL
);
CREATE INDEX audit_time ON audit (time, seq);
CREATE INDEX audit_task ON audit (task, seq);

-- The chain head: one row that every append locks (SELECT ... FOR UPDATE)
-- and moves forward in the same transaction as its insert, so concurrent
-- appends from any number of replicas queue on it instead of forking.
CREATE TABLE audit_head (
	id   boolean PRIMARY KEY DEFAULT true CHECK (id),
	seq  bigint NOT NULL,
	hash bytea NOT NULL
);
INSERT INTO audit_head (seq, hash) VALUES (0, decode(repeat('00', 32), 'hex'));

CREATE TABLE grants (
	id         text PRIMARY KEY,
	user_name  text NOT NULL,
	spec       bytea NOT NULL,
	remaining  bigint NOT NULL CHECK (remaining >= 0),
	created_at timestamptz,
	expires_at timestamptz NOT NULL
);
