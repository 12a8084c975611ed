package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
)

// Park implements [store.Tickets]. A pending ticket is parked under
// transaction-scoped advisory locks on the session and then the user
// (always in that order, so two parks never wait on each other in a
// cycle); while they are held no other replica can park in that session
// or for that user, so the merge lookup and the cap counts see every
// ticket parked before, and the cap holds. An approved ticket merges with
// nothing and counts against no cap, so it takes no lock. The audit row is
// appended in the same transaction.
func (s *Store) Park(ctx context.Context, a store.Approval, caps store.Caps, note store.Note) (store.Approval, bool, error) {
	const op = "park"
	if err := a.Check(); err != nil {
		return store.Approval{}, false, fmt.Errorf("%s: %w", op, err)
	}
	if err := checkVotes(a.Votes); err != nil {
		return store.Approval{}, false, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return store.Approval{}, false, s.fail(ctx, op, err)
	}
	a = newTicket(a)
	var (
		out    store.Approval
		merged bool
	)
	err := s.inTxn(ctx, func(t *txn) error {
		var err error
		if a.State == store.Pending {
			out, merged, err = parkPending(ctx, t, a, caps)
		} else {
			b := &pgx.Batch{}
			b.Queue(queryInsertTicket, insertArgs(a)...)
			out, err = readTicket(t.send(ctx, b))
		}
		if err != nil {
			return err
		}
		return t.commitNoted(ctx, note, merged, out)
	})
	if err != nil {
		return store.Approval{}, false, s.fail(ctx, op, err)
	}
	return out, merged, nil
}

// newTicket fills in what a checked new ticket leaves to the store: an id,
// the pending state, the time of an approval made with the ticket.
func newTicket(a store.Approval) store.Approval {
	if a.ID == "" {
		a.ID = store.NewID()
	}
	if a.State == "" {
		a.State = store.Pending
	}
	if a.State == store.Approved && a.ResolvedAt.IsZero() {
		a.ResolvedAt = a.CreatedAt
	}
	return a
}

// parkPending merges a into an identical live pending ticket or stores it
// as a new one within caps, under the session and user locks. The first
// round trip begins the transaction, takes the locks and tries the merge;
// the second, when there is nothing to merge into, counts against the
// caps and inserts.
func parkPending(ctx context.Context, t *txn, a store.Approval, caps store.Caps) (store.Approval, bool, error) {
	b := &pgx.Batch{}
	// A batch runs its statements in order, so every Park takes the
	// session lock before the user lock.
	b.Queue(queryLock, lockSession, a.Session)
	b.Queue(queryLock, lockUser, a.User)
	// A live pending duplicate takes the merge, even at the cap.
	b.Queue(queryMerge, mergeArgs(a)...)
	dup, err := readTicket(t.send(ctx, b), 2)
	switch {
	case err == nil:
		return dup, true, nil
	case !errNoRow(err):
		return store.Approval{}, false, err
	}

	b = &pgx.Batch{}
	limits := []struct {
		what  string
		limit int
		query string
		args  []any
	}{
		// A session id is the agent's own name for its run: two
		// principals' sessions may share one, so a session counts one
		// user's tickets through one agent.
		{"session", caps.PerSession, querySessionCap, []any{a.Session, a.CreatedAt, caps.PerSession, a.User, a.Requester.Agent}},
		{"user", caps.PerUser, queryUserCap, []any{a.User, a.CreatedAt, caps.PerUser}},
	}
	for _, c := range limits {
		if c.limit > 0 {
			b.Queue(c.query, c.args...)
		}
	}
	// Queued with the counts, so the insert runs before they are read: a
	// full cap rolls it back with the transaction.
	b.Queue(queryInsertTicket, insertArgs(a)...)
	br := t.send(ctx, b)
	for _, c := range limits {
		if c.limit <= 0 {
			continue
		}
		var n int
		if err := br.QueryRow().Scan(&n); err != nil {
			_ = br.Close()
			return store.Approval{}, false, err
		}
		if n >= c.limit {
			_ = br.Close()
			return store.Approval{}, false, fmt.Errorf("%s: %w", c.what, store.ErrPendingCap)
		}
	}
	out, err := readTicket(br)
	return out, false, err
}

