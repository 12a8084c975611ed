package receipt_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// limitEffect is receipttest's effect with args and task as given.
func limitEffect(args, task string) canon.Effect {
	e := receipttest.Effect("finance@example.com")
	e.Args, e.Task = json.RawMessage(args), task
	return e
}

// deepArgs returns arguments nesting depth containers, the object itself
// the first.
func deepArgs(depth int) string {
	return `{"a":` + strings.Repeat("[", depth-1) + "1" + strings.Repeat("]", depth-1) + `}`
}

// wideArgs returns arguments of exactly n canonical bytes.
func wideArgs(n int) string {
	const frame = len(`{"note":""}`)
	return `{"note":"` + strings.Repeat("x", n-frame) + `"}`
}

// reordered spells a canonical effect non-canonically at the same length:
// its step and task members swapped.
func reordered(t *testing.T, effect string) string {
	i := strings.Index(effect, `,"step":`)
	j := strings.Index(effect, `,"task":`)
	k := strings.Index(effect, `,"tool":`)
	require.True(t, 0 < i && i < j && j < k, "members in canonical order")
	return effect[:i] + effect[j:k] + effect[i:j] + effect[k:]
}

// receiptOf returns s's receipt of the effect written as given, sealable
// or not, whose canonical form is canonical.
func receiptOf(t *testing.T, s *receipttest.Signer, written, canonical string) *receipt.Receipt {
	t.Helper()
	r := sign(t, s)
	r.Effect, r.Digest = json.RawMessage(written), canon.Sum([]byte(canonical))
	return withClientData(t, s, r, `"type":"webauthn.get"`, `"challenge":%[1]s`,
		fmt.Sprintf(`"origin":%q`, receipttest.Origin), `"crossOrigin":false`)
}

// TestEffectAtCanonLimitsVerifies: the receipt of every effect canon.Seal
// accepts verifies, at each of its limits (arguments nested
// canon.DefaultMaxDepth deep, arguments of canon.MaxArgs bytes, an effect
// of canon.MaxEffect bytes), whether the effect is written canonically
// (Verify's one-pass path) or not (its canonicalizing path); one past each
// limit, the effect check refuses it on both paths, as canon does. The
// effect's own object is not a level of its arguments' nesting, and the
// effect's size is not bounded by canon.Canonicalize's default.
func TestEffectAtCanonLimitsVerifies(t *testing.T) {
	s := newSigner(t, receipttest.EdDSA)
	seal := func(e canon.Effect) string {
		sealed, err := canon.Seal(e)
		require.NoError(t, err, "canon seals it")
		return string(sealed.Bytes())
	}
	deepest := seal(limitEffect(deepArgs(canon.DefaultMaxDepth), "t"))
	widest := seal(limitEffect(wideArgs(canon.MaxArgs), "t"))
	full := seal(limitEffect(wideArgs(canon.MaxArgs), ""))
	full = seal(limitEffect(wideArgs(canon.MaxArgs), strings.Repeat("t", canon.MaxEffect-len(full))))
	require.Len(t, full, canon.MaxEffect)

	past := map[string]string{
		"depth": strings.Replace(strings.Replace(deepest, `"a":[`, `"a":[[`, 1), `1]`, `1]]`, 1),
		"args":  strings.Replace(widest, `"note":"x`, `"note":"xx`, 1),
		"size":  strings.Replace(full, `"task":"t`, `"task":"tt`, 1),
	}
	_, err := canon.ParseEffect([]byte(past["depth"]))
	require.ErrorIs(t, err, canon.ErrTooDeep, "canon refuses one level more")
	for name, at := range map[string]string{"depth": deepest, "args": widest, "size": full} {
		t.Run(name, func(t *testing.T) {
			for path, spell := range map[string]func(string) string{
				"canonical": func(s string) string { return s },
				"reordered": func(e string) string { return reordered(t, e) },
			} {
				r := receiptOf(t, s, spell(at), at)
				res, err := receipt.Verify(clone(t, r), s.Trusted(), s.Policy())
				require.NoError(t, err, "%s: at the limit", path)
				assert.True(t, res.Valid)

				r = receiptOf(t, s, spell(past[name]), past[name])
				_, err = receipt.Verify(clone(t, r), s.Trusted(), s.Policy())
				assert.ErrorIs(t, err, receipt.ErrEffect, "%s: one past the limit", path)
			}
		})
	}
}
