package card_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// sameCard asserts that two renders gave the same card: JSON, hash and
// views.
func sameCard(t *testing.T, want, got *card.Card, views bool, msg string) {
	t.Helper()
	wj, err := want.JSON()
	require.NoError(t, err)
	gj, err := got.JSON()
	require.NoError(t, err)
	require.Equal(t, string(wj), string(gj), msg)
	require.Equal(t, want.Hash(), got.Hash(), msg)
	if views {
		require.Equal(t, want.Text(), got.Text(), msg)
		require.Equal(t, string(want.HTML()), string(got.HTML()), msg)
	}
}

// renderEveryWay renders e as Render does, from its seal, from its stored
// bytes, and without the renderer's memory of repeated strings, and
// checks that all four are the same card (or all refused alike).
func renderEveryWay(t *testing.T, e canon.Effect, ctx card.Context, views bool) {
	t.Helper()
	want, errWant := card.Render(e, ctx)
	s, err := canon.Seal(e)
	if err != nil {
		require.ErrorIs(t, errWant, card.ErrBadEffect)
		return
	}
	stored, err := canon.ParseSealed(s.Bytes())
	require.NoError(t, err)
	for name, render := range map[string]func() (*card.Card, error){
		"sealed":   func() (*card.Card, error) { return card.RenderSealed(s, ctx) },
		"stored":   func() (*card.Card, error) { return card.RenderSealed(stored, ctx) },
		"unshared": func() (*card.Card, error) { return card.RenderUnshared(s, ctx) },
	} {
		got, err := render()
		if errWant != nil {
			require.Error(t, err, name)
			require.Equal(t, errWant.Error(), err.Error(), name)
			continue
		}
		require.NoError(t, err, name)
		sameCard(t, want, got, views, name)
	}
}

// TestRenderSealedIsRender: RenderSealed of an effect's seal is the card
// Render makes of the effect, and the renderer's memory of repeated
// strings changes nothing, for every effect of the injectivity corpus.
func TestRenderSealedIsRender(t *testing.T) {
	ctx := injectivityContext()
	pairs := corpus()
	step := 7
	if testing.Short() || raceEnabled {
		step = 71
	}
	for i := 0; i < len(pairs); i += step {
		renderEveryWay(t, pairs[i].a, ctx, i%10 == 0)
		renderEveryWay(t, pairs[i].b, ctx, false)
	}
	for _, tc := range onePlaceChanges() {
		renderEveryWay(t, tc.a, ctx, true)
		renderEveryWay(t, tc.b, ctx, true)
	}
}

// repetitiveArgs generates arguments that repeat a few strings as values
// and keys, at every depth, in declared-domain arguments and elsewhere:
// addresses, URLs, look-alikes, invisible characters, plain words.
func repetitiveArgs(rng *rand.Rand) string {
	pool := []string{
		"finance@example.com", "x@ex\u0430mple.com", "https://example.com@evil.net/", "example.com",
		"b\u00fccher.de", "p\u0430ypal", "a\u200bb", "plain", "two  spaces", "@\u00fc1.de @\u00f61.de",
		"Dana <dana@example.com>", "mailto:a@b.org", "[::1]", "e\u0301", "not a host: x", "",
	}
	pick := func() string { return pool[rng.IntN(len(pool))] }
	var value func(depth int) any
	value = func(depth int) any {
		switch k := rng.IntN(6); {
		case depth > 3 || k < 3:
			return pick()
		case k == 3:
			n := rng.IntN(5)
			list := make([]any, n)
			for i := range list {
				list[i] = value(depth + 1)
			}
			return list
		default:
			obj := map[string]any{}
			for range rng.IntN(5) {
				obj[pick()] = value(depth + 1)
			}
			return obj
		}
	}
	args := map[string]any{"to": pick(), "domain": pick(), "cc": value(0), pick(): value(0)}
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestSharedStringsRenderAsUnshared: effects that repeat their strings
// (what the renderer's memory is for) render the same with it and without
// it, and as Render renders them.
func TestSharedStringsRenderAsUnshared(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	ctx := injectivityContext()
	ctx.Hints.Domains = []string{"domain"}
	n := 400
	if testing.Short() || raceEnabled {
		n = 60
	}
	for i := range n {
		args := repetitiveArgs(rng)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			renderEveryWay(t, effectWith(args), ctx, i%5 == 0)
		})
	}
	// Many more distinct strings than the renderer remembers, repeated.
	var b strings.Builder
	b.WriteString(`{"v":[`)
	for i := range 30000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"x@h%d.ex\u0430mple.com"`, i%12000)
	}
	b.WriteString(`]}`)
	renderEveryWay(t, effectWith(b.String()), ctx, false)
}

func TestRenderSealedRefusesZero(t *testing.T) {
	_, err := card.RenderSealed(canon.Sealed{}, injectivityContext())
	assert.ErrorIs(t, err, card.ErrBadEffect)
}