// readTicket reads a batch's results: skip statements whose results do
// not matter (locks), then a ticket row or pgx.ErrNoRows. A failure of the
// batch itself wins over no row.
func readTicket(br pgx.BatchResults, skip ...int) (store.Approval, error) {
	var err error
	for _, n := range skip {
		for range n {
			if _, err = br.Exec(); err != nil {
				break
			}
		}
	}
	var a store.Approval
	if err == nil {
		a, err = scanTicket(br.QueryRow())
	}
	if cerr := br.Close(); cerr != nil && (err == nil || errNoRow(err)) {
		err = cerr
	}
	return a, err
}

// The statements of Park. Each reads only pending tickets of one session
// or user through a partial index, so its cost does not grow with the
// table (TestQueryPlans checks the plans).
const (
	// queryLock takes the advisory lock ($1, hash of the schema and $2)
	// until the transaction ends.
	queryLock = `SELECT pg_advisory_xact_lock($1, hashtext(current_schema() || '/' || $2))`
	// queryMerge adds a merge to the oldest live pending ticket (at $3)
	// whose proposal is identical to mergeArgs. The outer WHERE repeats
	// the state and expiry: a concurrent Resolve may have decided the
	// ticket the subquery found, and PostgreSQL re-checks only the outer
	// conditions against the row it left.
	queryMerge = `UPDATE tickets SET merged = merged + 1
		WHERE id = (SELECT id FROM tickets
			WHERE session = $1 AND digest = $2 AND state = 'pending' AND expires_at > $3
			AND user_name = $4 AND requester_user = $5 AND requester_agent = $6
			AND coalesce(requester_delegations, '{}') = coalesce($7::text[], '{}')
			AND coalesce(taint, '{}') = coalesce($8::text[], '{}')
			AND rationale = $9 AND policy_version = $10 AND approvers = $11
			ORDER BY created_at, id LIMIT 1)
		AND state = 'pending' AND expires_at > $3
		RETURNING ` + ticketColumns
	// queryInsertTicket stores a new ticket from insertArgs.
	queryInsertTicket = `INSERT INTO tickets (` + insertColumns + `)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
			$21, $22, $23, $24, $25, $26, $27, $28, $29, $30)
		RETURNING ` + ticketColumns
	insertColumns = `id, state, effect, digest, tool, effect_class, card, card_hash, nonce, created_at, expires_at,
		requester_user, requester_agent, requester_delegations, user_name, session, task, step, policy_version,
		taint, rationale, approvers, approver, reason, evidence, resolved_at, shown_at, votes,
		escalates_to, escalates_at`
)

// mergeArgs is a as the arguments of queryMerge.
func mergeArgs(a store.Approval) []any {
	return []any{a.Session, a.Digest[:], a.CreatedAt, a.User, a.Requester.User, a.Requester.Agent,
		a.Requester.Delegations, a.Taint, a.Rationale, a.PolicyVersion, a.Approvers}
}

// insertArgs is a new ticket as the arguments of queryInsertTicket, in the
// order of insertColumns.
func insertArgs(a store.Approval) []any {
	return []any{a.ID, string(a.State), a.Effect, a.Digest[:], a.Tool, a.EffectClass, a.Card, a.CardHash[:],
		a.Nonce[:], a.CreatedAt, a.ExpiresAt, a.Requester.User, a.Requester.Agent, a.Requester.Delegations,
		a.User, a.Session, a.Task, a.Step, a.PolicyVersion, a.Taint, a.Rationale, a.Approvers,
		a.Approver, a.Reason, a.Evidence, ts(a.ResolvedAt), ts(a.ShownAt), encodeVotes(a.Votes),
		a.EscalatesTo, ts(a.EscalatesAt)}
}

// querySessionCap and queryUserCap count, up to the cap, the live pending
// tickets of a principal's session and of a user; a practice request's
// ticket (its session under audit.PracticeSession) never counts towards a
// user's cap (store.Tickets.Park).
const querySessionCap = `SELECT count(*) FROM (SELECT 1 FROM tickets
		WHERE session = $1 AND user_name = $4 AND requester_agent = $5 AND state = 'pending' AND expires_at > $2
		LIMIT $3) AS live`

