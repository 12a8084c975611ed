package card_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

func effectWith(args string) canon.Effect {
	return canon.Effect{
		Tool:          "send_email",
		Args:          json.RawMessage(args),
		Task:          "t-42",
		Step:          "1",
		Principal:     canon.Principal{User: "user:dana", Agent: "agent:reports"},
		PolicyVersion: "2026-10-30.1",
		Audience:      "mailer",
	}
}

func injectivityContext() card.Context {
	return card.Context{
		Title: "Send e-mail",
		Class: card.ClassExternal,
		Hints: card.Hints{
			Recipient: "to",
			Amount:    "amount",
			Currency:  "currency",
			Labels:    map[string]string{"to": "To", "subject": "Subject"},
		},
		Trusted:   []string{"example.com"},
		Rationale: "same rationale for both",
	}
}

// onePlaceChanges are pairs of effects that differ by one thing each. Every
// pair has different digests, so every pair must render to different
// visible text.
func onePlaceChanges() []struct {
	name string
	a, b canon.Effect
} {
	long := strings.Repeat("0123456789", 100)
	args := func(a, b string) (canon.Effect, canon.Effect) { return effectWith(a), effectWith(b) }
	type pair = struct {
		name string
		a, b canon.Effect
	}
	mk := func(name string, a, b canon.Effect) pair { return pair{name, a, b} }
	var out []pair
	add := func(name, a, b string) {
		ea, eb := args(a, b)
		out = append(out, mk(name, ea, eb))
	}
	add("homoglyph Cyrillic a", `{"to":"finance@example.com"}`, `{"to":"finance@ex\u0430mple.com"}`)
	add("homoglyph Greek omicron in text", `{"subject":"google"}`, `{"subject":"g\u03bfogle"}`)
	add("rn for m", `{"to":"finance@example.com"}`, `{"to":"finance@exarnple.com"}`)
	add("0 for o", `{"to":"finance@example.com"}`, `{"to":"finance@exampl0.com"}`)
	add("case", `{"to":"finance@example.com"}`, `{"to":"Finance@example.com"}`)
	add("case of domain", `{"to":"finance@example.com"}`, `{"to":"finance@EXAMPLE.com"}`)
	add("NFC vs NFD", `{"subject":"Caf\u00e9"}`, `{"subject":"Cafe\u0301"}`)
	add("combining mark order", `{"subject":"a\u0323\u0301"}`, `{"subject":"a\u0301\u0323"}`)
	add("zero-width space", `{"subject":"Q3 summary"}`, `{"subject":"Q3\u200b summary"}`)
	add("zero-width joiner", `{"subject":"Q3 summary"}`, `{"subject":"Q3 sum\u200dmary"}`)
	add("soft hyphen", `{"subject":"example"}`, `{"subject":"exam\u00adple"}`)
	add("word joiner", `{"subject":"example"}`, `{"subject":"exam\u2060ple"}`)
	add("BOM", `{"subject":"example"}`, `{"subject":"\ufeffexample"}`)
	add("variation selector", `{"subject":"example"}`, `{"subject":"example\ufe0f"}`)
	add("bidi override", `{"subject":"invoice.pdf"}`, `{"subject":"invoice\u202efdp.exe"}`)
	add("bidi isolate", `{"subject":"abc"}`, `{"subject":"a\u2067b\u2069c"}`)
	add("trailing space", `{"subject":"Q3 summary"}`, `{"subject":"Q3 summary "}`)
	add("leading space", `{"subject":"Q3 summary"}`, `{"subject":" Q3 summary"}`)
	add("double space", `{"subject":"Q3 summary"}`, `{"subject":"Q3  summary"}`)
	add("no-break space", `{"subject":"Q3 summary"}`, `{"subject":"Q3\u00a0summary"}`)
	add("ideographic space", `{"subject":"Q3 summary"}`, `{"subject":"Q3\u3000summary"}`)
	add("tab vs backslash-t", `{"subject":"a\tb"}`, `{"subject":"a\\tb"}`)
	add("newline vs line separator", `{"subject":"a\nb"}`, `{"subject":"a\u2028b"}`)
	add("CR vs LF", `{"subject":"a\rb"}`, `{"subject":"a\nb"}`)
	add("ANSI escape", `{"subject":"[31mred"}`, `{"subject":"\u001b[31mred"}`)
	add("escape look-alike text", `{"subject":"\u200b"}`, `{"subject":"\\u{200B}"}`)
	add("quote vs escaped quote", `{"subject":"a\"b"}`, `{"subject":"a\\\"b"}`)
	add("full-width letter", `{"subject":"example"}`, `{"subject":"\uff45xample"}`)
	add("private use", `{"subject":"ab"}`, `{"subject":"a\ue000b"}`)
	add("number vs string", `{"amount":1}`, `{"amount":"1"}`)
	add("true vs string", `{"flag":true}`, `{"flag":"true"}`)
	add("null vs string", `{"flag":null}`, `{"flag":"null"}`)
	add("missing vs null", `{"to":"a@example.com"}`, `{"to":"a@example.com","cc":null}`)
	add("empty string vs null", `{"cc":""}`, `{"cc":null}`)
	add("empty object vs array", `{"cc":{}}`, `{"cc":[]}`)
	add("amount", `{"amount":120,"currency":"EUR"}`, `{"amount":1200,"currency":"EUR"}`)
	add("decimal amount", `{"amount":120.5}`, `{"amount":1205}`)
	add("currency", `{"amount":120,"currency":"EUR"}`, `{"amount":120,"currency":"EUR "}`)
	add("nested key", `{"meta":{"a":{"b":1}}}`, `{"meta":{"a":{"c":1}}}`)
	add("nested value", `{"meta":{"a":{"b":1}}}`, `{"meta":{"a":{"b":2}}}`)
	add("dotted key vs nesting", `{"a.b":1}`, `{"a":{"b":1}}`)
	add("key with space", `{"a b":1}`, `{"a":{"b":1}}`)
	add("key with colon", `{"a: 1":2}`, `{"a":"1: 2"}`)
	add("nesting depth", `{"a":[[1]]}`, `{"a":[1]}`)
	add("array order", `{"cc":["a@example.com","b@example.com"]}`, `{"cc":["b@example.com","a@example.com"]}`)
	add("array element", `{"cc":["a","b"]}`, `{"cc":["a","b","c"]}`)
	add("long value differing at the end", `{"body":"`+long+`x"}`, `{"body":"`+long+`y"}`)
	add("long value vs its shown prefix", `{"body":"`+long+`"}`, `{"body":"`+long[:200]+`"}`)
	add("long key", `{"`+long+`a":1}`, `{"`+long+`b":1}`)

	e := effectWith(`{"subject":"x"}`)
	f := e
	f.Tool = "send_emaiI"
	out = append(out, mk("tool name", e, f))
	f = e
	f.Task = "t-43"
	out = append(out, mk("task", e, f))
	f = e
	f.Step = "1 "
	out = append(out, mk("step", e, f))
	f = e
	f.Principal.User = "user:dana\u200b"
	out = append(out, mk("user", e, f))
	f = e
	f.Principal.Delegations = []string{"team:x"}
	out = append(out, mk("delegation", e, f))
	f = e
	f.Audience = "mailer2"
	out = append(out, mk("audience", e, f))
	f = e
	f.PolicyVersion = "2026-10-30.2"
	out = append(out, mk("policy version", e, f))

	ref := canon.Ref{Name: "q3.csv", Kind: "file", Size: 33, SHA256: canon.Digest{1}}
	e.Refs = []canon.Ref{ref}
	f = e
	f.Refs = []canon.Ref{{Name: "q3.csv", Kind: "file", Size: 33, SHA256: canon.Digest{2}}}
	out = append(out, mk("reference content", e, f))
	f = e
	f.Refs = []canon.Ref{{Name: "q3.csv", Kind: "file", Size: 34, SHA256: canon.Digest{1}}}
	out = append(out, mk("reference size", e, f))
	f = e
	f.Refs = []canon.Ref{{Name: "q3.csv", Kind: "file", Unbound: "not fetched"}}
	out = append(out, mk("bound vs unbound reference", e, f))
	f = e
	f.Refs = []canon.Ref{{Name: "q3.csv", Kind: "file", Unbound: "x", SHA256: canon.Digest{1}}}
	g := e
	g.Refs = []canon.Ref{{Name: "q3.csv", Kind: "file", Unbound: "x\"; recorded as 0 bytes, SHA-256 " + canon.Digest{1}.String()}}
	out = append(out, mk("unbound reference reason imitating a hash", f, g))
	f = e
	f.Refs = []canon.Ref{ref, ref}
	out = append(out, mk("reference twice", e, f))
	unbound := canon.Ref{Name: "https://example.org/x", Kind: "url", Unbound: "not fetched"}
	f, g = e, e
	f.Refs = []canon.Ref{ref, unbound}
	g.Refs = []canon.Ref{unbound, ref}
	out = append(out, mk("bound and unbound references reordered", f, g))
	return out
}

