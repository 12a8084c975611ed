package attackkit_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/attackkit"
)

// selfCertified hands out records with a key of its own choosing, not
// the approver's: what a record that nobody else can check amounts to.
type selfCertified struct{ *attackkit.Desk }

func (s selfCertified) Receipt(ctx context.Context, id stepup.TicketID) (attackkit.Evidence, error) {
	ev, err := s.Desk.Receipt(ctx, id)
	if err != nil {
		return ev, err
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return ev, err
	}
	ev.Key, err = receipt.NewTrustedKey(&k.PublicKey)
	return ev, err
}

// TestRecordUnderAnotherKeyBreaks shows the record attack bites: the
// approval is real, but a third party holding the key the integration
// names cannot verify it.
func TestRecordUnderAnotherKeyBreaks(t *testing.T) {
	rep := attackkit.Assess(t, func(t testing.TB, tools *attackkit.Tools) attackkit.Target {
		h := harness(t, tools)
		return attackkit.Target{Runtime: h.Gate, People: selfCertified{desk(h)}}
	})
	r, ok := rep.Result("record forged or altered")
	require.True(t, ok)
	assert.Equal(t, attackkit.Broken, r.Outcome)
	assert.Contains(t, r.Detail, "does not verify offline")
}
