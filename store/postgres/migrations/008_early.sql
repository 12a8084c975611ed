-- 008: answers refused as too soon, by hash, per ticket, so that every
-- replica refuses them again (store.Early).
CREATE TABLE early_answers (
	ticket_id  text NOT NULL,
	hash       bytea NOT NULL,
	expires_at timestamptz NOT NULL,
	PRIMARY KEY (ticket_id, hash)
);
