package passkey_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

var gateKey = []byte("the gate key both gates of the test store share")

// handle is the gate's WebAuthn user handle of user, which an attacker's
// own authenticator can put in any assertion.
func handle(user string) []byte {
	h := sha256.Sum256([]byte("asu/v1/user\x00" + user))
	return h[:]
}

// enrolledElsewhere enrolls a fresh authenticator for user through an
// enrollment of its own store sealing with key, and returns it with the
// credential row that enrollment wrote.
func enrolledElsewhere(t *testing.T, user string, key []byte) (*stepuptest.Authenticator, store.Credential) {
	t.Helper()
	ctx := context.Background()
	st := memory.New(nil)
	var opts []passkey.EnrollOption
	if key != nil {
		opts = append(opts, passkey.WithSealKey(key))
	}
	e, err := passkey.NewEnrollment(st, stepuptest.RP(), opts...)
	require.NoError(t, err)
	a, err := stepuptest.Enroll(ctx, e, user)
	require.NoError(t, err)
	row, err := st.GetCredential(ctx, a.CredentialIDs()[0])
	require.NoError(t, err)
	return a, row
}

// TestSealKeepsUnenrolledCredentialsOut plants, for the harness's
// approver, credential rows no enrollment of this deployment sealed for
// her, each with an authenticator the writer holds, and answers her call
// with it. The approver requiring the seal refuses every one; the same
// approver without RequireSeal approves every one, so each row is a real
// attack.
func TestSealKeepsUnenrolledCredentialsOut(t *testing.T) {
	ctx := context.Background()
	plants := map[string]func(t *testing.T, h *stepuptest.Harness) (*stepuptest.Authenticator, store.Credential){
		"unsealed": func(t *testing.T, _ *stepuptest.Harness) (*stepuptest.Authenticator, store.Credential) {
			a, row := enrolledElsewhere(t, stepuptest.Approver, nil)
			return a, row
		},
		"sealed by another deployment": func(t *testing.T, _ *stepuptest.Harness) (*stepuptest.Authenticator, store.Credential) {
			return enrolledElsewhere(t, stepuptest.Approver, bytes.Repeat([]byte("k"), passkey.MinSealKeySize))
		},
		"her own seal copied onto it": func(t *testing.T, h *stepuptest.Harness) (*stepuptest.Authenticator, store.Credential) {
			a, row := enrolledElsewhere(t, stepuptest.Approver, nil)
			real, err := h.Store.GetCredential(ctx, h.Authenticator.CredentialIDs()[0])
			require.NoError(t, err)
			row.Seal = real.Seal
			return a, row
		},
		"a sealed credential of another user moved to her": func(t *testing.T, _ *stepuptest.Harness) (*stepuptest.Authenticator, store.Credential) {
			a, row := enrolledElsewhere(t, "user:eve", stepuptest.SealKey())
			row.User = stepuptest.Approver
			return a, row
		},
		"a seal cut short": func(t *testing.T, _ *stepuptest.Harness) (*stepuptest.Authenticator, store.Credential) {
			a, row := enrolledElsewhere(t, stepuptest.Approver, stepuptest.SealKey())
			row.Seal = row.Seal[:len(row.Seal)-1]
			return a, row
		},
		"a seal with one bit flipped": func(t *testing.T, _ *stepuptest.Harness) (*stepuptest.Authenticator, store.Credential) {
			a, row := enrolledElsewhere(t, stepuptest.Approver, stepuptest.SealKey())
			row.Seal[len(row.Seal)/2] ^= 1
			return a, row
		},
	}
	for name, plant := range plants {
		t.Run(name, func(t *testing.T) {
			for _, sealed := range []bool{true, false} {
				h := stepuptest.NewGate(t, nil, gate.WithKey(gateKey))
				a, row := plant(t, h)
				require.NoError(t, h.Store.PutCredential(ctx, row))
				g := h.Gate
				if !sealed {
					naive, err := passkey.New(h.Store, stepuptest.RP())
					require.NoError(t, err)
					g, err = gate.New(h.Store, stepuptest.SeedCatalog(), naive, gate.WithKey(gateKey), gate.WithDwell(0))
					require.NoError(t, err)
				}
				tk, err := g.Propose(ctx, stepup.Call{Tool: "send_email", Args: []byte(`{"to":"a@example.com"}`),
					Session: "s", Principal: agentFor(stepuptest.Approver)})
				require.NoError(t, err)
				got, err := stepuptest.Approve(ctx, g.Desk(), a, tk.ID,
					stepuptest.WithCredential(row.ID), stepuptest.WithUserHandle(handle(stepuptest.Approver)))
				if !sealed {
					require.NoError(t, err, "control: the approver without RequireSeal takes the planted row")
					assert.Equal(t, stepup.StatusApproved, got.Status)
					continue
				}
				assert.ErrorIs(t, err, passkey.ErrUnknownCredential)
				st, err := g.Ticket(ctx, tk.ID)
				require.NoError(t, err)
				assert.Equal(t, stepup.StatusPending, st.Status)
			}
		})
	}
}

