package card_test

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card/internal/confusable"
	"github.com/agentstepup/asu/card/internal/escape"
)

// The injectivity corpus: pairs of effects that differ in one place, in
// every class of trick that could make two different effects look the
// same on a card. Generated deterministically, so a failure reproduces.

// corpusPair is two effects that must render to visibly different cards;
// width is the text view's width for the pair (0: the default).
type corpusPair struct {
	class string
	a, b  canon.Effect
	width int
}

// foldVisible is what a reader can tell apart in displayed text: invisible
// characters removed, other spaces read as a space, trailing spaces gone,
// and every non-ASCII character replaced by its UTS #39 prototype (the
// ASCII parts of its decomposition kept: the card is set in a monospace
// font, which draws ASCII apart).
func foldVisible(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	lineStart := 0
	endLine := func() {
		t := strings.TrimRight(b.String()[lineStart:], " ")
		if len(t) < b.Len()-lineStart {
			rest := b.String()[:lineStart] + t
			b.Reset()
			b.WriteString(rest)
		}
	}
	for _, r := range s {
		switch {
		case r == '\n':
			endLine()
			b.WriteByte('\n')
			lineStart = b.Len()
		case r < 0x80:
			if r >= 0x20 && r != 0x7f {
				b.WriteByte(byte(r))
			}
		case invisible(r):
		case unicode.Is(unicode.Zs, r):
			b.WriteByte(' ')
		case escape.DrawnApart(r) || escape.ReadApart(r):
			// Punctuation the card's font draws apart from its
			// look-alikes, and letters their readers read apart, are
			// what they are.
			b.WriteRune(r)
		default:
			var buf [utf8.UTFMax]byte
			d := norm.NFD.Properties(buf[:utf8.EncodeRune(buf[:], r)]).Decomposition()
			if d == nil {
				d = buf[:utf8.RuneLen(r)]
			}
			for _, p := range string(d) {
				if sk, ok := confusable.Lookup(p); ok && p >= 0x80 {
					b.WriteString(sk)
				} else {
					b.WriteRune(p)
				}
			}
		}
	}
	endLine()
	return b.String()
}

// invisible reports characters a reader cannot see.
func invisible(r rune) bool {
	return r < 0x20 || r >= 0x7f && r < 0xa0 || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Variation_Selector,
		unicode.Other_Default_Ignorable_Code_Point) || r == 0x2800 || r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0
}

// argsEffect is an effect whose arguments are args, marshalled.
func argsEffect(args map[string]any) canon.Effect {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return effectWith(string(b))
}

// place puts a string where the pair's class says: an argument value, an
// argument name, a nested key, or a field of the effect around the call.
func place(where int, s string) canon.Effect {
	switch where % 9 {
	case 0, 1, 2:
		return argsEffect(map[string]any{"subject": s})
	case 3:
		return argsEffect(map[string]any{s: 1})
	case 4:
		return argsEffect(map[string]any{"cc": map[string]any{s: "Finance"}})
	case 5:
		e := effectWith(`{"subject":"x"}`)
		e.Task = s
		return e
	case 6:
		e := effectWith(`{"subject":"x"}`)
		e.Principal.User = s
		return e
	case 7:
		e := effectWith(`{"subject":"x"}`)
		e.Refs = []canon.Ref{{Name: s, Kind: "file", Size: 1, SHA256: canon.Digest{1}}}
		return e
	default:
		e := effectWith(`{"subject":"x"}`)
		e.Tool = "send" + s
		return e
	}
}

// confusablePairs: every entry of the confusables table, a character
// against what UTS #39 says it looks like, in argument values, names, keys
// and the effect's own fields.
func confusablePairs() []corpusPair {
	var out []corpusPair
	for i := range confusable.Len() {
		r, sk := confusable.Entry(i)
		if r < 0x80 {
			continue // ASCII is drawn apart in the card's monospace font
		}
		a, b := "ab"+string(r)+"cd", "ab"+sk+"cd"
		if a == b || !utf8.ValidString(b) {
			continue
		}
		out = append(out, corpusPair{class: "confusable", a: place(i, a), b: place(i, b)})
	}
	return out
}