// TestInjectivity: a person comparing two cards sees a difference whenever
// the effects differ, in the text view and in what the HTML view displays.
func TestInjectivity(t *testing.T) {
	ctx := injectivityContext()
	for _, tc := range onePlaceChanges() {
		t.Run(tc.name, func(t *testing.T) {
			da, err := tc.a.Digest()
			require.NoError(t, err)
			db, err := tc.b.Digest()
			require.NoError(t, err)
			require.NotEqual(t, da, db, "the pair must differ in effect")

			ca := mustRender(t, tc.a, ctx)
			cb := mustRender(t, tc.b, ctx)
			assert.NotEqual(t, ca.Visible(), cb.Visible(), "text views look the same")
			assert.NotEqual(t, htmlVisible(ca), htmlVisible(cb), "HTML views look the same")
			assert.NotEqual(t, ca.Hash(), cb.Hash())
		})
	}
}

// TestInjectivityNaive shows the corpus has teeth: a renderer that prints
// values the obvious way (no escaping, no hashes of long values) shows many
// of these pairs as the same text.
func TestInjectivityNaive(t *testing.T) {
	naive := func(e canon.Effect) string {
		var m map[string]any
		_ = json.Unmarshal(e.Args, &m)
		var b strings.Builder
		for _, k := range sortedKeys(m) {
			s := strings.TrimSpace(strings.ReplaceAll(toString(m[k]), "\n", " "))
			if len(s) > 200 {
				s = s[:200] + "..."
			}
			b.WriteString(k + ": " + s + "\n")
		}
		return b.String()
	}
	collide := 0
	for _, tc := range onePlaceChanges() {
		if naive(tc.a) == naive(tc.b) {
			collide++
		}
	}
	assert.GreaterOrEqual(t, collide, 5, "the naive renderer should be fooled by several pairs")
}

