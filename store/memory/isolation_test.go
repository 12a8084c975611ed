package memory_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
	"github.com/agentstepup/asu/store/storetest"
)

// scribble writes over every mutable slice of a: all but the Effect and
// Card, which are immutable and shared (TestTicketSharesEffectAndCard).
func scribble(a *store.Approval, c byte) {
	for _, b := range [][]byte{a.Evidence, a.Result} {
		for i := range b {
			b[i] = c
		}
	}
	for _, l := range [][]string{a.Taint, a.Requester.Delegations} {
		for i := range l {
			l[i] = string(c)
		}
	}
}

// TestParkKeepsItsOwnCopy: a ticket the store keeps shares nothing with
// the Approval the caller passed, the one its note got, or the one Park
// returned, whoever writes to them and whenever, on every path that adds
// a ticket (pending, approved by policy, approved by a grant).
func TestParkKeepsItsOwnCopy(t *testing.T) {
	for _, path := range []string{"pending", "approved", "granted"} {
		t.Run(path, func(t *testing.T) {
			ctx := t.Context()
			s := memory.New(nil)
			at, err := s.Now(ctx)
			require.NoError(t, err)
			in := storetest.TicketAt("s1", "u1", 1, at)
			in.Taint = []string{"web"}
			if path != "pending" {
				in.Card, in.CardHash, in.Nonce = nil, [32]byte{}, [32]byte{}
				in.State, in.Approver, in.Evidence = store.Approved, "policy:v1", []byte(`{"gate_mac":"00"}`)
			}
			want := in.Clone()
			var noteGot store.Approval
			note := func(a store.Approval, _ bool) audit.Record {
				noteGot = a
				scribble(&a, 'N')
				return audit.Record{TicketID: a.ID, Decision: audit.DecisionAllow, ArgsDigest: a.Digest}
			}
			var got store.Approval
			switch path {
			case "granted":
				require.NoError(t, s.PutGrant(ctx, store.Grant{ID: "g1", User: "u1", Spec: []byte(`{}`), Remaining: 1,
					CreatedAt: at, ExpiresAt: at.Add(time.Hour)}))
				got, _, err = s.ParkGranted(ctx, in, "g1", note)
			default:
				got, _, err = s.Park(ctx, in, store.Caps{}, note)
			}
			require.NoError(t, err)
			require.NotEmpty(t, noteGot.Effect, "the note ran")
			want.ID, want.State = got.ID, got.State
			want.ResolvedAt = got.ResolvedAt
			assert.Equal(t, want, got, "the note's writes reached the ticket Park returned")
			scribble(&in, 'I')
			scribble(&got, 'G')
			read, err := s.Get(ctx, want.ID)
			require.NoError(t, err)
			assert.Equal(t, want, read, "the store shares a slice with its caller or the note")
			scribble(&read, 'R')
			again, err := s.Get(ctx, want.ID)
			require.NoError(t, err)
			assert.Equal(t, want, again)
		})
	}
}

// TestTicketSharesEffectAndCard: the store keeps the Effect and Card Park
// was given and hands the same bytes to every reader, at their length, so
// that a cycle costs no copy of them per store call; an append by a reader
// neither reaches the store nor another reader.
func TestTicketSharesEffectAndCard(t *testing.T) {
	ctx := t.Context()
	s := memory.New(nil)
	at, err := s.Now(ctx)
	require.NoError(t, err)
	in := storetest.TicketAt("s1", "u1", 1, at)
	in.Effect = append(make([]byte, 0, len(in.Effect)+64), in.Effect...)
	want := in.Clone()
	got, _, err := s.Park(ctx, in, store.Caps{}, nil)
	require.NoError(t, err)
	read, err := s.Get(ctx, got.ID)
	require.NoError(t, err)
	for _, a := range []store.Approval{got, read} {
		assert.Same(t, &in.Effect[0], &a.Effect[0], "the effect was copied")
		assert.Same(t, &in.Card[0], &a.Card[0], "the card was copied")
		assert.Equal(t, len(a.Effect), cap(a.Effect), "room past the effect's end")
		assert.Equal(t, len(a.Card), cap(a.Card), "room past the card's end")
	}
	grown := append(read.Effect, 'X')
	assert.NotSame(t, &grown[0], &in.Effect[0])
	again, err := s.Get(ctx, got.ID)
	require.NoError(t, err)
	assert.Equal(t, want.Effect, again.Effect)
	assert.Equal(t, want.Card, again.Card)
}

// TestAuditAcrossBlocks: the audit log keeps its records in blocks; a
// chain several blocks long reads back whole, by window across a block's
// end, by task and by head, and verifies.
func TestAuditAcrossBlocks(t *testing.T) {
	ctx := t.Context()
	s := memory.New(nil)
	const n = 2*1024 + 300
	for i := range n {
		task := "even"
		if i%2 == 1 {
			task = "odd"
		}
		_, err := s.AppendAudit(ctx, audit.Record{Task: task, Decision: audit.DecisionDeny, Reason: "r"})
		require.NoError(t, err)
	}
	all, err := s.AuditSeq(ctx, 1, n+1)
	require.NoError(t, err)
	require.Len(t, all, n)
	for i, r := range all {
		require.Equal(t, int64(i+1), r.Seq)
	}
	require.NoError(t, audit.VerifyChain(all, [32]byte{}))
	win, err := s.AuditSeq(ctx, 1000, 1100)
	require.NoError(t, err)
	require.Len(t, win, 100)
	assert.Equal(t, all[999:1099], win)
	require.NoError(t, audit.VerifyChain(win, all[998].Hash))
	odd, err := s.AuditByTask(ctx, "odd")
	require.NoError(t, err)
	assert.Len(t, odd, n/2)
	head, err := s.AuditHead(ctx)
	require.NoError(t, err)
	assert.Equal(t, all[n-1], head)
	rng, err := s.AuditRange(ctx, time.UnixMilli(0), time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, all, rng)
}
