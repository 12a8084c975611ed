package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
)

// queryMerge finds the oldest live pending ticket identical to a new
// proposal, through the approvals_pending_session index. requester and
// taint compare as stored JSON: [encodeLists] spells equal lists alike.
const queryMerge = `SELECT id FROM approvals INDEXED BY approvals_pending_session
	WHERE state = 'pending' AND session = ? AND digest = ? AND expires_at > ?
	AND user = ? AND requester = ? AND taint = ? AND rationale = ? AND policy_version = ? AND approvers = ?
	ORDER BY created_at, id LIMIT 1`

// queryCap counts up to limit live pending tickets of one session or user,
// through the approvals_pending_session or approvals_pending_user index.
// A practice request's ticket never counts towards a user's cap
// (store.Tickets.Park): its session starts with audit.PracticeSession,
// compared exactly (LIKE would fold ASCII case).
func queryCap(column string) string {
	return `SELECT count(*) FROM (SELECT 1 FROM approvals
	WHERE state = 'pending' AND ` + column + ` = ? AND expires_at > ?
	AND substr(session, 1, ` + strconv.Itoa(len(audit.PracticeSession)) + `) <> '` + audit.PracticeSession + `' LIMIT ?)`
}

// querySessionCap counts one user's live pending tickets in a session: a
// session id is the agent's own name for its run, so two users' sessions
// may share one.
const querySessionCap = `SELECT count(*) FROM (SELECT 1 FROM approvals
	WHERE state = 'pending' AND session = ? AND user = ? AND json_extract(requester, '$.agent') = ?
	AND expires_at > ? LIMIT ?)`

// encodeLists returns a's requester and taint as stored: JSON, with a nil
// list spelled as an empty one, so that equal proposals store equal text.
func encodeLists(a store.Approval) (requester, taint string, err error) {
	r := a.Requester
	if r.Delegations == nil {
		r.Delegations = []string{}
	}
	t := a.Taint
	if t == nil {
		t = []string{}
	}
	rb, err := json.Marshal(r)
	if err != nil {
		return "", "", fmt.Errorf("%w: requester", store.ErrInvalid)
	}
	tb, err := json.Marshal(t)
	if err != nil {
		return "", "", fmt.Errorf("%w: taint", store.ErrInvalid)
	}
	return string(rb), string(tb), nil
}

// Park implements [store.Tickets].
func (s *Store) Park(ctx context.Context, a store.Approval, caps store.Caps, note store.Note) (store.Approval, bool, error) {
	if err := a.Check(); err != nil {
		return store.Approval{}, false, fmt.Errorf("sqlite: park: %w", err)
	}
	requester, taint, err := encodeLists(a)
	if err != nil {
		return store.Approval{}, false, fmt.Errorf("sqlite: park: %w", err)
	}
	var out store.Approval
	merged := false
	err = s.write(ctx, "park", func(tx runner) error {
		if a.State == store.Approved {
			var err error
			out, err = s.insertNoted(ctx, tx, a, requester, taint, note)
			return err
		}
		now := a.CreatedAt.UnixMicro()
		var id string
		err := tx.QueryRowContext(ctx, queryMerge, a.Session, a.Digest[:], now, a.User, requester, taint,
			a.Rationale, a.PolicyVersion, a.Approvers).Scan(&id)
		switch {
		case err == nil:
			if _, err := tx.ExecContext(ctx, `UPDATE approvals SET merged = merged + 1 WHERE id = ?`, id); err != nil {
				return dbErr(err)
			}
			merged = true
			out, err = s.ticketNote(ctx, tx, id, note, true)
			return err
		case !errors.Is(err, sql.ErrNoRows):
			return dbErr(err)
		}
		if err := checkSessionCap(ctx, tx, a.Session, a.User, a.Requester.Agent, now, caps.PerSession); err != nil {
			return err
		}
		if err := checkCap(ctx, tx, "user", a.User, now, caps.PerUser); err != nil {
			return err
		}
		out, err = s.insertNoted(ctx, tx, a, requester, taint, note)
		return err
	})
	if err != nil {
		return store.Approval{}, false, err
	}
	return out, merged, nil
}