var queryUserCap = `SELECT count(*) FROM (SELECT 1 FROM tickets
		WHERE user_name = $1 AND state = 'pending' AND expires_at > $2
		AND left(session, ` + strconv.Itoa(len(audit.PracticeSession)) + `) <> '` + audit.PracticeSession + `' LIMIT $3) AS live`

// Get implements [store.Tickets].
func (s *Store) Get(ctx context.Context, id string) (store.Approval, error) {
	const op = "get ticket"
	if err := s.enterRead(ctx); err != nil {
		return store.Approval{}, s.fail(ctx, op, err)
	}
	a, err := scanTicket(s.pool.QueryRow(ctx, `SELECT `+ticketColumns+` FROM tickets WHERE id = $1`, id))
	if errNoRow(err) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Approval{}, s.fail(ctx, op, err)
	}
	return a, nil
}

// The statements of Resolve: one conditional UPDATE each. Approving checks
// the expiry and the caller's clock against the database's in the same
// statement.
var (
	queryApprove = `UPDATE tickets SET state = 'approved', approver = $2, reason = $3, evidence = $4, resolved_at = $5
		WHERE id = $1 AND state = 'pending' AND expires_at > $5 AND ` + skewOK(5) + `
		RETURNING ` + ticketColumns
	queryDecide = `UPDATE tickets SET state = $6, approver = $2, reason = $3, evidence = $4, resolved_at = $5
		WHERE id = $1 AND state = 'pending'
		RETURNING ` + ticketColumns
	// A revocation keeps the approval it revokes (approver, evidence) and
	// records its reason and time.
	queryRevoke = `UPDATE tickets SET state = 'revoked', reason = $2, finished_at = $3
		WHERE id = $1 AND state = 'approved'
		RETURNING ` + ticketColumns
)

// Resolve implements [store.Tickets] with one conditional UPDATE and the
// audit row in one transaction; only when the UPDATE changes nothing is
// the ticket read again, in the same transaction, to say why.
func (s *Store) Resolve(ctx context.Context, id string, r store.Resolution, note store.Note) (store.Approval, error) {
	const op = "resolve"
	if err := r.Check(); err != nil {
		return store.Approval{}, fmt.Errorf("%s: %w", op, err)
	}
	query, args := queryDecide, []any{id, r.Approver, r.Reason, r.Evidence, r.At, string(r.To)}
	switch r.To {
	case store.Approved:
		query, args = queryApprove, args[:5]
	case store.Revoked:
		query, args = queryRevoke, []any{id, r.Reason, r.At}
	}
	return s.decide(ctx, op, note, query, args, func(q querier) error { return whyNotResolved(ctx, q, id, r) })
}

// whyNotResolved says why Resolve changed nothing.
func whyNotResolved(ctx context.Context, q querier, id string, r store.Resolution) error {
	st, err := explainTicket(ctx, q, id)
	switch {
	case err != nil:
		return err
	case !st.found:
		return store.ErrNotFound
	}
	if r.To == store.Approved {
		if err := store.CheckSkew(r.At, st.now); err != nil {
			return err
		}
	}
	switch {
	case r.To == store.Revoked || st.state != store.Pending:
		return store.ErrResolved
	case r.To == store.Approved:
		return store.ErrExpired
	}
	// Pending, yet not decided: only a concurrent change explains it.
	return store.ErrResolved
}

// ExpirePending implements [store.Sweeper]: one UPDATE and the audit rows,
// in the expired tickets' order, in one transaction.
func (s *Store) ExpirePending(ctx context.Context, now time.Time, note store.Note) ([]store.Approval, error) {
	const op = "expire pending"
	if err := store.CheckTime(now); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return nil, s.fail(ctx, op, err)
	}
	var out []store.Approval
	err := s.inTxn(ctx, func(t *txn) error {
		b := &pgx.Batch{}
		b.Queue(`WITH expired AS (
				UPDATE tickets SET state = 'expired', resolved_at = $1
				WHERE state = 'pending' AND expires_at <= $1
				RETURNING `+ticketColumns+`)
			SELECT `+ticketColumns+` FROM expired ORDER BY expires_at, id`, now)
		br := t.send(ctx, b)
		rows, err := br.Query()
		if err == nil {
			out, err = collectTickets(rows)
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		return t.commitNoted(ctx, note, false, out...)
	})
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return out, nil
}

