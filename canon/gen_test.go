package canon_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// jv is a generated JSON value. The property tests spell one jv many ways
// (key order, whitespace, escapes, number forms) and mutate it one place at
// a time.
type jv struct {
	kind    byte // 'o' object, 'a' array, 's' string, 'n' number, 'l' literal
	members []member
	elems   []*jv
	str     string // string value, or the literal's text
	num     number
}

type member struct {
	key string
	val *jv
}

// number is ±digits×10^exp with digits free of leading and trailing zeros
// ("0" for zero). At most 15 significant digits, so a float64 holds it
// exactly enough that its canonical form denotes the same decimal.
type number struct {
	neg    bool
	digits string
	exp    int
}

// runePool mixes what matters for escaping and ordering: ASCII, the
// characters JSON must escape, controls, Latin-1, BMP characters below and
// above the surrogate block (U+E000-U+FFFF sort after surrogate pairs in
// UTF-16), and supplementary characters.
var runePool = []rune{
	'a', 'b', 'z', 'A', 'Z', '0', '9', ' ', '_', '-', '.', '/', '<', '>', '&', '\'',
	'"', '\\', '\n', '\r', '\t', '\b', '\f', 0x00, 0x01, 0x1f, 0x7f,
	'é', 'ö', 'ß', 0x80, 0x2028, '€', 'ח', 'ア', 0xd7ff,
	0xe000, 0xfb33, 0xfeff, 0xfffd, 0xffff,
	0x10000, 0x1f602, 0x1d11e, 0x10ffff,
}

type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{rand.New(rand.NewPCG(seed, 0x5eed))} }

func (g *gen) str(maxLen int) string {
	n := g.r.IntN(maxLen + 1)
	var b strings.Builder
	for range n {
		b.WriteRune(runePool[g.r.IntN(len(runePool))])
	}
	return b.String()
}

func (g *gen) number() number {
	if g.r.IntN(10) == 0 {
		return number{digits: "0"}
	}
	nd := 1 + g.r.IntN(15)
	var b strings.Builder
	b.WriteByte(byte('1' + g.r.IntN(9)))
	for i := 1; i < nd; i++ {
		b.WriteByte(byte('0' + g.r.IntN(10)))
	}
	d := strings.TrimRight(b.String(), "0")
	exp := g.r.IntN(41) - 20 + (nd - len(d))
	return number{neg: g.r.IntN(3) == 0, digits: d, exp: exp}
}

// object generates an object of up to width members, nesting up to depth.
func (g *gen) object(depth, width int) *jv {
	v := &jv{kind: 'o'}
	seen := map[string]bool{}
	for range g.r.IntN(width + 1) {
		k := g.str(6)
		if seen[k] {
			continue
		}
		seen[k] = true
		v.members = append(v.members, member{k, g.value(depth-1, width)})
	}
	return v
}

func (g *gen) value(depth, width int) *jv {
	choice := g.r.IntN(10)
	if depth <= 0 {
		choice = 4 + g.r.IntN(6)
	}
	switch choice {
	case 0, 1, 2:
		return g.object(depth, width)
	case 3:
		v := &jv{kind: 'a'}
		for range g.r.IntN(width + 1) {
			v.elems = append(v.elems, g.value(depth-1, width))
		}
		return v
	case 4, 5, 6:
		return &jv{kind: 's', str: g.str(8)}
	case 7, 8:
		return &jv{kind: 'n', num: g.number()}
	default:
		return &jv{kind: 'l', str: [...]string{"true", "false", "null"}[g.r.IntN(3)]}
	}
}

func (v *jv) clone() *jv {
	c := *v
	c.members = make([]member, len(v.members))
	for i, m := range v.members {
		c.members[i] = member{m.key, m.val.clone()}
	}
	c.elems = make([]*jv, len(v.elems))
	for i, e := range v.elems {
		c.elems[i] = e.clone()
	}
	return &c
}

// plain spells v compactly, members in generation order, strings with the
// fewest escapes.
func (v *jv) plain() []byte {
	var b strings.Builder
	spell(&b, v, nil)
	return []byte(b.String())
}

