package wrap

// The layout as it was first written, atom by atom, kept as the reference
// the writer's output is compared with.

import (
	"strings"
	"unicode/utf8"

	"github.com/agentstepup/asu/card/internal/escape"
)

// refWriter writes the text view, wrapping at width columns.
type refWriter struct {
	b     strings.Builder
	width int
	cur   []atom
	fixed map[refFixedLine]string // how lines of fixed text were wrapped
}

// refFixedLine is a line of one piece of fixed text at an indent.
type refFixedLine struct {
	pad     int
	cont, s string
}

// refMaxFixed is how many wrapped lines of fixed text a writer remembers.
const refMaxFixed = 64

// New returns a writer wrapping at width columns, with room for about
// size bytes.
func newRef(width, size int) *refWriter {
	w := &refWriter{width: width}
	w.b.Grow(size)
	return w
}

// Len returns the number of bytes written so far.
func (w *refWriter) Len() int { return w.b.Len() }

// Again writes once more what was written from byte start to byte end,
// for text that would be written the same way again.
func (w *refWriter) Again(start, end int) { w.b.WriteString(w.b.String()[start:end]) }

// String returns what was written, as a copy of its own size when the
// writer was given much more room than it used.
func (w *refWriter) String() string {
	if w.b.Cap() > w.b.Len()+w.b.Len()/4+4096 {
		return strings.Clone(w.b.String())
	}
	return w.b.String()
}

// Line writes one logical line at indent (in steps of two columns),
// wrapped. A continuation line repeats the indent, then cont (the region's
// prefix, such as "| " in the agent's region), then "┆". A line broken at a
// space goes on after "┆ ", the space itself dropped; a line broken inside
// a word, or after a \n, goes on right after "┆". Either way the text is
// recovered exactly by joining the lines, so wrapping keeps the view
// injective.
func (w *refWriter) Line(indent int, cont string, ps ...Piece) {
	pad := min(2*indent, maxIndent, w.width-4-displayWidth(cont)-minRoom)
	// Most lines fit: write them as they are. A line is at most as wide
	// as it is long in bytes, so a short one is not measured.
	if total := 2 + pad; total <= w.width {
		fits, n := true, total
		for _, p := range ps {
			if p.agent && strings.Contains(p.s, `\n`) {
				fits = false // a \n ends a displayed line
				break
			}
			n += len(p.s)
		}
		if fits && n > w.width {
			if len(ps) == 1 && !ps[0].agent {
				// Wrapped before, at this indent?
				if out, ok := w.fixed[refFixedLine{pad, cont, ps[0].s}]; ok {
					w.b.WriteString(out)
					return
				}
			}
			for _, p := range ps {
				total += displayWidth(p.s)
			}
			fits = total <= w.width
		}
		if fits {
			w.b.WriteString(lineMark)
			refWriteSpaces(&w.b, pad)
			for _, p := range ps {
				w.b.WriteString(p.s)
			}
			w.b.WriteByte('\n')
			return
		}
	}
	// A line of the card's own text alone (a flag, a warning) is wrapped
	// the same way each time it comes at the same indent.
	var key refFixedLine
	if len(ps) == 1 && !ps[0].agent {
		key = refFixedLine{pad, cont, ps[0].s}
		if out, ok := w.fixed[key]; ok {
			w.b.WriteString(out)
			return
		}
		start := w.b.Len()
		defer func() {
			if len(w.fixed) < refMaxFixed {
				if w.fixed == nil {
					w.fixed = map[refFixedLine]string{}
				}
				w.fixed[key] = strings.Clone(w.b.String()[start:])
			}
		}()
	}
	head := strings.Repeat(" ", pad)
	contHead := head + cont + "┆"
	contCols := pad + displayWidth(cont) + 1
	first := true
	sep := ""
	room := func() int {
		if first {
			return w.width - 2 - pad // lineMark is two columns
		}
		return w.width - 2 - contCols - len(sep)
	}
	flush := func(nextSep string) {
		w.b.WriteString(lineMark)
		if first {
			w.b.WriteString(head)
		} else {
			w.b.WriteString(contHead)
			w.b.WriteString(sep)
		}
		for _, a := range w.cur {
			w.b.WriteString(a.s)
		}
		w.b.WriteByte('\n')
		w.cur = w.cur[:0]
		first = false
		sep = nextSep
	}
	col := 0
	var push func(a atom)
	push = func(a atom) {
		if a.w > room() && utf8.RuneCountInString(a.s) > 1 {
			// A word of the card's own wider than a line: by character.
			for _, r := range a.s {
				push(atom{s: string(r), w: runeWidth(r)})
			}
			return
		}
		if col+a.w > room() && len(w.cur) > 0 {
			if a.space {
				flush(" ")
				col = 0
				return
			}
			// Break at the last space of the line when that leaves the
			// line at least a third full; else inside the word.
			cut := -1
			for i := len(w.cur) - 1; i > 0; i-- {
				if w.cur[i].space {
					cut = i
					break
				}
			}
			if cut > 0 && refLineCols(w.cur[:cut]) >= room()/3 {
				carry := append([]atom(nil), w.cur[cut+1:]...)
				w.cur = w.cur[:cut]
				flush(" ")
				w.cur = append(w.cur, carry...)
			} else {
				flush("")
			}
			col = refLineCols(w.cur)
		}
		w.cur = append(w.cur, a)
		col += a.w
		if a.brk {
			flush("")
			col = 0
		}
	}
	for _, p := range ps {
		refSplitAtoms(p, push)
	}
	if len(w.cur) > 0 || first {
		flush("")
	}
}

func refLineCols(as []atom) int {
	n := 0
	for _, a := range as {
		n += a.w
	}
	return n
}

// refSplitAtoms cuts a Piece into atoms; in derived text an escape sequence
// is one atom.
func refSplitAtoms(p Piece, push func(atom)) {
	s := p.s
	if !p.agent {
		// The card's own text breaks between words; a word wider than
		// a line is split into characters by push.
		for i := 0; i < len(s); {
			if s[i] == ' ' {
				push(atom{s: " ", w: 1, space: true})
				i++
				continue
			}
			j := strings.IndexByte(s[i:], ' ')
			if j < 0 {
				j = len(s) - i
			}
			push(atom{s: s[i : i+j], w: displayWidth(s[i : i+j])})
			i += j
		}
		return
	}
	for i := 0; i < len(s); {
		if p.agent && s[i] == '\\' && i+1 < len(s) {
			j := escape.End(s, i)
			push(atom{s: s[i:j], w: j - i, brk: s[i+1] == 'n'})
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		push(atom{s: s[i : i+size], w: runeWidth(r), space: r == ' '})
		i += size
	}
}

func refWriteSpaces(b *strings.Builder, n int) {
	for n > len(blanks) {
		b.WriteString(blanks)
		n -= len(blanks)
	}
	b.WriteString(blanks[:n])
}
