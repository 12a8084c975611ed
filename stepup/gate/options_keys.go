package gate

import (
	"bytes"
	"fmt"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate/internal/core"
	"github.com/agentstepup/asu/stepup/keyring"
)

// WithKeyRing has the gate MAC the approvals it stores with keys, a ring
// that may rotate: new MACs are made with the ring's current key and
// record its id (the evidence's "gate_key"), and Execute, recovery and
// receipts check each MAC under the key it names, as that key stands at
// the store's time. A key retired past its grace verifies nothing: its
// approvals are refused with [stepup.ErrBadAssertion], naming the key.
// Evidence stored before key ids verifies under any key still in force.
//
// keys is read on every MAC, so a [*keyring.Live] whose ring the service
// replaces (a key file re-read) rotates a running gate. Gates sharing a
// store must share the ring; rotate them so that none makes a key current
// before every other holds it (see package keyring). WithKeyRing replaces
// [WithKey]; WithKey(k) is a ring of one key, k, under its
// [keyring.DefaultID].
func WithKeyRing(keys keyring.Source) Option {
	return option(func(g *core.Gate) error {
		if keys == nil || keys.Ring() == nil {
			return fmt.Errorf("%w: nil key ring", stepup.ErrConfig)
		}
		g.Keys = keys
		// Key is what the gate held before rings: the key current now.
		g.Key = bytes.Clone(keys.Ring().Current().Secret)
		return nil
	})
}
