-- chain_append.sql with the disk flush moved out from under the chain
-- head, to show what the head costs without it (not the floor of the
-- gate as it is): the decision commits without waiting for its WAL to
-- reach the disk, which releases the head at once, and the client then
-- waits for a durable commit of its own (txid_current() makes the second
-- transaction write a commit record, and with synchronous_commit on it
-- waits for the WAL up to it, the decision's included: WAL is flushed in
-- order). Decisions then share flushes as other commits do. A decision
-- is durable only when the second commit returns; until then nothing
-- may act on it, and a crash loses a suffix of the chain, never a middle
-- record.
\startpipeline
BEGIN;
SET LOCAL synchronous_commit = off;
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
SELECT txid_current();
