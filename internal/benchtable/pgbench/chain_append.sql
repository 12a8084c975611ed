-- One decision of the serial-chain floor, as the gate makes it: a state
-- change and its audit row in one durable commit, the row chained to the
-- head, which the transaction locks until its commit is on disk. Like
-- the gate's append, one statement locks the head, checks that the
-- head's row hashes to the head, links and hashes the new row inside the
-- database, inserts it and moves the head. The head is locked by a
-- statement of its own first, so that the append's snapshot, taken after
-- the lock, sees the row the previous holder committed. The transaction
-- is one pipelined round trip, so the head is held for the commit only.
-- :pad is the size of an audit row of the gate's (pgbench -D pad=N).
\startpipeline
BEGIN;
UPDATE floor_rows SET n = n + 1 WHERE id = :client_id;
SELECT 1 FROM floor_head FOR UPDATE;
WITH h AS (
	SELECT seq, hash, time FROM floor_head FOR UPDATE
), n AS (
	SELECT CASE WHEN h.seq = 0 OR EXISTS (
			SELECT 1 FROM floor_chain c WHERE c.seq = h.seq AND c.hash = h.hash
				AND sha256(c.prev_hash || convert_to(c.body, 'UTF8')) = c.hash)
		THEN h.seq + 1 END AS seq, h.hash AS prev,
		greatest(h.time, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS time,
		repeat('x', :pad) AS body
	FROM h
), c AS (
	SELECT n.seq, n.prev, n.time, n.body, sha256(n.prev || convert_to(n.body, 'UTF8')) AS hash FROM n
), ins AS (
	INSERT INTO floor_chain (seq, time, prev_hash, hash, body) SELECT c.seq, c.time, c.prev, c.hash, c.body FROM c
)
UPDATE floor_head SET seq = c.seq, hash = c.hash, time = c.time FROM c;
COMMIT;
\endpipeline