// scriptPairs: letters of every Unicode script, each against the Latin
// letter in its place, against its own prototype, and against nothing.
func scriptPairs() []corpusPair {
	names := make([]string, 0, len(unicode.Scripts))
	for n := range unicode.Scripts {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []corpusPair
	for si, n := range names {
		letters := sampleLetters(unicode.Scripts[n], 8)
		for li, x := range letters {
			word := "pay" + string(x) + "al"
			variants := []string{"payaal", "payal", "pay" + confusable.Skeleton(string(x)) + "al"}
			for vi, v := range variants {
				if v == word {
					continue
				}
				out = append(out, corpusPair{class: "script " + n, a: place(si+li+vi, word), b: place(si+li+vi, v)})
			}
		}
	}
	return out
}

// sampleLetters picks up to n graphic characters spread over a table.
func sampleLetters(t *unicode.RangeTable, n int) []rune {
	var all []rune
	for _, r := range t.R16 {
		for c := rune(r.Lo); c <= rune(r.Hi) && len(all) < 4000; c += rune(r.Stride) {
			all = append(all, c)
		}
	}
	for _, r := range t.R32 {
		for c := rune(r.Lo); c <= rune(r.Hi) && len(all) < 4000; c += rune(r.Stride) {
			all = append(all, c)
		}
	}
	var out []rune
	for i := 0; i < len(all) && len(out) < n; i += max(1, len(all)/n) {
		if unicode.IsGraphic(all[i]) {
			out = append(out, all[i])
		}
	}
	return out
}

// invisiblePairs: every invisible, blank, control or space character in
// Unicode, inserted into a word, against the word without it.
func invisiblePairs() []corpusPair {
	var out []corpusPair
	i := 0
	for r := rune(1); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff || !(invisible(r) || unicode.Is(unicode.Zs, r)) {
			continue
		}
		out = append(out, corpusPair{class: "invisible", a: place(i, "exam"+string(r)+"ple"), b: place(i, "example")})
		i++
	}
	return out
}

// markPairs: every combining mark on a Latin letter, against the letter
// alone and against the mark doubled.
func markPairs() []corpusPair {
	var out []corpusPair
	i := 0
	for r := rune(0x300); r <= unicode.MaxRune; r++ {
		if !unicode.In(r, unicode.Mn, unicode.Me) {
			continue
		}
		out = append(out,
			corpusPair{class: "mark", a: place(i, "xi"+string(r)+"y"), b: place(i, "xiy")},
			corpusPair{class: "mark", a: place(i+1, "xi"+string(r)+"y"), b: place(i+1, "xi"+string(r)+string(r)+"y")})
		i += 2
	}
	return out
}

// spacePairs: runs of spaces of every length against one more, at the
// start, inside and at the end.
func spacePairs() []corpusPair {
	var out []corpusPair
	for k := 1; k <= 60; k++ {
		sp, sp1 := strings.Repeat(" ", k), strings.Repeat(" ", k+1)
		for j, f := range []func(string) string{
			func(s string) string { return "a" + s + "b" },
			func(s string) string { return s + "ab" },
			func(s string) string { return "ab" + s },
		} {
			out = append(out, corpusPair{class: "spaces", a: place(k+j, f(sp)), b: place(k+j, f(sp1))})
		}
	}
	return out
}

// textPairs: random short strings over an alphabet of characters that
// escapes are made of, and of line breaks, each against a one-character
// edit of itself.
func textPairs(rng *rand.Rand, n int) []corpusPair {
	alphabet := []rune("a n\\\"{}u0123456789\n\r\t\u2028\u00a0\u200bu{spaces}")
	var out []corpusPair
	for i := range n {
		rs := make([]rune, 1+rng.IntN(10))
		for j := range rs {
			rs[j] = alphabet[rng.IntN(len(alphabet))]
		}
		a := string(rs)
		b := edit(rng, rs, alphabet)
		if a == b {
			continue
		}
		out = append(out, corpusPair{class: "text", a: place(i, a), b: place(i, b)})
	}
	return out
}

