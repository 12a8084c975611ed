package card_test

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

func TestRenderRefuses(t *testing.T) {
	ok := injectivityContext()
	cases := []struct {
		name   string
		e      canon.Effect
		ctx    func(card.Context) card.Context
		want   error
		secret string // must not appear in the error
	}{
		{"unknown class", effectWith(`{}`), func(c card.Context) card.Context { c.Class = "harmless"; return c }, card.ErrBadContext, ""},
		{"empty class", effectWith(`{}`), func(c card.Context) card.Context { c.Class = ""; return c }, card.ErrBadContext, ""},
		{"policy version differs", effectWith(`{}`), func(c card.Context) card.Context { c.PolicyVersion = "old"; return c }, card.ErrBadContext, ""},
		{"trusted domain invalid", effectWith(`{}`), func(c card.Context) card.Context { c.Trusted = []string{"a b"}; return c }, card.ErrBadContext, ""},
		{"args not an object", effectWith(`["x"]`), nil, card.ErrBadEffect, ""},
		{"args invalid", effectWith(`{"a":}`), nil, card.ErrBadEffect, ""},
		{"duplicate key", effectWith(`{"a":1,"a":2}`), nil, card.ErrBadEffect, ""},
		{"inexact number", effectWith(`{"a":9007199254740993}`), nil, card.ErrBadEffect, "9007199254740993"},
		{"recipient domain fails IDNA", effectWith(`{"to":"secret@foo_bar.com"}`), nil, card.ErrUnrenderable, "foo_bar"},
		{"URL host fails IDNA", effectWith(`{"link":"https://exa--mple..com/x"}`), nil, card.ErrUnrenderable, "exa--mple"},
		{"invisible character in domain", effectWith(`{"to":"a@exa\u200bmple.com"}`), nil, card.ErrUnrenderable, "exa"},
		{"declared domain argument invalid", effectWith(`{"host":"not a host"}`),
			func(c card.Context) card.Context { c.Hints.Domains = []string{"host"}; return c }, card.ErrUnrenderable, "not a host"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ok
			if tc.ctx != nil {
				ctx = tc.ctx(ok)
			}
			c, err := card.Render(tc.e, ctx)
			assert.Nil(t, c)
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.want), "got %v", err)
			if tc.secret != "" {
				assert.NotContains(t, err.Error(), tc.secret, "argument value leaked into the error")
			}
		})
	}
}

func TestEmbeddedInvalidDomainIsFlaggedNotRefused(t *testing.T) {
	c := mustRender(t, effectWith(`{"body":"write to x@foo_bar.com please"}`), injectivityContext())
	assert.Contains(t, c.Text(), "is not a valid domain name")
}

// TestHintsChangeLayoutNotContent: hints reorder and label, but every
// argument is shown, under its own name, whatever they say.
func TestHintsChangeLayoutNotContent(t *testing.T) {
	e := effectWith(`{"zeta":"last","amount":120,"currency":"EUR","to":"a@example.com","note":"n"}`)
	plain := mustRender(t, e, card.Context{Class: card.ClassIrreversible})
	hinted := mustRender(t, e, card.Context{Class: card.ClassIrreversible, Hints: card.Hints{
		Labels:    map[string]string{"zeta": "Recipient", "to": "Recipient", "missing": "Ghost"},
		Order:     []string{"missing", "zeta", "amount"},
		Amount:    "amount",
		Currency:  "currency",
		Recipient: "to",
		Units:     map[string]string{"amount": "per month", "note": "ignored for strings"},
	}})
	for _, v := range []string{`"last"`, "120", `"EUR"`, `"a@example.com"`, `"n"`} {
		assert.Equal(t, 1, strings.Count(plain.Visible(), v), v)
	}
	for _, v := range []string{`"last"`, "120", `"a@example.com"`, `"n"`} {
		assert.Equal(t, 1, strings.Count(hinted.Visible(), v), v)
	}
	assert.Equal(t, 2, strings.Count(hinted.Visible(), `"EUR"`), "the currency argument, and quoted beside the amount")
	hv := hinted.Visible()
	for _, name := range []string{"Recipient (zeta):", "Recipient (to):", "  amount:", "  currency:", "  note:"} {
		assert.Contains(t, hv, name)
	}
	assert.NotContains(t, hv, "Ghost")
	assert.NotContains(t, hv, "ignored for strings")
	assert.Contains(t, hv, `120 [currency "EUR"] [unit "per month"]`)
	assert.Less(t, strings.Index(hv, "(zeta)"), strings.Index(hv, "amount:"), "catalog order first")
	assert.Less(t, strings.Index(hv, "amount:"), strings.Index(hv, "currency:"), "then canonical order")
	assert.Less(t, strings.Index(hv, "note:"), strings.Index(hv, "(to):"), "then canonical order")
	assert.Equal(t, plain.Text()[len(plain.Text())-25:], hinted.Text()[len(hinted.Text())-25:], "same effect, same fingerprint")
}