func toString(v any) string {
	b, _ := json.Marshal(v)
	var s string
	if json.Unmarshal(b, &s) == nil {
		return s
	}
	return string(b)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// corpus is every generated pair, in a fixed order.
func corpus() []corpusPair {
	rng := rand.New(rand.NewPCG(12, 39))
	var all []corpusPair
	all = append(all, confusablePairs()...)
	all = append(all, scriptPairs()...)
	all = append(all, invisiblePairs()...)
	all = append(all, markPairs()...)
	all = append(all, spacePairs()...)
	all = append(all, textPairs(rng, 4000)...)
	all = append(all, wrapPairs(rng, 3000)...)
	all = append(all, contextPairs()...)
	return all
}

// visibleAt is the text view at width without its fingerprint line.
func visibleAt(c *card.Card, width int) string {
	if width == 0 {
		return c.Visible()
	}
	t := strings.TrimSuffix(c.TextWidth(width), "\n")
	return t[:strings.LastIndexByte(t, '\n')+1]
}

// TestInjectivityCorpus: for tens of thousands of generated pairs of
// different effects (every confusable in the UTS #39 table, letters of
// every script, every invisible character and combining mark, runs of
// spaces, escapes and line breaks, long values wrapped at widths 40 to
// 200, and every field around the call), the two cards differ visibly:
// after invisible characters are removed and look-alikes folded, in the
// text view and in the text the HTML view displays. With -short or -race,
// a deterministic tenth of the corpus runs (all of it takes about 20 s of
// CPU without the race detector).
func TestInjectivityCorpus(t *testing.T) {
	ctx := injectivityContext()
	pairs := corpus()
	require.Greater(t, len(pairs), 30000)
	step := 1
	if testing.Short() || raceEnabled {
		step = 10
	}
	type result struct {
		rendered, failures int
		classes            map[string]int
	}
	const workers = 2
	results := make([]result, workers)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := result{classes: map[string]int{}}
			for i := w * step; i < len(pairs); i += workers * step {
				p := pairs[i]
				da, errA := p.a.Digest()
				db, errB := p.b.Digest()
				if errA != nil || errB != nil || da == db {
					continue
				}
				ca, errA := card.Render(p.a, ctx)
				cb, errB := card.Render(p.b, ctx)
				if errA != nil || errB != nil {
					continue // no card, no approval
				}
				r.rendered++
				r.classes[strings.Fields(p.class)[0]]++
				if i%7 == 0 {
					// seal writes canonical JSON without canonicalizing.
					js, _ := ca.JSON()
					c, err := card.HashLimits().Canonicalize(js)
					assert.NoError(t, err)
					assert.Equal(t, string(c), string(js), "card JSON not canonical")
				}
				if foldVisible(visibleAt(ca, p.width)) == foldVisible(visibleAt(cb, p.width)) ||
					foldVisible(htmlVisible(ca)) == foldVisible(htmlVisible(cb)) {
					r.failures++
					if r.failures <= 3 {
						mu.Lock()
						t.Errorf("%s: two effects look the same:\n%s", p.class, visibleAt(ca, p.width))
						mu.Unlock()
					}
				}
			}
			results[w] = r
		})
	}
	wg.Wait()
	total := result{classes: map[string]int{}}
	for _, r := range results {
		total.rendered += r.rendered
		total.failures += r.failures
		for k, v := range r.classes {
			total.classes[k] += v
		}
	}
	t.Logf("%d pairs rendered and compared, by class %v", total.rendered, total.classes)
	assert.Zero(t, total.failures)
	assert.Greater(t, total.rendered, len(pairs)/step*9/10, "most pairs render")
}

// TestInjectivityCorpusCatchesNaive: the corpus and its fold have teeth. A
// renderer that shows strings as they are (quoted, JSON-escaped, which is
// what a careful but Unicode-unaware view does) lets many pairs look the
// same.
func TestInjectivityCorpusCatchesNaive(t *testing.T) {
	naive := func(e canon.Effect) string {
		b, _ := json.Marshal(e)
		var m any
		_ = json.Unmarshal(b, &m)
		out, _ := json.Marshal(m)
		return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(out))
	}
	pairs := corpus()
	collide := map[string]int{}
	for i := 0; i < len(pairs); i += 10 {
		p := pairs[i]
		if foldVisible(naive(p.a)) == foldVisible(naive(p.b)) {
			collide[strings.Fields(p.class)[0]]++
		}
	}
	t.Logf("naive collisions by class: %v", collide)
	for _, class := range []string{"confusable", "invisible", "mark"} {
		assert.Greater(t, collide[class], 50, class)
	}
}
