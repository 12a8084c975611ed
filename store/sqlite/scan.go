package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/agentstepup/asu/store"
)

// approvalCols lists the approvals columns in the order scanApproval reads.
const approvalCols = `id, state, effect, digest, tool, effect_class, card, card_hash, nonce,
	created_at, expires_at, requester, user, session, task, step, policy_version, taint, rationale,
	approvers, merged, approver, reason, evidence, resolved_at, idempotency_key, consumed_at, owner,
	fence, lease_until, result, finished_at, shown_at, votes, escalates_to, escalates_at`

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanApproval reads one row of approvalCols.
func scanApproval(row scanner) (store.Approval, error) {
	var (
		a                            store.Approval
		digest, cardHash, nonce      []byte
		requester, taint             string
		created, expires             int64
		resolved, consumed, finished sql.NullInt64
		lease, shown, escalates      sql.NullInt64
		votes                        sql.NullString
		state                        string
	)
	err := row.Scan(&a.ID, &state, &a.Effect, &digest, &a.Tool, &a.EffectClass, &a.Card, &cardHash, &nonce,
		&created, &expires, &requester, &a.User, &a.Session, &a.Task, &a.Step, &a.PolicyVersion, &taint,
		&a.Rationale, &a.Approvers, &a.Merged, &a.Approver, &a.Reason, &a.Evidence, &resolved, &a.IdempotencyKey,
		&consumed, &a.Owner, &a.Fence, &lease, &a.Result, &finished, &shown, &votes, &a.EscalatesTo, &escalates)
	if err != nil {
		return store.Approval{}, err
	}
	a.State = store.State(state)
	if !validState(a.State) {
		return store.Approval{ID: a.ID}, store.CorruptRow("approvals", a.ID, "its state is not one a ticket takes")
	}
	if len(digest) != len(a.Digest) || len(cardHash) != len(a.CardHash) || len(nonce) != len(a.Nonce) {
		return store.Approval{ID: a.ID}, store.CorruptRow("approvals", a.ID, "a digest, card hash or nonce has the wrong length")
	}
	copy(a.Digest[:], digest)
	copy(a.CardHash[:], cardHash)
	copy(a.Nonce[:], nonce)
	a.CreatedAt = fromMicros(sql.NullInt64{Int64: created, Valid: true})
	a.ExpiresAt = fromMicros(sql.NullInt64{Int64: expires, Valid: true})
	a.ResolvedAt, a.ConsumedAt, a.FinishedAt = fromMicros(resolved), fromMicros(consumed), fromMicros(finished)
	a.LeaseUntil, a.ShownAt, a.EscalatesAt = fromMicros(lease), fromMicros(shown), fromMicros(escalates)
	if a.Votes, err = decodeVotes(votes); err != nil {
		return store.Approval{ID: a.ID}, store.CorruptRow("approvals", a.ID, "votes do not parse")
	}
	if err := json.Unmarshal([]byte(requester), &a.Requester); err != nil {
		return store.Approval{ID: a.ID}, store.CorruptRow("approvals", a.ID, "the requester does not parse")
	}
	if err := json.Unmarshal([]byte(taint), &a.Taint); err != nil {
		return store.Approval{ID: a.ID}, store.CorruptRow("approvals", a.ID, "the taint does not parse")
	}
	return a, nil
}

// querier is a runner, or a *sql.DB or *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// getApproval reads ticket id, or store.ErrNotFound.
func getApproval(ctx context.Context, q querier, id string) (store.Approval, error) {
	a, err := scanApproval(q.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, id))
	if err == sql.ErrNoRows {
		return store.Approval{}, store.ErrNotFound
	}
	return a, dbErr(err)
}

// ticketNote runs the note of the ticket id as now stored, inside tx, and
// returns the ticket.
func (s *Store) ticketNote(ctx context.Context, tx runner, id string, note store.Note, merged bool) (store.Approval, error) {
	a, err := getApproval(ctx, tx, id)
	if err != nil {
		return store.Approval{}, err
	}
	return a, s.note(ctx, tx, note, a, merged)
}

// listApprovals reads every ticket matching where (a clause on approvals
// with args), ordered by order (or by where's own ORDER BY when order is
// empty).
func listApprovals(ctx context.Context, q querier, where, order string, args ...any) ([]store.Approval, error) {
	if order != "" {
		where += ` ORDER BY ` + order
	}
	rows, err := q.QueryContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE `+where, args...)
	if err != nil {
		return nil, dbErr(err)
	}
	defer rows.Close()
	var out []store.Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, dbErr(err)
		}
		out = append(out, a)
	}
	return out, dbErr(rows.Err())
}

// placeholders returns n comma-separated question marks.
func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }
