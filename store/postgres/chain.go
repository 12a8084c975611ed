package postgres

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
)

// The chain head is the one row every append of every replica locks, so
// the time an append holds it bounds the decisions per second of the whole
// cluster. An append therefore never holds it across a round trip to the
// client: one statement locks the head, links the record to it, hashes
// it, inserts it and moves the head, inside the database.
//
// Only three fields of a record depend on the head: Seq, PrevHash and
// Time (the clock, never before the head's time). The client makes the
// record's canonical form ([audit.Record.ComputeHash]) with unique
// placeholders in those three places and cuts it there; the statement
// joins the pieces around the real values and hashes them with sha256().
// The client checks the cut against ComputeHash before sending it, so the
// database hashes exactly what ComputeHash would.

// queryAppend appends one record whose cut form is $1..$4 (see cutRecord)
// and whose columns are $5..$25, and returns its seq, time, prev_hash and
// hash.
//
// Before it links to the head, the statement checks the head's row: it is
// the row at the head's seq with the head's hash, its content hashes to
// it (asu_audit_hash, migration 005) and it links to the row before it;
// otherwise asu_audit_damaged fails the statement, and with it the
// decision's transaction, with data_corrupted.
const queryAppend = `WITH h AS (
		SELECT seq, hash, time FROM audit_head FOR UPDATE
	), n AS (
		SELECT CASE WHEN h.seq = 0 OR EXISTS (
				SELECT 1 FROM audit a WHERE a.seq = h.seq AND a.hash = h.hash AND asu_audit_hash(a) = a.hash
					AND a.prev_hash = coalesce((SELECT p.hash FROM audit p WHERE p.seq = h.seq - 1),
						CASE WHEN h.seq = 1 THEN decode(repeat('00', 32), 'hex') END))
			THEN h.seq + 1 ELSE asu_audit_damaged(h.seq) END AS seq, hash AS prev,
			greatest(time, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS time
		FROM h
	), c AS (
		SELECT n.seq, n.prev, n.time, sha256($1::bytea || convert_to(encode(n.prev, 'hex'), 'UTF8') || $2::bytea
			|| convert_to(n.seq::text, 'UTF8') || $3::bytea || convert_to(n.time::text, 'UTF8') || $4::bytea) AS hash
		FROM n
	), ins AS (
		INSERT INTO audit (` + auditColumns + `)
		SELECT c.seq, c.time, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
			$23, $24, $25, c.prev, c.hash
		FROM c
	)
	UPDATE audit_head SET seq = c.seq, hash = c.hash, time = c.time FROM c
	RETURNING c.seq, c.time, c.prev, c.hash`

// errCut is returned when a record's canonical form cannot be cut at its
// placeholders; it is a bug in this package.
var errCut = errors.New("postgres: audit record cannot be cut for the database to chain")

// cutRecord checks and completes r as [store.ChainNext] does, except for
// Seq, PrevHash and Time, and returns it with the arguments of
// queryAppend.
func cutRecord(r audit.Record) (audit.Record, []any, error) {
	// A placeholder also found in the record's text (Args may hold any
	// JSON) makes the cut ambiguous; new placeholders make it unambiguous.
	for range 3 {
		rec, args, err := cutOnce(r)
		if !errors.Is(err, errAmbiguous) {
			return rec, args, err
		}
	}
	return audit.Record{}, nil, errCut
}

// errAmbiguous is returned by cutOnce when a placeholder occurs more than
// once.
var errAmbiguous = errors.New("postgres: placeholder found in the record")

// cutOnce is cutRecord with one draw of placeholders.
func cutOnce(r audit.Record) (audit.Record, []any, error) {
	// Placeholders: a random 16-digit Seq and Time (below 2^53, so canon
	// writes them as plain digits) and a random PrevHash; each must occur
	// once, next to its key.
	var seed [48]byte
	_, _ = rand.Read(seed[:])
	seq := int64(1e15 + binary.BigEndian.Uint64(seed[0:8])%8e15)
	at := int64(1e15 + binary.BigEndian.Uint64(seed[8:16])%8e15)
	var prev canon.Digest
	copy(prev[:], seed[16:48])

	next, err := store.ChainNext(audit.Record{Seq: seq - 1, Hash: prev, Time: at}, r, time.UnixMilli(0))
	if err != nil {
		return audit.Record{}, nil, err
	}
	c, err := canonicalForm(next)
	if err != nil {
		return audit.Record{}, nil, err
	}
	// The cut form must be what ComputeHash hashes.
	h := sha256.New()
	h.Write([]byte(audit.Tag))
	h.Write([]byte{0})
	h.Write(c)
	if !bytes.Equal(h.Sum(nil), next.Hash[:]) {
		return audit.Record{}, nil, errCut
	}
	marks := [3][]byte{
		[]byte(`"prev_hash":"` + prev.String() + `"`),
		[]byte(`"seq":` + strconv.FormatInt(seq, 10)),
		[]byte(`"time":` + strconv.FormatInt(at, 10)),
	}
	keys := [3]int{len(`"prev_hash":"`), len(`"seq":`), len(`"time":`)}
	var pieces [4][]byte
	rest := c
	for i, m := range marks {
		if bytes.Count(c, m) != 1 {
			return audit.Record{}, nil, errAmbiguous
		}
		j := bytes.Index(rest, m)
		if j < 0 {
			return audit.Record{}, nil, errCut // out of order
		}
		pieces[i] = rest[:j+keys[i]]
		rest = rest[j+len(m):]
		if i == 0 {
			rest = append([]byte{'"'}, rest...) // the closing quote of the hex
		}
	}
	pieces[3] = rest
	pieces[0] = append([]byte(audit.Tag+"\x00"), pieces[0]...)

	var args []byte
	if next.Args != nil {
		args = next.Args
	}
	next.Seq, next.Time, next.PrevHash, next.Hash = 0, 0, canon.Digest{}, canon.Digest{}
	return next, []any{pieces[0], pieces[1], pieces[2], pieces[3],
		next.TicketID, next.Task, next.Step, next.Session, next.Tool, next.EffectClass,
		next.ArgsDigest[:], args, next.Principal.User, next.Principal.Agent, next.Principal.Delegations,
		next.PolicyVersion, next.Decision, next.Reason, next.Taint, next.Approver, next.Nonce, next.CardHash,
		next.DecisionMillis, next.Result, next.IdempotencyKey}, nil
}

// canonicalForm is the canonical JSON ComputeHash hashes for r: r with a
// zero Hash and empty lists for nil ones.
func canonicalForm(r audit.Record) ([]byte, error) {
	r.Hash = canon.Digest{}
	if r.Taint == nil {
		r.Taint = []string{}
	}
	if r.Principal.Delegations == nil {
		r.Principal.Delegations = []string{}
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrInvalid, err)
	}
	c, err := canon.Canonicalize(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrInvalid, err)
	}
	return c, nil
}

// queueAppend queues on b the append of r and returns what reads its
// result: r as stored.
func queueAppend(b *pgx.Batch, r audit.Record) (func(pgx.BatchResults) (audit.Record, error), error) {
	rec, args, err := cutRecord(r)
	if err != nil {
		return nil, err
	}
	b.Queue(queryAppend, args...)
	return func(br pgx.BatchResults) (audit.Record, error) {
		out := rec
		var prev, hash []byte
		if err := br.QueryRow().Scan(&out.Seq, &out.Time, &prev, &hash); err != nil {
			return audit.Record{}, err
		}
		copy(out.PrevHash[:], prev)
		copy(out.Hash[:], hash)
		return out, nil
	}, nil
}