func TestDefaultOrderPutsRecipientAndAmountFirst(t *testing.T) {
	e := effectWith(`{"a":1,"amount":5,"to":"x@example.com"}`)
	c := mustRender(t, e, card.Context{Class: card.ClassExternal, Hints: card.Hints{Recipient: "to", Amount: "amount", FixedCurrency: "USD"}})
	v := c.Visible()
	assert.Less(t, strings.Index(v, "to:"), strings.Index(v, "amount:"))
	assert.Less(t, strings.Index(v, "amount:"), strings.Index(v, "  a:"))
	assert.Contains(t, v, `amount: 5 [currency "USD"]`)
}

func TestNumbersShownExactly(t *testing.T) {
	e := effectWith(`{"a":19.99,"b":1e21,"c":0.1,"d":-0,"e":100000000000000000000,"f":1.0,"g":1E-7,"h":123456789012345}`)
	v := mustRender(t, e, card.Context{Class: card.ClassRead}).Visible()
	for _, want := range []string{"a: 19.99\n", "b: 1e+21\n", "c: 0.1\n", "d: 0\n", "e: 100000000000000000000\n",
		"f: 1\n", "g: 1e-7\n", "h: 123456789012345\n"} {
		assert.Contains(t, v, want)
	}
}

func TestLongValuesSayTheyAreShortened(t *testing.T) {
	body := strings.Repeat("long line of text ", 300) + "THE END"
	args, err := json.Marshal(map[string]string{"body": body})
	require.NoError(t, err)
	c := mustRender(t, effectWith(string(args)), card.Context{Class: card.ClassExternal})
	sum := sha256.Sum256([]byte(body))
	text := c.TextWidth(1000)
	assert.Contains(t, text, "shortened: 5407 bytes in full, SHA-256 "+hexString(sum[:]))
	assert.NotContains(t, text, "THE END")
	for _, l := range strings.Split(text, "\n") {
		assert.Less(t, len(l), 400, "line not shortened")
	}
	for _, l := range strings.Split(c.Text(), "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), card.DefaultWidth, "line not wrapped")
	}
	h := string(c.HTML())
	assert.Contains(t, h, "<details")
	assert.Contains(t, h, "THE END", "the HTML view can expand to the full value")
	js, err := c.JSON()
	require.NoError(t, err)
	var m struct {
		Args []struct {
			Value struct {
				Long struct {
					Bytes  int    `json:"bytes"`
					SHA256 string `json:"sha256"`
					Full   string `json:"full"`
				} `json:"long"`
			} `json:"value"`
		} `json:"args"`
	}
	require.NoError(t, json.Unmarshal(js, &m))
	require.Len(t, m.Args, 1)
	assert.Equal(t, len(body), m.Args[0].Value.Long.Bytes)
	assert.Equal(t, body, m.Args[0].Value.Long.Full)
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
}

// TestHashFormula recomputes the card hash the way a third party does,
// from the JSON bytes alone.
func TestHashFormula(t *testing.T) {
	c := mustRender(t, sendEmailEffect(t, "finance@example.com"), sendEmailContext())
	js, err := c.JSON()
	require.NoError(t, err)
	canonical, err := canon.Canonicalize(js)
	require.NoError(t, err)
	assert.Equal(t, canonical, js, "JSON() is already canonical")
	assert.Contains(t, string(js), `"renderer":"asu.card/v4"`)

	h := sha256.New()
	h.Write([]byte("asu/v1/card"))
	h.Write([]byte{0})
	h.Write(js)
	assert.Equal(t, hexString(h.Sum(nil)), c.Hash().String())

	var pretty map[string]any
	require.NoError(t, json.Unmarshal(js, &pretty))
	indented, err := json.MarshalIndent(pretty, "", "  ")
	require.NoError(t, err)
	fromIndented, err := card.HashJSON(indented)
	require.NoError(t, err)
	assert.Equal(t, c.Hash(), fromIndented, "whitespace and key order do not matter")

	js[0] = 'X'
	again, err := c.JSON()
	require.NoError(t, err)
	assert.Equal(t, byte('{'), again[0], "JSON returns a copy")
}

