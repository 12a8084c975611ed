package gate_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/postgres"
)

// TestTooSoonRefusedByEveryReplica: an answer one gate refused as too
// soon is refused, byte for byte, by a second gate on the same database
// (one whose dwell has passed, here none at all), on one SQLite file
// opened twice and on one PostgreSQL schema opened twice; a fresh
// signature then approves on the second gate.
func TestTooSoonRefusedByEveryReplica(t *testing.T) {
	cases := []struct {
		name string
		open func(t *testing.T) (store.Store, store.Store)
	}{
		{"sqlite", func(t *testing.T) (store.Store, store.Store) {
			path := filepath.Join(t.TempDir(), "asu.db")
			clock := stepuptest.NewClock(stepuptest.Start())
			return openSQLiteAt(t, path, clock), openSQLiteAt(t, path, clock)
		}},
		{"postgres", func(t *testing.T) (store.Store, store.Store) {
			dsn := os.Getenv("ASU_POSTGRES_DSN")
			if dsn == "" {
				t.Skip("PostgreSQL tests skipped: set ASU_POSTGRES_DSN (e.g. `source .ci/postgres.sh`) to run them")
			}
			return openPostgresTwice(t, dsn)
		}},
	}
	cat, err := policy.NewCatalog("early-replicas-1", policy.Tool{Name: "wire", Title: "Wire",
		Class: card.ClassIrreversible, Approvers: "finance"})
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			one, two := c.open(t)
			e, err := passkey.NewEnrollment(one, stepuptest.RP(), passkey.WithSealKey(stepuptest.SealKey()))
			require.NoError(t, err)
			erin, err := stepuptest.Enroll(ctx, e, "user:erin")
			require.NoError(t, err)
			newGate := func(st store.Store, dwell time.Duration) *gate.Gate {
				g, err := gate.New(st, cat, stepuptest.Passkeys(st), gate.WithKey(lapseKey),
					gate.WithDwell(dwell), gate.WithApproverGroup("finance", "user:erin"))
				require.NoError(t, err)
				return g
			}
			slow, quick := newGate(one, 10*time.Minute), newGate(two, 0)
			tk, err := slow.Propose(ctx, stepup.Call{Tool: "wire", Args: json.RawMessage(`{"amount":9000}`),
				Session: "s", Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:treasury"}})
			require.NoError(t, err)
			require.Equal(t, stepup.StatusPending, tk.Status, tk.Reason)
			p, err := slow.Desk().Prompt(ctx, tk.ID)
			require.NoError(t, err)
			require.NoError(t, slow.Desk().Show(ctx, tk.ID))
			early, err := erin.Assert(p.Options, stepuptest.WithSignCount(0))
			require.NoError(t, err)
			_, err = slow.Desk().Approve(ctx, tk.ID, early)
			require.ErrorIs(t, err, stepup.ErrTooFast)

			_, err = quick.Desk().Approve(ctx, tk.ID, early)
			require.ErrorIs(t, err, stepup.ErrTooFast, "the other replica refuses the same bytes")
			got, err := quick.Ticket(ctx, tk.ID)
			require.NoError(t, err)
			assert.Equal(t, stepup.StatusPending, got.Status)

			fresh, err := erin.Assert(p.Options, stepuptest.WithSignCount(0))
			require.NoError(t, err)
			got, err = quick.Desk().Approve(ctx, tk.ID, fresh)
			require.NoError(t, err, "a new signature is not the refused one")
			assert.Equal(t, stepup.StatusApproved, got.Status)
		})
	}
}

// openPostgresTwice opens store/postgres twice on one fresh schema of
// dsn's database, as two replicas do, and drops the schema when t ends.
func openPostgresTwice(t *testing.T, dsn string) (store.Store, store.Store) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "early_" + hex.EncodeToString(b[:])
	one, err := postgres.Open(t.Context(), dsn, &postgres.Options{Schema: schema})
	require.NoError(t, err)
	two, err := postgres.Open(t.Context(), dsn, &postgres.Options{Schema: schema})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = one.Close()
		_ = two.Close()
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer func() { _ = conn.Close(ctx) }()
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return one, two
}