// noisy spells v with shuffled members, random whitespace, random escapes
// and random number forms: the same JSON value, differently written.
func (v *jv) noisy(r *rand.Rand) []byte {
	var b strings.Builder
	spell(&b, v, r)
	return []byte(b.String())
}

func spell(b *strings.Builder, v *jv, r *rand.Rand) {
	switch v.kind {
	case 'o':
		order := make([]int, len(v.members))
		for i := range order {
			order[i] = i
		}
		if r != nil {
			r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		b.WriteByte('{')
		ws(b, r)
		for n, i := range order {
			if n > 0 {
				b.WriteByte(',')
				ws(b, r)
			}
			spellString(b, v.members[i].key, r)
			ws(b, r)
			b.WriteByte(':')
			ws(b, r)
			spell(b, v.members[i].val, r)
			ws(b, r)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		ws(b, r)
		for i, e := range v.elems {
			if i > 0 {
				b.WriteByte(',')
				ws(b, r)
			}
			spell(b, e, r)
			ws(b, r)
		}
		b.WriteByte(']')
	case 's':
		spellString(b, v.str, r)
	case 'n':
		spellNumber(b, v.num, r)
	default:
		b.WriteString(v.str)
	}
}

func ws(b *strings.Builder, r *rand.Rand) {
	if r == nil || r.IntN(3) != 0 {
		return
	}
	for range 1 + r.IntN(3) {
		b.WriteByte(" \t\n\r"[r.IntN(4)])
	}
}

var shortEscapes = map[rune]byte{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

func spellString(b *strings.Builder, s string, r *rand.Rand) {
	b.WriteByte('"')
	for _, c := range s {
		short, hasShort := shortEscapes[c]
		mustEscape := c < 0x20 || c == '"' || c == '\\'
		escape := mustEscape
		if r != nil && r.IntN(4) == 0 {
			escape = true
		}
		switch {
		case !escape:
			b.WriteRune(c)
		case c == '/' && r != nil && r.IntN(2) == 0:
			b.WriteString(`\/`)
		case hasShort && (r == nil || r.IntN(2) == 0):
			b.WriteByte('\\')
			b.WriteByte(short)
		default:
			for _, u := range utf16.Encode([]rune{c}) {
				h := fmt.Sprintf(`\u%04x`, u)
				if r != nil && r.IntN(2) == 0 {
					h = `\u` + strings.ToUpper(h[2:])
				}
				b.WriteString(h)
			}
		}
	}
	b.WriteByte('"')
}

func spellNumber(b *strings.Builder, n number, r *rand.Rand) {
	if n.neg || (n.digits == "0" && r != nil && r.IntN(2) == 0) {
		b.WriteByte('-')
	}
	digits, exp := n.digits, n.exp
	if r == nil {
		b.WriteString(digits)
		if exp != 0 {
			b.WriteString("e" + strconv.Itoa(exp))
		}
		return
	}
	// Trailing zeros move the exponent down; a decimal point moves it up.
	z := r.IntN(3)
	digits += strings.Repeat("0", z)
	exp -= z
	var intPart, frac string
	switch {
	case n.digits == "0":
		intPart, frac = "0", strings.Repeat("0", r.IntN(3))
	case r.IntN(4) == 0:
		intPart, frac = "0", strings.Repeat("0", r.IntN(3))+digits
	default:
		p := 1 + r.IntN(len(digits))
		intPart, frac = digits[:p], digits[p:]
	}
	exp += len(frac)
	b.WriteString(intPart)
	if frac != "" {
		b.WriteString("." + frac)
	}
	if exp == 0 && r.IntN(2) == 0 {
		return
	}
	b.WriteByte("eE"[r.IntN(2)])
	switch {
	case exp < 0:
		b.WriteByte('-')
	case r.IntN(2) == 0:
		b.WriteByte('+')
	}
	b.WriteString(strings.Repeat("0", r.IntN(2)))
	b.WriteString(strconv.Itoa(max(exp, -exp)))
}

// otherRune returns a rune of the pool different from c.
func otherRune(c rune, r *rand.Rand) rune {
	for {
		if o := runePool[r.IntN(len(runePool))]; o != c {
			return o
		}
	}
}

// replaceRune returns s with its i-th rune replaced by a different one.
func replaceRune(s string, i int, r *rand.Rand) string {
	rs := []rune(s)
	rs[i] = otherRune(rs[i], r)
	return string(rs)
}

// mutations returns every one-place change of root: each character of each
// string and key replaced or removed, each number changed, each literal
// swapped, and each member or element added or removed. Each result is a
// different JSON value from root.
func mutations(root *jv, r *rand.Rand) []*jv {
	var out []*jv
	var walk func(path []int)
	walk = func(path []int) {
		at := func(t *jv) *jv {
			for _, i := range path {
				if t.kind == 'o' {
					t = t.members[i].val
				} else {
					t = t.elems[i]
				}
			}
			return t
		}
		mutate := func(f func(v *jv) bool) {
			c := root.clone()
			if f(at(c)) {
				out = append(out, c)
			}
		}
		v := at(root)
		switch v.kind {
		case 'o':
			for i, m := range v.members {
				n := utf8.RuneCountInString(m.key)
				for k := range n {
					mutate(func(v *jv) bool {
						key := replaceRune(m.key, k, r)
						if v.hasKey(key) {
							return false
						}
						v.members[i].key = key
						return true
					})
				}
				mutate(func(v *jv) bool {
					v.members = append(v.members[:i], v.members[i+1:]...)
					return true
				})
				walk(append(append([]int(nil), path...), i))
			}
			mutate(func(v *jv) bool {
				key := "added"
				for v.hasKey(key) {
					key += "+"
				}
				v.members = append(v.members, member{key, &jv{kind: 'l', str: "null"}})
				return true
			})
		case 'a':
			for i := range v.elems {
				mutate(func(v *jv) bool {
					v.elems = append(v.elems[:i], v.elems[i+1:]...)
					return true
				})
				walk(append(append([]int(nil), path...), i))
			}
			mutate(func(v *jv) bool {
				v.elems = append(v.elems, &jv{kind: 'l', str: "null"})
				return true
			})
		case 's':
			for k := range utf8.RuneCountInString(v.str) {
				mutate(func(v *jv) bool { v.str = replaceRune(v.str, k, r); return true })
				mutate(func(v *jv) bool {
					rs := []rune(v.str)
					v.str = string(append(rs[:k], rs[k+1:]...))
					return true
				})
			}
			mutate(func(v *jv) bool { v.str += "x"; return true })
		case 'n':
			mutate(func(v *jv) bool { v.num = v.num.bumpLastDigit(); return true })
			mutate(func(v *jv) bool { v.num.exp++; return v.num.digits != "0" })
			mutate(func(v *jv) bool { v.num.neg = !v.num.neg; return v.num.digits != "0" })
			mutate(func(v *jv) bool { v.kind, v.str = 's', v.num.plainText(); return true })
		default:
			mutate(func(v *jv) bool {
				v.str = map[string]string{"true": "false", "false": "null", "null": "true"}[v.str]
				return true
			})
		}
	}
	walk(nil)
	return out
}

func (v *jv) hasKey(k string) bool {
	for _, m := range v.members {
		if m.key == k {
			return true
		}
	}
	return false
}

// bumpLastDigit changes the value by one unit in its last significant digit.
func (n number) bumpLastDigit() number {
	d := []byte(n.digits)
	last := d[len(d)-1]
	if last == '9' {
		d[len(d)-1] = '8'
	} else {
		d[len(d)-1] = last + 1
	}
	n.digits = strings.TrimRight(string(d), "0")
	if n.digits == "" {
		n.digits = "1"
	}
	if len(n.digits) < len(d) {
		n.exp += len(d) - len(n.digits)
	}
	return n
}

func (n number) plainText() string {
	var b strings.Builder
	spellNumber(&b, n, nil)
	return b.String()
}