func TestHashCoversWhatIsShown(t *testing.T) {
	e, ctx := sendEmailEffect(t, "finance@example.com"), sendEmailContext()
	base := mustRender(t, e, ctx).Hash()
	assert.Equal(t, base, mustRender(t, e, ctx).Hash(), "deterministic")
	variants := map[string]func(*canon.Effect, *card.Context){
		"rationale":   func(_ *canon.Effect, c *card.Context) { c.Rationale += "!" },
		"description": func(_ *canon.Effect, c *card.Context) { c.ToolDescription = "" },
		"class":       func(_ *canon.Effect, c *card.Context) { c.Class = card.ClassIrreversible },
		"title":       func(_ *canon.Effect, c *card.Context) { c.Title = "Mail" },
		"reason":      func(_ *canon.Effect, c *card.Context) { c.Reasons = nil },
		"provenance":  func(_ *canon.Effect, c *card.Context) { c.Provenance = c.Provenance[:1] },
		"label":       func(_ *canon.Effect, c *card.Context) { c.Hints.Labels = nil },
		"trusted":     func(_ *canon.Effect, c *card.Context) { c.Trusted = nil },
		"effect":      func(e *canon.Effect, _ *card.Context) { e.Step = "4" },
	}
	for name, mutate := range variants {
		e2, ctx2 := e, ctx
		mutate(&e2, &ctx2)
		assert.NotEqual(t, base, mustRender(t, e2, ctx2).Hash(), name)
	}
}

func TestCardSafeForConcurrentUse(t *testing.T) {
	c := mustRender(t, sendEmailEffect(t, "finance@example.com"), sendEmailContext())
	want := c.Text()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			assert.Equal(t, want, c.Text())
			_ = c.HTML()
			_, _ = c.JSON()
			_ = c.Hash()
		})
	}
	wg.Wait()
}

// TestTextViewHasNoControlCharacters across the whole corpus: a terminal
// shows the text view as it is.
func TestTextViewHasNoControlCharacters(t *testing.T) {
	for _, tc := range onePlaceChanges() {
		for _, e := range []canon.Effect{tc.a, tc.b} {
			for _, r := range mustRender(t, e, injectivityContext()).Text() {
				if r != '\n' && (r < 0x20 || (r >= 0x7f && r < 0xa0) || r == 0x2028 || r == 0x2029 || (r >= 0x202a && r <= 0x202e) ||
					(r >= 0x2066 && r <= 0x2069) || r == 0x200b || r == 0xfeff) {
					t.Fatalf("%s: text view holds %U", tc.name, r)
				}
			}
		}
	}
}

// TestDeepAndLargeEffectsRender: whatever canon accepts, the card can hash.
func TestDeepAndLargeEffectsRender(t *testing.T) {
	deep := strings.Repeat(`{"a":`, canon.DefaultMaxDepth-1) + "1" + strings.Repeat("}", canon.DefaultMaxDepth-1)
	big, err := json.Marshal(map[string]string{"body": strings.Repeat("\u200b", (canon.DefaultMaxBytes-100)/8)})
	require.NoError(t, err)
	for name, args := range map[string]string{"deep": deep, "large": string(big)} {
		t.Run(name, func(t *testing.T) {
			e := effectWith(args)
			_, err := e.Canonical()
			require.NoError(t, err, "canon accepts it")
			c, err := card.Render(e, card.Context{Class: card.ClassRead})
			require.NoError(t, err)
			js, err := c.JSON()
			require.NoError(t, err)
			h, err := card.HashJSON(js)
			require.NoError(t, err)
			assert.Equal(t, c.Hash(), h)
		})
	}
}

func TestZeroCardDoesNotPanic(t *testing.T) {
	var c card.Card
	assert.NotPanics(t, func() { _, _, _ = c.Text(), c.HTML(), c.Hash() })
	assert.Contains(t, c.Text(), "Do not approve")
	assert.Contains(t, string(c.HTML()), "Do not approve")
	_, err := c.JSON()
	assert.ErrorIs(t, err, card.ErrUnrenderable)
}