// edit changes rs in one place: insert, delete or replace a character.
func edit(rng *rand.Rand, rs, alphabet []rune) string {
	c := slices.Clone(rs)
	i := rng.IntN(len(c) + 1)
	switch rng.IntN(3) {
	case 0:
		c = slices.Insert(c, i, alphabet[rng.IntN(len(alphabet))])
	case 1:
		if i < len(c) {
			c = slices.Delete(c, i, i+1)
		}
	default:
		if i < len(c) {
			c[i] = alphabet[rng.IntN(len(alphabet))]
		}
	}
	return string(c)
}

// wrapPairs: long values of words, shown at widths from 40 to 200, each
// against a one-character edit (mostly around spaces, where the view
// breaks lines).
func wrapPairs(rng *rand.Rand, n int) []corpusPair {
	words := []string{"a", "to", "the", "wire", "finance@example.com", "approve", "==", "END", "OF", "AGENT", "TEXT", "refund",
		"x\u0430y", "\u4e2d\u6587", "\\n", "verylongtokenwithoutanyspacesatallthatmustbesplitsomewhere"}
	alphabet := []rune(" a\n-=")
	var out []corpusPair
	for i := range n {
		var b strings.Builder
		for b.Len() < 60+rng.IntN(240) {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		a := b.String()
		e := edit(rng, []rune(a), alphabet)
		if e == a {
			continue
		}
		out = append(out, corpusPair{class: "wrap", a: place(i%3, a), b: place(i%3, e), width: 40 + rng.IntN(161)})
	}
	return out
}

// contextPairs: the fields around the call (task, step, user, agent,
// delegations, executor, reference name, kind and reason, tool name), each
// changed by a look-alike, an invisible character or a space.
func contextPairs() []corpusPair {
	tricks := []func(string) string{
		func(s string) string { return strings.Replace(s, "a", "\u0430", 1) },
		func(s string) string { return s + "\u200b" },
		func(s string) string { return s + " " },
		func(s string) string { return " " + s },
		func(s string) string { return strings.Replace(s, "e", "e\u0301", 1) },
		func(s string) string { return strings.Replace(s, "a", "\u0251", 1) },
		func(s string) string { return s + "\u2800" },
	}
	fields := []func(*canon.Effect, func(string) string){
		func(e *canon.Effect, f func(string) string) { e.Task = f(e.Task) },
		func(e *canon.Effect, f func(string) string) { e.Step = f(e.Step) },
		func(e *canon.Effect, f func(string) string) { e.Principal.User = f(e.Principal.User) },
		func(e *canon.Effect, f func(string) string) { e.Principal.Agent = f(e.Principal.Agent) },
		func(e *canon.Effect, f func(string) string) { e.Principal.Delegations = []string{f("team:a")} },
		func(e *canon.Effect, f func(string) string) { e.Audience = f(e.Audience) },
		func(e *canon.Effect, f func(string) string) { e.Tool = f(e.Tool) },
		func(e *canon.Effect, f func(string) string) { e.Refs[0].Name = f(e.Refs[0].Name) },
		func(e *canon.Effect, f func(string) string) { e.Refs[0].Kind = f(e.Refs[0].Kind) },
		func(e *canon.Effect, f func(string) string) { e.Refs[1].Unbound = f(e.Refs[1].Unbound) },
	}
	base := func() canon.Effect {
		e := effectWith(`{"subject":"x"}`)
		e.Task, e.Step, e.Principal.Agent = "task-alpha", "step-a", "agent:reports-a"
		e.Principal.Delegations = []string{"team:a"}
		e.Refs = []canon.Ref{{Name: "data.csv", Kind: "file", Size: 1, SHA256: canon.Digest{1}},
			{Name: "https://example.org/a", Kind: "url", Unbound: "not fetched, a page"}}
		return e
	}
	var out []corpusPair
	for _, set := range fields {
		for _, trick := range tricks {
			a, b := base(), base()
			set(&b, trick)
			out = append(out, corpusPair{class: "context", a: a, b: b})
		}
	}
	return out
}
