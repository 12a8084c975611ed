package sqlite

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/storetest"
)

// FuzzRecordRoundTrip: an audit record the chain accepts reads back from
// its stored body exactly as appended, hash included, and a body that is
// not a record (a damaged or edited row) is refused without a panic.
func FuzzRecordRoundTrip(f *testing.F) {
	f.Add("deny", "reason <b>&</b>", `{"a":"<x>"}`, `{"seq":1}`)
	f.Add("allow", "\u2028", `{"n":1.5}`, `not json`)
	f.Add("x", "", ``, `{"args":"{"}`)
	f.Fuzz(func(t *testing.T, decision, reason, args, body string) {
		r := storetest.Record("task", t0)
		r.Decision, r.Reason, r.Args = decision, reason, json.RawMessage(args)
		if chained, err := store.ChainNext(audit.Record{}, r, t0); err == nil {
			enc, err := encodeRecord(chained)
			require.NoError(t, err)
			got, err := auditRow{seq: chained.Seq, time: chained.Time, task: chained.Task, hash: chained.Hash[:], body: enc}.decode()
			require.NoError(t, err)
			require.Equal(t, chained, got)
			require.NoError(t, store.CheckRead([]audit.Record{got}))
			h, err := got.ComputeHash()
			require.NoError(t, err)
			require.Equal(t, chained.Hash, h)
		}
		// A body that is not the record the row claims is refused as damage.
		if got, err := (auditRow{seq: 1, hash: make([]byte, 32), body: body}).decode(); err != nil {
			require.ErrorIs(t, err, store.ErrCorrupt)
		} else if err := store.CheckRead([]audit.Record{got}); err != nil {
			require.ErrorIs(t, err, store.ErrCorrupt)
		}
	})
}
