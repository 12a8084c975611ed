-- 005: the database checks the row an append links to. asu_audit_hash(a)
-- is receipt.AuditRecord.ComputeHash of the record in row a: SHA-256 of
-- "asu/v1/audit", a zero byte and the record's RFC 8785 form with its
-- hash set to zeros. That form is built here key by key, in RFC 8785's
-- order; to_json escapes text exactly as RFC 8785 does (", \, \b, \f, \n,
-- \r, \t, other control characters as \u00xx, everything else as is), the
-- integers are within 2^53 (the store refuses others) and args is kept
-- canonical. asu_audit_damaged raises data_corrupted (XX001), which the
-- store reports as store.ErrCorrupt, so the transaction of a decision
-- whose head does not check rolls back whole.
CREATE FUNCTION asu_audit_hash(a audit) RETURNS bytea LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT sha256(convert_to('asu/v1/audit', 'UTF8') || decode('00', 'hex') || convert_to(
		'{"approver":' || to_json(a.approver)::text
		|| CASE WHEN a.args IS NOT NULL AND length(a.args) > 0 THEN ',"args":' || convert_from(a.args, 'UTF8') ELSE '' END
		|| ',"args_digest":"' || encode(a.args_digest, 'hex') || '"'
		|| ',"card_hash":' || to_json(a.card_hash)::text
		|| ',"decision":' || to_json(a.decision)::text
		|| ',"decision_millis":' || a.decision_millis::text
		|| ',"effect_class":' || to_json(a.effect_class)::text
		|| ',"hash":"' || repeat('0', 64) || '"'
		|| ',"idempotency_key":' || to_json(a.idempotency_key)::text
		|| ',"nonce":' || to_json(a.nonce)::text
		|| ',"policy_version":' || to_json(a.policy_version)::text
		|| ',"prev_hash":"' || encode(a.prev_hash, 'hex') || '"'
		|| ',"principal":{"agent":' || to_json(a.principal_agent)::text
		|| ',"delegations":' || coalesce(array_to_json(a.principal_delegations)::text, '[]')
		|| ',"user":' || to_json(a.principal_user)::text || '}'
		|| ',"reason":' || to_json(a.reason)::text
		|| ',"result":' || to_json(a.result)::text
		|| ',"seq":' || a.seq::text
		|| ',"session":' || to_json(a.session)::text
		|| ',"step":' || to_json(a.step)::text
		|| ',"taint":' || coalesce(array_to_json(a.taint)::text, '[]')
		|| ',"task":' || to_json(a.task)::text
		|| ',"ticket_id":' || to_json(a.ticket_id)::text
		|| ',"time":' || a.time::text
		|| ',"tool":' || to_json(a.tool)::text
		|| '}', 'UTF8'))
$$;

CREATE FUNCTION asu_audit_damaged(seq bigint) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	RAISE EXCEPTION 'audit seq % does not match the chain head, its own hash or the record before it', seq
		USING ERRCODE = 'data_corrupted';
END
$$;