// insertNoted inserts the new ticket a, checked, with note's row, and
// returns it as stored (times to the microsecond).
func (s *Store) insertNoted(ctx context.Context, tx runner, a store.Approval, requester, taint string, note store.Note) (store.Approval, error) {
	if a.ID == "" {
		a.ID = store.NewID()
	}
	if a.State == store.Approved {
		if a.ResolvedAt.IsZero() {
			a.ResolvedAt = a.CreatedAt
		}
	} else {
		a.State = store.Pending
	}
	votes, err := encodeVotes(a.Votes)
	if err != nil {
		return store.Approval{}, err
	}
	n, err := tx.changes(ctx, `INSERT INTO approvals (id, state, effect, digest, tool, effect_class,
		card, card_hash, nonce, created_at, expires_at, requester, user, session, task, step,
		policy_version, taint, rationale, approvers, approver, reason, evidence, resolved_at, shown_at, votes,
		escalates_to, escalates_at)
		VALUES (`+placeholders(28)+`) ON CONFLICT (id) DO NOTHING`,
		a.ID, a.State, a.Effect, a.Digest[:], a.Tool, a.EffectClass, a.Card, a.CardHash[:], a.Nonce[:],
		a.CreatedAt.UnixMicro(), a.ExpiresAt.UnixMicro(), requester, a.User, a.Session, a.Task, a.Step,
		a.PolicyVersion, taint, a.Rationale, a.Approvers, a.Approver, a.Reason, a.Evidence, micros(a.ResolvedAt),
		micros(a.ShownAt), votes, a.EscalatesTo, micros(a.EscalatesAt))
	if err != nil {
		return store.Approval{}, err
	}
	if n == 0 {
		return store.Approval{}, store.ErrDuplicate
	}
	return s.ticketNote(ctx, tx, a.ID, note, false)
}

// checkCap fails with store.ErrPendingCap when column (session or user)
// already has limit live pending tickets. It reads at most limit index
// entries, whatever the number of tickets.
func checkCap(ctx context.Context, tx runner, column, value string, now int64, limit int) error {
	if limit <= 0 {
		return nil
	}
	var n int
	err := tx.QueryRowContext(ctx, queryCap(column), value, now, limit).Scan(&n)
	if err != nil {
		return dbErr(err)
	}
	if n >= limit {
		return fmt.Errorf("%s: %w", column, store.ErrPendingCap)
	}
	return nil
}

// checkSessionCap is checkCap for one user's tickets in a session.
func checkSessionCap(ctx context.Context, tx runner, session, user, agent string, now int64, limit int) error {
	if limit <= 0 {
		return nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, querySessionCap, session, user, agent, now, limit).Scan(&n); err != nil {
		return dbErr(err)
	}
	if n >= limit {
		return fmt.Errorf("session: %w", store.ErrPendingCap)
	}
	return nil
}

// Get implements [store.Tickets].
func (s *Store) Get(ctx context.Context, id string) (store.Approval, error) {
	if err := s.enterRead(ctx, "get ticket"); err != nil {
		return store.Approval{}, err
	}
	a, err := getApproval(ctx, s.reader(), id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Approval{}, fmt.Errorf("sqlite: get ticket: %w", err)
	}
	if err != nil {
		return store.Approval{}, s.fail(ctx, "get ticket", err)
	}
	return a, nil
}

// Resolve implements [store.Tickets].
func (s *Store) Resolve(ctx context.Context, id string, r store.Resolution, note store.Note) (store.Approval, error) {
	if err := r.Check(); err != nil {
		return store.Approval{}, fmt.Errorf("sqlite: resolve: %w", err)
	}
	var out store.Approval
	err := s.write(ctx, "resolve", func(tx runner) error {
		cur, err := getApproval(ctx, tx, id)
		if err != nil {
			return err
		}
		if r.To == store.Approved {
			if err := s.skew(r.At); err != nil {
				return err
			}
		}
		// Each update names the state it leaves; the approve-before-expiry
		// condition is part of the update, so the check and the change are
		// one statement.
		var n int64
		if r.To == store.Revoked {
			n, err = tx.changes(ctx, `UPDATE approvals SET state = 'revoked', reason = ?, finished_at = ?
				WHERE id = ? AND state = 'approved'`, r.Reason, r.At.UnixMicro(), id)
		} else {
			n, err = tx.changes(ctx, `UPDATE approvals
				SET state = ?, approver = ?, reason = ?, evidence = ?, resolved_at = ?
				WHERE id = ? AND state = 'pending' AND (? <> 'approved' OR expires_at > ?)`,
				r.To, r.Approver, r.Reason, r.Evidence, r.At.UnixMicro(), id, r.To, r.At.UnixMicro())
		}
		if err != nil {
			return err
		}
		switch {
		case n == 1:
			out, err = s.ticketNote(ctx, tx, id, note, false)
			return err
		case r.To == store.Revoked || cur.State != store.Pending:
			return store.ErrResolved
		}
		return store.ErrExpired
	})
	if err != nil {
		return store.Approval{}, err
	}
	return out, nil
}

