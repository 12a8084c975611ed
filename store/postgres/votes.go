package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentstepup/asu/store"
)

// The statements of Show and Vote.
var (
	// queryShow sets shown_at unless an earlier showing did: the first
	// showing counts.
	queryShow = `UPDATE tickets SET shown_at = coalesce(shown_at, $2) WHERE id = $1 RETURNING ` + ticketColumns
	// queryVote appends the vote $2 to a pending ticket's tally and, when
	// the tally then reaches the quorum $5, approves the ticket by $3 at
	// $4 for the reason $6. It is one conditional UPDATE: votes on one
	// ticket queue on its row lock, and PostgreSQL evaluates the WHERE
	// clause and every SET expression against the row the previous vote
	// left, so two approvers voting at once both count and one approver
	// voting twice matches nothing the second time. The caller's time is
	// compared with the database's clock in the same statement.
	queryVote = `UPDATE tickets SET
			votes = coalesce(votes, '[]'::jsonb) || jsonb_build_array($2::jsonb),
			state = CASE WHEN ` + quorumMet + ` THEN 'approved' ELSE state END,
			approver = CASE WHEN ` + quorumMet + ` THEN $3::text ELSE approver END,
			reason = CASE WHEN ` + quorumMet + ` THEN $6::text ELSE reason END,
			evidence = CASE WHEN ` + quorumMet + ` THEN NULL ELSE evidence END,
			resolved_at = CASE WHEN ` + quorumMet + ` THEN $4::timestamptz ELSE resolved_at END,
			shown_at = CASE WHEN ` + quorumMet + ` THEN shown_at ELSE NULL END
		WHERE id = $1 AND state = 'pending' AND expires_at > $4::timestamptz AND ` + skewOK(4) + `
			AND NOT ` + votedBy(3) + `
		RETURNING ` + ticketColumns
	// quorumMet says whether one more vote reaches the quorum $5.
	quorumMet = `jsonb_array_length(coalesce(votes, '[]'::jsonb)) + 1 >= $5::integer`
)

// votedBy is the SQL condition that the approver $n voted on the row.
func votedBy(n int) string {
	return fmt.Sprintf(`coalesce(votes, '[]'::jsonb) @> jsonb_build_array(jsonb_build_object('approver', $%d::text))`, n)
}

// Show implements [store.Votes]. A ticket's ShownAt never changes once
// set, so a ticket already shown is answered by a read that writes
// nothing; the first showing is one UPDATE, in a transaction that does
// not wait for the WAL (see Durability in the package doc).
func (s *Store) Show(ctx context.Context, id string, at time.Time) (store.Approval, error) {
	const op = "show"
	if err := store.CheckTime(at); err != nil {
		return store.Approval{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := s.enter(ctx); err != nil {
		return store.Approval{}, s.fail(ctx, op, err)
	}
	a, err := scanTicket(s.pool.QueryRow(ctx, `SELECT `+ticketColumns+` FROM tickets WHERE id = $1`, id))
	if err == nil && a.ShownAt.IsZero() {
		err = s.relaxedOne(ctx, func(br pgx.BatchResults) (err error) {
			a, err = scanTicket(br.QueryRow())
			return err
		}, queryShow, id, at)
	}
	if errNoRow(err) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Approval{}, s.fail(ctx, op, err)
	}
	return a, nil
}

// Vote implements [store.Votes] with one conditional UPDATE (queryVote)
// and the audit row in one transaction, as Resolve does; only when the
// UPDATE changes nothing is the ticket read again, in the same
// transaction, to say why.
func (s *Store) Vote(ctx context.Context, id string, v store.Vote, quorum int, reason string, note store.Note) (store.Approval, error) {
	const op = "vote"
	if err := store.CheckVote(v, quorum, reason); err != nil {
		return store.Approval{}, fmt.Errorf("%s: %w", op, err)
	}
	vote, _ := json.Marshal(toJSON(v)) // strings, bytes and integers always marshal
	args := []any{id, vote, v.Approver, v.At, quorum, reason}
	return s.decide(ctx, op, note, queryVote, args, func(q querier) error { return whyNoVote(ctx, q, id, v) })
}

// whyNoVote says why Vote changed nothing, in the order the memory store
// refuses: no ticket, not pending, the caller's clock, expiry, a second
// vote by one approver.
func whyNoVote(ctx context.Context, q querier, id string, v store.Vote) error {
	var (
		now     time.Time
		state   pgtype.Text
		expires pgtype.Timestamptz
		voted   pgtype.Bool
	)
	err := q.QueryRow(ctx, `SELECT clock_timestamp(), t.state, t.expires_at, `+votedBy(2)+`
		FROM (SELECT 1) AS one LEFT JOIN tickets t ON t.id = $1`, id, v.Approver).
		Scan(&now, &state, &expires, &voted)
	switch {
	case err != nil:
		return err
	case !state.Valid:
		return store.ErrNotFound
	case store.State(state.String) != store.Pending:
		return store.ErrResolved
	}
	if err := store.CheckSkew(v.At, now); err != nil {
		return err
	}
	switch {
	case !v.At.Truncate(time.Microsecond).Before(fromTS(expires)):
		return store.ErrExpired
	case voted.Bool:
		return store.ErrDuplicate
	}
	// Pending, yet not voted on: only a concurrent change explains it.
	return store.ErrResolved
}

// voteJSON is one element of the votes column.
type voteJSON struct {
	Approver string `json:"approver"`
	Evidence []byte `json:"evidence,omitempty"`
	At       int64  `json:"at"` // Unix microseconds
}

// checkVotes refuses votes that encodeVotes could not store as given:
// encoding/json would rewrite text that is not UTF-8.
func checkVotes(votes []store.Vote) error {
	for _, v := range votes {
		if !utf8.ValidString(v.Approver) {
			return fmt.Errorf("%w: approver is not UTF-8", store.ErrInvalid)
		}
	}
	return nil
}

// encodeVotes returns votes, checked by checkVotes, as the votes column
// stores them: nil (NULL) for none, else a JSON array in the order given.
func encodeVotes(votes []store.Vote) []byte {
	if len(votes) == 0 {
		return nil
	}
	out := make([]voteJSON, len(votes))
	for i, v := range votes {
		out[i] = toJSON(v)
	}
	b, _ := json.Marshal(out)
	return b
}

// toJSON is v as the votes column keeps it.
func toJSON(v store.Vote) voteJSON {
	return voteJSON{Approver: v.Approver, Evidence: v.Evidence, At: v.At.UnixMicro()}
}

// decodeVotes reads what encodeVotes wrote.
// errVotes is decodeVotes's refusal of a column the store did not write.
var errVotes = errors.New("postgres: votes do not parse")

func decodeVotes(col []byte) ([]store.Vote, error) {
	if col == nil {
		return nil, nil
	}
	var in []voteJSON
	if err := json.Unmarshal(col, &in); err != nil {
		return nil, errVotes
	}
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]store.Vote, len(in))
	for i, v := range in {
		out[i] = store.Vote{Approver: v.Approver, Evidence: v.Evidence, At: time.UnixMicro(v.At).UTC()}
	}
	return out, nil
}
