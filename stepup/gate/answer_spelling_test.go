package gate_test

import (
	"context"
	"crypto/elliptic"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// respell writes answer (the JSON of navigator.credentials.get) another
// way that a verifier reads as the same assertion: members in another
// order, spaces (past 64 KiB too), \u escapes, base64url padded, and the
// P-256 signature (r, s) as (r, n-s), each or several of them, as r
// picks.
func respell(t *testing.T, r *rand.Rand, answer []byte) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(answer, &m))
	resp := m["response"].(map[string]any)
	if r.IntN(2) == 0 {
		sig, err := base64.RawURLEncoding.DecodeString(resp["signature"].(string))
		require.NoError(t, err)
		var rs struct{ R, S *big.Int }
		_, err = asn1.Unmarshal(sig, &rs)
		require.NoError(t, err)
		rs.S.Sub(elliptic.P256().Params().N, rs.S)
		sig, err = asn1.Marshal(rs)
		require.NoError(t, err)
		resp["signature"] = base64.RawURLEncoding.EncodeToString(sig)
	}
	if r.IntN(2) == 0 {
		for _, k := range []string{"authenticatorData", "clientDataJSON", "signature"} {
			s := resp[k].(string)
			resp[k] = s + strings.Repeat("=", (4-len(s)%4)%4)
		}
	}
	out, err := json.Marshal(m)
	require.NoError(t, err)
	if r.IntN(2) == 0 {
		out = []byte(strings.ReplaceAll(string(out), `"type"`, `"\u0074ype"`))
	}
	if r.IntN(2) == 0 {
		// Members in another order, and spaces: a map written by hand.
		var b strings.Builder
		b.WriteString("{ ")
		keys := []string{"id", "rawId", "type", "response", "clientExtensionResults", "authenticatorAttachment"}
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		first := true
		for _, k := range keys {
			v, ok := m[k]
			if !ok {
				continue
			}
			if !first {
				b.WriteString(" ,\n ")
			}
			first = false
			vb, err := json.Marshal(v)
			require.NoError(t, err)
			fmt.Fprintf(&b, "%q : %s", k, vb)
		}
		b.WriteString(" }")
		out = []byte(b.String())
	}
	if r.IntN(8) == 0 {
		// Padded past any size a reader might stop at.
		out = append([]byte("{"+strings.Repeat(" ", 70<<10)), out[1:]...)
	}
	return out
}

// TestMarkedAnswerRespelledNeverCounts: an answer refused as too soon,
// or refused after it verified (a look-alike picked), is refused again in
// every spelling a verifier reads as the same assertion, for an
// authenticator without a signature counter, which would pass it again;
// a new answer, signed again, approves.
func TestMarkedAnswerRespelledNeverCounts(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(27, 5))
	counterless := stepuptest.WithSignCount(0)
	t.Run("early", func(t *testing.T) {
		w := newWorld(t, gate.WithDwell(gate.DefaultDwell, "external"), gate.WithoutFloodControlUnsafe())
		tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
		require.NoError(t, err)
		require.NoError(t, w.Gate.Desk().Show(ctx, tk.ID))
		answer := assertFor(t, w, w.Authenticator, tk.ID, counterless)
		_, err = w.Gate.Desk().Approve(ctx, tk.ID, answer)
		require.ErrorIs(t, err, stepup.ErrTooFast)
		w.Clock.Advance(gate.DefaultDwell)
		for i := range 40 {
			_, err := w.Gate.Desk().Approve(ctx, tk.ID, respell(t, r, answer))
			require.ErrorIs(t, err, stepup.ErrTooFast, "spelling %d", i)
		}
		got, err := w.Gate.Desk().Approve(ctx, tk.ID, assertFor(t, w, w.Authenticator, tk.ID, counterless))
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusApproved, got.Status)
	})
	t.Run("refused after it verified", func(t *testing.T) {
		w := newWorld(t, gate.WithConfirmation("external"), gate.WithoutFloodControlUnsafe())
		tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
		require.NoError(t, err)
		c, err := w.Gate.Desk().Confirmation(ctx, tk.ID)
		require.NoError(t, err)
		right := rightPick(t, c, "example.com")
		wrong := c.Choices[0]
		if wrong.Pick == right.Pick {
			wrong = c.Choices[1]
		}
		answer := assertFor(t, w, w.Authenticator, tk.ID, counterless)
		_, err = w.Gate.Desk().ApprovePicked(ctx, tk.ID, wrong.Pick, answer)
		require.ErrorIs(t, err, plug.ErrWrongPick)
		for i := range 40 {
			_, err := w.Gate.Desk().ApprovePicked(ctx, tk.ID, right.Pick, respell(t, r, answer))
			require.ErrorIs(t, err, stepup.ErrBadAssertion, "spelling %d", i)
			require.ErrorContains(t, err, "refused before", "spelling %d verifies, and is the refused answer", i)
		}
		got, err := w.Gate.Desk().ApprovePicked(ctx, tk.ID, right.Pick, assertFor(t, w, w.Authenticator, tk.ID, counterless))
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusApproved, got.Status)
	})
}
