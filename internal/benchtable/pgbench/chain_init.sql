-- The serial-chain floor's tables (run before each floor measurement):
-- a one-row chain head, the chain it heads, and rows a decision changes.
DROP TABLE IF EXISTS floor_chain, floor_head, floor_rows;
CREATE TABLE floor_head (
	one boolean PRIMARY KEY DEFAULT true CHECK (one),
	seq bigint NOT NULL,
	hash bytea NOT NULL,
	time bigint NOT NULL
);
INSERT INTO floor_head VALUES (true, 0, sha256(''::bytea), 0);
CREATE TABLE floor_chain (
	seq bigint PRIMARY KEY,
	time bigint NOT NULL,
	prev_hash bytea NOT NULL,
	hash bytea NOT NULL,
	body text NOT NULL
);
CREATE TABLE floor_rows (id integer PRIMARY KEY, n bigint NOT NULL);
INSERT INTO floor_rows SELECT g, 0 FROM generate_series(0, 1023) AS g;
