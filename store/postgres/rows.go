package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentstepup/asu/store"
)

// ticketColumns is the column list scanTicket reads, in its order.
const ticketColumns = `id, state, effect, digest, tool, effect_class, card, card_hash, nonce,
	created_at, expires_at, requester_user, requester_agent, requester_delegations,
	user_name, session, task, step, policy_version, taint, rationale, approvers, merged,
	approver, reason, evidence, resolved_at, idempotency_key, consumed_at, owner, fence, lease_until,
	result, finished_at, shown_at, votes, escalates_to, escalates_at`

// scanTicket reads one row of ticketColumns.
func scanTicket(row pgx.Row) (store.Approval, error) {
	var (
		a                            store.Approval
		state                        string
		digest, cardHash, nonce      []byte
		created, expires             pgtype.Timestamptz
		resolved, consumed, finished pgtype.Timestamptz
		lease, shown, escalates      pgtype.Timestamptz
		votes                        []byte
	)
	err := row.Scan(&a.ID, &state, &a.Effect, &digest, &a.Tool, &a.EffectClass, &a.Card, &cardHash, &nonce,
		&created, &expires, &a.Requester.User, &a.Requester.Agent, &a.Requester.Delegations,
		&a.User, &a.Session, &a.Task, &a.Step, &a.PolicyVersion, &a.Taint, &a.Rationale, &a.Approvers, &a.Merged,
		&a.Approver, &a.Reason, &a.Evidence, &resolved, &a.IdempotencyKey, &consumed, &a.Owner, &a.Fence, &lease,
		&a.Result, &finished, &shown, &votes, &a.EscalatesTo, &escalates)
	if err != nil {
		return store.Approval{}, err
	}
	a.State = store.State(state)
	if !validState(a.State) || len(digest) != len(a.Digest) || len(cardHash) != len(a.CardHash) || len(nonce) != len(a.Nonce) {
		return store.Approval{ID: a.ID}, store.CorruptRow("tickets", a.ID, "its state or a hash has a value a ticket never takes")
	}
	copy(a.Digest[:], digest)
	copy(a.CardHash[:], cardHash)
	copy(a.Nonce[:], nonce)
	a.CreatedAt, a.ExpiresAt = fromTS(created), fromTS(expires)
	a.ResolvedAt, a.ConsumedAt, a.FinishedAt = fromTS(resolved), fromTS(consumed), fromTS(finished)
	a.LeaseUntil, a.ShownAt, a.EscalatesAt = fromTS(lease), fromTS(shown), fromTS(escalates)
	if a.Votes, err = decodeVotes(votes); err != nil {
		return store.Approval{ID: a.ID}, store.CorruptRow("tickets", a.ID, "its votes do not parse")
	}
	return a, nil
}

// collectTickets reads every row of ticketColumns.
func collectTickets(rows pgx.Rows) ([]store.Approval, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Approval, error) { return scanTicket(r) })
}

// ts is t as a query argument: NULL for the zero time.
func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// fromTS is a scanned timestamp in UTC, the zero time for NULL.
func fromTS(t pgtype.Timestamptz) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}
