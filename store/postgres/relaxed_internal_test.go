package postgres

import (
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// TestRelaxedWritesLeaveNoConnectionRelaxed: the writes that decide
// nothing run with synchronous_commit off, and only their own
// transaction does: racing them, every other statement on the pool runs
// with the server's setting, and afterwards every pooled connection has
// it.
func TestRelaxedWritesLeaveNoConnectionRelaxed(t *testing.T) {
	ctx := t.Context()
	s := testStore(t)
	var server string
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT current_setting('synchronous_commit')`).Scan(&server))
	require.NotEqual(t, "off", server, "the test needs a server that waits for the WAL")

	var inside string
	require.NoError(t, s.relaxedOne(ctx, func(br pgx.BatchResults) error { return br.QueryRow().Scan(&inside) },
		`SELECT current_setting('synchronous_commit')`))
	assert.Equal(t, "off", inside)

	a, _, err := s.Park(ctx, storetest.Ticket("s1", "u1", 1), store.Caps{}, nil)
	require.NoError(t, err)
	require.NoError(t, s.PutCredential(ctx, store.Credential{ID: []byte("cred"), User: "u1",
		PublicKey: []byte("key"), AAGUID: make([]byte, 16), Seal: []byte("seal")}))
	var wg sync.WaitGroup
	settings := make(chan string, 200)
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				switch (g + i) % 4 {
				case 0:
					_, err := s.Show(ctx, a.ID, a.CreatedAt)
					assert.NoError(t, err)
				case 1:
					_, err := s.AddCounts(ctx, []store.CountOp{{Key: "k", Window: a.CreatedAt, Delta: 1},
						{Key: "k", Window: a.CreatedAt}})
					assert.NoError(t, err)
				case 2:
					_ = s.AdvanceSignCount(ctx, []byte("cred"), uint32(g*100+i+1))
				default:
					var v string
					assert.NoError(t, s.pool.QueryRow(ctx, `SELECT current_setting('synchronous_commit')`).Scan(&v))
					settings <- v
				}
			}
		})
	}
	wg.Wait()
	close(settings)
	for v := range settings {
		assert.Equal(t, server, v)
	}
	conns := s.pool.AcquireAllIdle(ctx)
	require.NotEmpty(t, conns)
	for _, c := range conns {
		var v string
		assert.NoError(t, c.QueryRow(ctx, `SELECT current_setting('synchronous_commit')`).Scan(&v))
		assert.Equal(t, server, v)
		c.Release()
	}
	n, err := s.AddCount(ctx, "k", a.CreatedAt, 0)
	require.NoError(t, err)
	assert.EqualValues(t, 20, n, "every count committed")
	shown, err := s.Get(ctx, a.ID)
	require.NoError(t, err)
	assert.False(t, shown.ShownAt.IsZero())
}
