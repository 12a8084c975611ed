package postgres_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/postgres"
	"github.com/agentstepup/asu/store/storetest"
)

// withParam adds a run-time parameter to the test DSN (a URL).
func withParam(d, key, value string) string {
	sep := "?"
	if strings.Contains(d, "?") {
		sep = "&"
	}
	return d + sep + key + "=" + value
}

// TestDurability reads each synchronous_commit a deployment may set, as
// the store's connections see it, and warns through the logger exactly
// when commits are off.
func TestDurability(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		value   string
		off     bool
		standby bool
		risk    string
	}{
		{"off", true, false, "server crash loses the last commits"},
		{"local", false, false, "asynchronous standby"},
		{"on", false, false, "asynchronous standby"},
		{"remote_apply", false, false, "asynchronous standby"},
	} {
		t.Run(tt.value, func(t *testing.T) {
			schema := newSchema(t)
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			s, err := postgres.Open(context.Background(), withParam(named(dsn(t), schema), "synchronous_commit", tt.value),
				&postgres.Options{Schema: schema, Logger: log})
			require.NoError(t, err)
			defer s.Close()
			d := s.Durability()
			assert.Equal(t, tt.value, d.SynchronousCommit)
			assert.Empty(t, d.SynchronousStandbys, "the test cluster has no standby")
			assert.Equal(t, tt.off, d.Off())
			assert.Equal(t, tt.standby, d.WaitsForStandby())
			assert.Contains(t, d.Risk(), tt.risk)
			if tt.off {
				assert.Contains(t, logs.String(), "level=WARN")
				assert.Contains(t, logs.String(), "synchronous_commit=off")
			} else {
				assert.Empty(t, logs.String())
			}
		})
	}
}

// TestDurabilityRisk covers the settings a test cluster without standbys
// cannot take.
func TestDurabilityRisk(t *testing.T) {
	sync := postgres.Durability{SynchronousCommit: "on", SynchronousStandbys: "FIRST 1 (s1)"}
	assert.True(t, sync.WaitsForStandby())
	assert.Contains(t, sync.Risk(), "loses no acknowledged commit")
	mem := postgres.Durability{SynchronousCommit: "remote_write", SynchronousStandbys: "ANY 1 (s1, s2)"}
	assert.True(t, mem.WaitsForStandby())
	assert.Contains(t, mem.Risk(), "memory")
	local := postgres.Durability{SynchronousCommit: "local", SynchronousStandbys: "FIRST 1 (s1)"}
	assert.False(t, local.WaitsForStandby(), "local never waits for a standby")
}

// TestOpenOnDamagedHead: a store opened on a chain whose head row was
// edited refuses to decide from the start, and still reads.
func TestOpenOnDamagedHead(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s := open(t, schema)
	ctx := t.Context()
	for range 3 {
		_, err := s.AppendAudit(ctx, storetest.Record("task", dbNow(t, s)))
		require.NoError(t, err)
	}
	_, err := conn(t, schema).Exec(ctx, `UPDATE audit SET reason = 'edited' WHERE seq = 3`)
	require.NoError(t, err)
	again := open(t, schema)
	_, _, err = again.Park(ctx, storetest.TicketAt("s1", "u1", 1, dbNow(t, again)), store.Caps{}, nil)
	require.ErrorIs(t, err, store.ErrCorrupt, "refused before any append")
	_, err = again.AuditSeq(ctx, 1, 3)
	assert.NoError(t, err, "the intact records still read")
	report, err := again.Check(ctx)
	require.NoError(t, err)
	require.True(t, report.Damaged())
	assert.Equal(t, int64(3), report.Problems[0].FromSeq)
}