// List implements [store.Tickets] with keyset pagination: a page starts
// after the (CreatedAt, ID) of the cursor's ticket, so tickets parked
// meanwhile are neither skipped nor repeated. A filter naming States reads
// the index on (state, created_at, id), so its pages cost what the tickets
// in those states cost, not the whole table; a filter without States reads
// the whole table for each page.
func (s *Store) List(ctx context.Context, f store.Filter) ([]store.Approval, string, error) {
	const op = "list"
	if err := f.Check(); err != nil {
		return nil, "", fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enterRead(ctx); err != nil {
		return nil, "", s.fail(ctx, op, err)
	}
	var (
		where []string
		args  []any
	)
	add := func(cond string, arg any) {
		args = append(args, arg)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if len(f.States) > 0 {
		states := make([]string, len(f.States))
		for i, st := range f.States {
			states[i] = string(st)
		}
		add(`state = ANY($%d)`, states)
	}
	if f.User != "" {
		add(`user_name = $%d`, f.User)
	}
	if f.Session != "" {
		add(`session = $%d`, f.Session)
	}
	if f.Approvers != "" {
		add(`approvers = $%d`, f.Approvers)
	}
	if f.After != "" {
		add(`(created_at, id) > (SELECT created_at, id FROM tickets WHERE id = $%d)`, f.After)
	}
	size := f.PageSize()
	query := `SELECT ` + ticketColumns + ` FROM tickets`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, ` AND `)
	}
	args = append(args, size+1)
	query += fmt.Sprintf(` ORDER BY created_at, id LIMIT $%d`, len(args))

	var page []store.Approval
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		if page, err = collectTickets(rows); err != nil || len(page) > 0 || f.After == "" {
			return err
		}
		// An empty page: say whether the cursor names no ticket at all.
		var known bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tickets WHERE id = $1)`, f.After).Scan(&known); err != nil {
			return err
		}
		if !known {
			return fmt.Errorf("cursor: %w", store.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return nil, "", s.fail(ctx, op, err)
	}
	next := ""
	if len(page) > size {
		page = page[:size]
		next = page[size-1].ID
	}
	return page, next, nil
}

// Queue implements [store.Tickets.Queue]: one index range per source (the
// user's pending tickets, each group's), each at most a page and one more,
// read in one transaction and merged.
func (s *Store) Queue(ctx context.Context, q store.QueueFilter) ([]store.Approval, string, error) {
	const op = "queue"
	if err := q.Check(); err != nil {
		return nil, "", fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enterRead(ctx); err != nil {
		return nil, "", s.fail(ctx, op, err)
	}
	n := q.PageSize()
	var page []store.Approval
	next := ""
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		after := ``
		args := []any{nil, q.Now, n + 1}
		if q.After != "" {
			var expires time.Time
			err := tx.QueryRow(ctx, `SELECT expires_at FROM tickets WHERE id = $1`, q.After).Scan(&expires)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("cursor: %w", store.ErrNotFound)
			}
			if err != nil {
				return err
			}
			after = ` AND (expires_at, id) > ($4, $5)`
			args = append(args, expires, q.After)
		}
		read := func(column, value string) ([]store.Approval, error) {
			args[0] = value
			escalated := ``
			if column == "escalates_to" {
				escalated = ` AND escalates_to <> '' AND escalates_at <= $2`
			}
			rows, err := tx.Query(ctx, `SELECT `+ticketColumns+` FROM tickets WHERE state = 'pending' AND `+column+
				` = $1 AND expires_at > $2`+escalated+after+` ORDER BY expires_at, id LIMIT $3`, args...)
			if err != nil {
				return nil, err
			}
			return collectTickets(rows)
		}
		var sources [][]store.Approval
		if q.User != "" {
			p, err := read("user_name", q.User)
			if err != nil {
				return err
			}
			sources = append(sources, p)
		}
		for _, g := range q.Groups {
			for _, column := range []string{"approvers", "escalates_to"} {
				p, err := read(column, g)
				if err != nil {
					return err
				}
				sources = append(sources, p)
			}
		}
		page, next = q.MergeQueue(sources...)
		return nil
	})
	if err != nil {
		return nil, "", s.fail(ctx, op, err)
	}
	return page, next, nil
}