// TestSealIsRecheckedBeforeRunning approves a call with a credential no
// enrollment sealed, at a gate that did not require seals, then runs it
// from a gate of the same store that does: the stored approval does not
// run, and that gate gives no receipt of it.
func TestSealIsRecheckedBeforeRunning(t *testing.T) {
	ctx := context.Background()
	rec := &stepuptest.Recorder{}
	h := stepuptest.NewGate(t, nil, gate.WithKey(gateKey), gate.WithExecutor("send_email", rec))
	a, row := enrolledElsewhere(t, stepuptest.Approver, nil)
	require.NoError(t, h.Store.PutCredential(ctx, row))
	naive, err := passkey.New(h.Store, stepuptest.RP())
	require.NoError(t, err)
	lax, err := gate.New(h.Store, stepuptest.SeedCatalog(), naive, gate.WithKey(gateKey), gate.WithDwell(0),
		gate.WithExecutor("send_email", rec))
	require.NoError(t, err)

	tk, err := lax.Propose(ctx, stepup.Call{Tool: "send_email", Args: []byte(`{"to":"a@example.com"}`),
		Session: "s", Principal: agentFor(stepuptest.Approver)})
	require.NoError(t, err)
	_, err = stepuptest.Approve(ctx, lax.Desk(), a, tk.ID, stepuptest.WithCredential(row.ID))
	require.NoError(t, err)

	_, err = lax.Desk().Receipt(ctx, tk.ID)
	require.NoError(t, err, "control: the lax gate hands out its receipt")
	_, err = h.Gate.Desk().Receipt(ctx, tk.ID)
	assert.ErrorIs(t, err, passkey.ErrUnknownCredential, "no receipt of an approval by an unsealed credential")

	_, err = h.Gate.Execute(ctx, tk.ID)
	assert.ErrorIs(t, err, stepup.ErrBadAssertion)
	assert.Zero(t, rec.Count(), "an approval by an unsealed credential ran at a gate requiring seals")
}

// TestSealKeySize refuses seal keys shorter than MinSealKeySize on both
// sides.
func TestSealKeySize(t *testing.T) {
	short := make([]byte, passkey.MinSealKeySize-1)
	_, err := passkey.New(memory.New(nil), stepuptest.RP(), passkey.RequireSeal(short))
	assert.ErrorIs(t, err, stepup.ErrConfig)
	_, err = passkey.NewEnrollment(memory.New(nil), stepuptest.RP(), passkey.WithSealKey(short))
	assert.ErrorIs(t, err, stepup.ErrConfig)
	_, err = passkey.New(memory.New(nil), stepuptest.RP(), passkey.RequireSeal(make([]byte, passkey.MinSealKeySize)))
	assert.NoError(t, err)
}
