package store_test

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := store.NewID()
		raw, err := hex.DecodeString(id)
		require.NoError(t, err)
		assert.Len(t, raw, 16)
		assert.False(t, seen[id], "ids repeat")
		seen[id] = true
	}
}

func TestStateValid(t *testing.T) {
	for _, s := range []store.State{store.Pending, store.Approved, store.Denied, store.Expired,
		store.Cancelled, store.Executing, store.Done} {
		assert.True(t, s.Valid(), s)
	}
	for _, s := range []store.State{"", "PENDING", "approved ", "used"} {
		assert.False(t, s.Valid(), s)
	}
}

func TestResolutionCheck(t *testing.T) {
	cases := []struct {
		name string
		r    store.Resolution
		want error
	}{
		{"approve", store.Resolution{To: store.Approved, At: t0}, nil},
		{"cancel", store.Resolution{To: store.Cancelled, At: t0}, nil},
		{"to done", store.Resolution{To: store.Done, At: t0}, store.ErrInvalid},
		{"no time", store.Resolution{To: store.Denied}, store.ErrInvalid},
		{"big reason", store.Resolution{To: store.Denied, At: t0, Reason: strings.Repeat("r", store.MaxFieldSize+1)}, store.ErrTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.r.Check()
			if c.want == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, c.want)
			}
		})
	}
}

func TestCheckRefusalsNameNoValues(t *testing.T) {
	a := storetest.Ticket("secret-session", "secret-user", 1)
	a.Rationale = strings.Repeat("secret", store.MaxFieldSize)
	err := a.Check()
	require.ErrorIs(t, err, store.ErrTooLarge)
	assert.NotContains(t, err.Error(), "secret")
}

func TestChainNext(t *testing.T) {
	r1, err := store.ChainNext(receipt.AuditRecord{}, storetest.Record("task", t0))
	require.NoError(t, err)
	assert.Equal(t, int64(1), r1.Seq)
	assert.True(t, r1.PrevHash.IsZero())
	in := storetest.Record("task", t0)
	in.Args = json.RawMessage(`{ "b": 2, "a": 1 }`)
	in.Seq, in.PrevHash = 77, canon.Digest{9} // ignored
	r2, err := store.ChainNext(r1, in)
	require.NoError(t, err)
	assert.Equal(t, int64(2), r2.Seq)
	assert.Equal(t, r1.Hash, r2.PrevHash)
	assert.Equal(t, json.RawMessage(`{"a":1,"b":2}`), r2.Args, "args become canonical")
	assert.NoError(t, receipt.VerifyChain([]receipt.AuditRecord{r1, r2}, canon.Digest{}))

	in.Args = json.RawMessage(`{"a":1,"a":2}`)
	_, err = store.ChainNext(r2, in)
	assert.ErrorIs(t, err, store.ErrInvalid, "args canon refuses cannot be chained")
}
