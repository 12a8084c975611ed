-- 009: the group a ticket escalates to and when, so that group's queue
-- reads its escalated tickets as one more index range. Tickets parked
-- before this migration name none: their escalation group decides them
-- through List, as before.
ALTER TABLE tickets ADD COLUMN escalates_to text NOT NULL DEFAULT '';
ALTER TABLE tickets ADD COLUMN escalates_at timestamptz;
CREATE INDEX tickets_pending_escalation ON tickets (escalates_to, expires_at, id)
	WHERE state = 'pending' AND escalates_to <> '';