// ExpirePending implements [store.Sweeper].
func (s *Store) ExpirePending(ctx context.Context, now time.Time, note store.Note) ([]store.Approval, error) {
	if err := store.CheckTime(now); err != nil {
		return nil, fmt.Errorf("sqlite: expire pending: %w", err)
	}
	var out []store.Approval
	err := s.write(ctx, "expire pending", func(tx runner) error {
		due, err := listApprovals(ctx, tx, `state = 'pending' AND expires_at <= ?`, `expires_at, id`, now.UnixMicro())
		if err != nil {
			return err
		}
		out = out[:0]
		for _, a := range due {
			if _, err := tx.ExecContext(ctx, `UPDATE approvals SET state = 'expired', resolved_at = ?
				WHERE id = ? AND state = 'pending'`, now.UnixMicro(), a.ID); err != nil {
				return dbErr(err)
			}
			a, err := s.ticketNote(ctx, tx, a.ID, note, false)
			if err != nil {
				return err
			}
			out = append(out, a)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// List implements [store.Tickets].
func (s *Store) List(ctx context.Context, f store.Filter) ([]store.Approval, string, error) {
	if err := f.Check(); err != nil {
		return nil, "", fmt.Errorf("sqlite: list: %w", err)
	}
	if err := s.enterRead(ctx, "list"); err != nil {
		return nil, "", err
	}
	var where []string
	var args []any
	if f.After != "" {
		var created int64
		err := s.reader().QueryRowContext(ctx, `SELECT created_at FROM approvals WHERE id = ?`, f.After).Scan(&created)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, "", fmt.Errorf("sqlite: list: cursor: %w", store.ErrNotFound)
		}
		if err != nil {
			return nil, "", s.fail(ctx, "list", err)
		}
		where = append(where, `(created_at, id) > (?, ?)`)
		args = append(args, created, f.After)
	}
	if len(f.States) > 0 {
		where = append(where, `state IN (`+placeholders(len(f.States))+`)`)
		for _, st := range f.States {
			args = append(args, string(st))
		}
	}
	for _, c := range []struct{ col, v string }{{"user", f.User}, {"session", f.Session}, {"approvers", f.Approvers}} {
		if c.v != "" {
			where = append(where, c.col+` = ?`)
			args = append(args, c.v)
		}
	}
	if len(where) == 0 {
		where = append(where, `1`)
	}
	limit := f.PageSize()
	args = append(args, limit+1)
	out, err := listApprovals(ctx, s.reader(), strings.Join(where, ` AND `)+` ORDER BY created_at, id LIMIT ?`, ``, args...)
	if err != nil {
		return nil, "", s.fail(ctx, "list", err)
	}
	if len(out) > limit {
		return out[:limit], out[limit-1].ID, nil
	}
	return out, "", nil
}

// queryQueue reads one source of a queue page: the pending tickets whose
// column (user, approvers or escalates_to) is a value, unexpired, after a
// cursor when cursor is set, by expiry; for escalates_to, only those
// escalated by now. Its arguments: the value, now, [the cursor's expiry
// and id,] the limit.
func queryQueue(column string, cursor bool) string {
	after := ``
	if cursor {
		after = ` AND (expires_at, id) > (?, ?)`
	}
	escalated := ``
	if column == "escalates_to" {
		escalated = ` AND escalates_to != '' AND escalates_at <= ?2`
	}
	return `SELECT ` + approvalCols + ` FROM approvals WHERE state = 'pending' AND ` + column +
		` = ?1 AND expires_at > ?2` + escalated + after + ` ORDER BY expires_at, id LIMIT ?`
}

// Queue implements [store.Tickets.Queue]: one index range per source (the
// user's pending tickets, each group's), each at most a page and one more,
// merged.
func (s *Store) Queue(ctx context.Context, q store.QueueFilter) ([]store.Approval, string, error) {
	if err := q.Check(); err != nil {
		return nil, "", fmt.Errorf("sqlite: queue: %w", err)
	}
	if err := s.enterRead(ctx, "queue"); err != nil {
		return nil, "", err
	}
	var cursor []any
	if q.After != "" {
		var expires int64
		err := s.reader().QueryRowContext(ctx, `SELECT expires_at FROM approvals WHERE id = ?`, q.After).Scan(&expires)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, "", fmt.Errorf("sqlite: queue: cursor: %w", store.ErrNotFound)
		}
		if err != nil {
			return nil, "", s.fail(ctx, "queue", err)
		}
		cursor = []any{expires, q.After}
	}
	n := q.PageSize()
	read := func(column, value string) ([]store.Approval, error) {
		args := append(append([]any{value, q.Now.UnixMicro()}, cursor...), n+1)
		rows, err := s.reader().QueryContext(ctx, queryQueue(column, cursor != nil), args...)
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
	var sources [][]store.Approval
	if q.User != "" {
		page, err := read("user", q.User)
		if err != nil {
			return nil, "", s.fail(ctx, "queue", err)
		}
		sources = append(sources, page)
	}
	for _, g := range q.Groups {
		for _, column := range []string{"approvers", "escalates_to"} {
			page, err := read(column, g)
			if err != nil {
				return nil, "", s.fail(ctx, "queue", err)
			}
			sources = append(sources, page)
		}
	}
	page, next := q.MergeQueue(sources...)
	return page, next, nil
}
