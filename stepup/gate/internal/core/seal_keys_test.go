package core

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/keyring"
	"github.com/agentstepup/asu/store"
)

var sealT0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// TestSealNamesItsKeyAndVerifiesAcrossRotation: a seal names the key that
// made it, verifies under that key while it is current, verify-only or
// retired within its grace, and is refused, as bad evidence naming the
// key, once the grace ended. A seal written before key ids verifies under
// any key still in force.
func TestSealNamesItsKeyAndVerifiesAcrossRotation(t *testing.T) {
	old := bytes.Repeat([]byte{1}, 32)
	ring, err := keyring.Single(old)
	require.NoError(t, err)
	live := keyring.NewLive(ring)
	g := &Gate{cfg: Config{Keys: live}}
	a := store.Approval{ID: "t1", Approver: "policy:v1", PolicyVersion: "v1", ExpiresAt: sealT0.Add(time.Hour)}
	a.Evidence = g.Seal(a, a.Approver)
	var ev sealEvidence
	require.NoError(t, json.Unmarshal(a.Evidence, &ev))
	assert.Equal(t, keyring.DefaultID(old), ev.Key)

	legacy := a
	legacyMAC, _ := g.MAC(a, a.Approver)
	legacy.Evidence, _ = json.Marshal(sealEvidence{MAC: hex.EncodeToString(legacyMAC)})

	rotated, _, err := ring.Rotate(bytes.Repeat([]byte{2}, 32), sealT0, time.Hour)
	require.NoError(t, err)
	live.Set(rotated)

	fresh := a
	fresh.Evidence = g.Seal(a, a.Approver)
	require.NoError(t, json.Unmarshal(fresh.Evidence, &ev))
	assert.Equal(t, rotated.Current().ID, ev.Key)

	for _, tc := range []struct {
		name string
		a    store.Approval
		at   time.Time
		ok   bool
	}{
		{"old key in grace", a, sealT0.Add(59 * time.Minute), true},
		{"legacy in grace", legacy, sealT0.Add(59 * time.Minute), true},
		{"new key", fresh, sealT0.Add(48 * time.Hour), true},
		{"old key after grace", a, sealT0.Add(time.Hour), false},
		{"legacy after grace", legacy, sealT0.Add(time.Hour), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := g.CheckSeal(tc.a, tc.at)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, stepup.ErrBadAssertion)
		})
	}
	err = g.CheckSeal(a, sealT0.Add(time.Hour))
	require.ErrorIs(t, err, keyring.ErrRetired)
	assert.Contains(t, err.Error(), keyring.DefaultID(old))
	assert.Contains(t, err.Error(), "retired")

	// A seal whose key id was swapped for the new key's does not verify.
	forged := a
	forged.Evidence, _ = json.Marshal(sealEvidence{MAC: hex.EncodeToString(legacyMAC), Key: rotated.Current().ID})
	require.ErrorIs(t, g.CheckSeal(forged, sealT0), stepup.ErrBadAssertion)
}

// TestSealedAnswerNamesItsKey: a person's sealed answer opens under the
// key it names during the grace and not after.
func TestSealedAnswerNamesItsKey(t *testing.T) {
	ring, err := keyring.Single(bytes.Repeat([]byte{1}, 32))
	require.NoError(t, err)
	live := keyring.NewLive(ring)
	g := &Gate{cfg: Config{Keys: live}}
	a := store.Approval{ID: "t1", Approver: "user:dana", PolicyVersion: "v1"}
	raw := g.SealAnswer(a, "user:dana", []byte(`{"x":1}`))
	rotated, _, err := ring.Rotate(bytes.Repeat([]byte{2}, 32), sealT0, time.Minute)
	require.NoError(t, err)
	live.Set(rotated)
	got, err := g.OpenAnswerOf(a, "user:dana", raw, sealT0)
	require.NoError(t, err)
	assert.JSONEq(t, `{"x":1}`, string(got))
	_, err = g.OpenAnswerOf(a, "user:dana", raw, sealT0.Add(time.Minute))
	require.ErrorIs(t, err, stepup.ErrBadAssertion)
	require.ErrorIs(t, err, keyring.ErrRetired)
}
