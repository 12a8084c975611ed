-- 004: when a ticket's card was first shown, and the approvals of a
-- ticket that needs several people: a JSON array of
-- {"approver", "evidence", "at"} (evidence in base64, at in Unix
-- microseconds), in the order given, NULL until the first vote. A vote is
-- one conditional UPDATE of the ticket row, so votes on one ticket queue
-- on its row lock and each sees the tally the one before it left.
ALTER TABLE tickets
	ADD COLUMN shown_at timestamptz,
	ADD COLUMN votes    jsonb CHECK (jsonb_typeof(votes) = 'array');
