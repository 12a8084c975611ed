-- One of the serial-chain floor's other commits: a durable one-row write
-- that locks no chain head, as the gate's flood counters, card shown and
-- passkey sign count are.
UPDATE floor_rows SET n = n + 1 WHERE id = 512 + :client_id;
