-- 006: an approver's queue reads, per source, one range of pending
-- tickets by expiry: its user's (tickets_pending_user) and each of its
-- groups' (this index), each at most a page long.
CREATE INDEX tickets_pending_group ON tickets (approvers, expires_at, id) WHERE state = 'pending';
