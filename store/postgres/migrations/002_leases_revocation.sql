-- 002: execution leases and fencing, revocation, the distinct outcomes of
-- a run, approver groups, and the time of the chain head.

-- New states: revoked (approved, then revoked before it ran), failed (ran;
-- the executor returned an error) and abandoned (consumed, never run).
ALTER TABLE tickets DROP CONSTRAINT tickets_state_check;
ALTER TABLE tickets ADD CONSTRAINT tickets_state_check CHECK (state IN
	('pending', 'approved', 'denied', 'expired', 'cancelled', 'revoked',
	 'executing', 'done', 'failed', 'abandoned'));

-- An executing ticket has an owner (the gate instance running it), a
-- fencing token (1 at consume, one more at each reclaim) and a lease.
-- approvers is the approver group the policy named ('' = only the user).
ALTER TABLE tickets
	ADD COLUMN owner       text NOT NULL DEFAULT '',
	ADD COLUMN fence       bigint NOT NULL DEFAULT 0 CHECK (fence >= 0),
	ADD COLUMN lease_until timestamptz,
	ADD COLUMN approvers   text NOT NULL DEFAULT '';

-- Tickets consumed under 001 get fence 1, as if consumed now. Those a gate
-- of the previous version left executing had no owner and no lease: their
-- lease ended when they were consumed, so any gate reclaims them (and
-- re-runs them with their idempotency key) instead of their staying
-- executing for ever.
UPDATE tickets SET fence = 1 WHERE state IN ('executing', 'done');
UPDATE tickets SET lease_until = consumed_at WHERE state = 'executing';

-- Every ticket that was consumed keeps the intent it was consumed with;
-- an executing one has its token and its lease.
ALTER TABLE tickets DROP CONSTRAINT tickets_check1;
ALTER TABLE tickets ADD CONSTRAINT tickets_consumed_check CHECK
	(state NOT IN ('executing', 'done', 'failed', 'abandoned')
	 OR (idempotency_key <> '' AND consumed_at IS NOT NULL AND fence > 0));
ALTER TABLE tickets ADD CONSTRAINT tickets_executing_check CHECK
	(state <> 'executing' OR lease_until IS NOT NULL);

-- Recovery reads executing tickets by lease end.
DROP INDEX tickets_executing;
CREATE INDEX tickets_executing ON tickets (lease_until, id) WHERE state = 'executing';

-- Listing pages through one or more states by creation time. The pending
-- lists by session and user keep their partial indexes from 001.
CREATE INDEX tickets_list ON tickets (state, created_at, id);

ALTER TABLE credentials ADD COLUMN revoked_at timestamptz;
ALTER TABLE grants ADD COLUMN revoked_at timestamptz;
ALTER TABLE invites ADD COLUMN revoked_at timestamptz;

-- The head keeps its record's time: a record is stamped with the
-- database's clock, but never earlier than the head, so times never
-- decrease along the chain.
ALTER TABLE audit_head ADD COLUMN time bigint NOT NULL DEFAULT 0;
UPDATE audit_head SET time = coalesce((SELECT a.time FROM audit a WHERE a.seq = audit_head.seq), 0);
