// Package wrap lays out the card's text view: logical lines of the card's
// own text and of escaped display text, each physical line starting with
// a mark that display text cannot show, wrapped at a width so that joining
// the wrapped lines gives the text back exactly.
package wrap

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentstepup/asu/card/internal/chunked"
	"github.com/agentstepup/asu/card/internal/escape"
	"golang.org/x/text/width"
)

// Text view line layout. Every physical line the card writes starts with
// lineMark, and agent-controlled text never shows that character (box
// drawing and block characters are always escaped), so a line that starts
// with it is the card's own at any terminal width: a terminal narrower than
// the card wraps long lines, and the pieces it makes start without it. A
// line the card wraps itself continues after contMark, which agent text
// cannot show either.
const (
	lineMark = "▌ "
	contMark = "┆ "

	// minRoom is the fewest columns a line keeps for its text, however
	// deeply it is indented.
	minRoom = 24
	// maxIndent is the deepest indentation, in columns. Deeper values are
	// not indented further; each object and list says how many members or
	// items follow it, so the nesting still reads unambiguously.
	maxIndent = 32
)

// Piece is part of a logical line: fixed text of the card, or display text
// derived from the effect (already escaped).
type Piece struct {
	s     string
	agent bool
}

// Fixed is text of the card's own.
func Fixed(s string) Piece { return Piece{s: s} }

// Derived is display text from the effect or the agent, already escaped.
func Derived(s string) Piece { return Piece{s: s, agent: true} }

// atom is the unit a line is broken between: one character, or one escape
// sequence, which is never split.
type atom struct {
	s     string
	w     int
	space bool // a break may come before it
	brk   bool // a line break must follow it (a \n escape)
}

// Writer writes the text view, wrapping at width columns.
type Writer struct {
	b     chunked.Builder
	width int
	lay   layout               // the line being wrapped
	carry []atom               // room for the atoms a break carries to the next line
	fixed map[fixedLine]string // how lines of fixed text were wrapped
}

// fixedLine is a line of one piece of fixed text at an indent.
type fixedLine struct {
	pad     int
	cont, s string
}

// maxFixed is how many wrapped lines of fixed text a writer remembers.
const maxFixed = 64

// New returns a writer wrapping at width columns, with room for about
// size bytes.
func New(width, size int) *Writer {
	w := &Writer{width: width}
	w.b.Grow(size)
	return w
}

// Len returns the number of bytes written so far.
func (w *Writer) Len() int { return w.b.Len() }

// Again writes once more what was written from byte start to byte end,
// for text that would be written the same way again.
func (w *Writer) Again(start, end int) { w.b.Again(start, end) }

// String returns what was written, as a copy of its own size when the
// writer was given much more room than it used.
func (w *Writer) String() string { return w.b.String() }

// Line writes one logical line at indent (in steps of two columns),
// wrapped. A continuation line repeats the indent, then cont (the region's
// prefix, such as "| " in the agent's region), then "┆". A line broken at a
// space goes on after "┆ ", the space itself dropped; a line broken inside
// a word, or after a \n, goes on right after "┆". Either way the text is
// recovered exactly by joining the lines, so wrapping keeps the view
// injective.
func (w *Writer) Line(indent int, cont string, ps ...Piece) {
	pad := min(2*indent, maxIndent, w.width-4-displayWidth(cont)-minRoom)
	// Most lines fit: write them as they are. A line is at most as wide
	// as it is long in bytes, so a short one is not measured.
	if total := 2 + pad; total <= w.width {
		fits, n := true, total
		for _, p := range ps {
			if p.agent && strings.IndexByte(p.s, '\\') >= 0 && strings.Contains(p.s, `\n`) {
				fits = false // a \n ends a displayed line
				break
			}
			n += len(p.s)
		}
		if fits && n > w.width {
			if len(ps) == 1 && !ps[0].agent {
				// Wrapped before, at this indent?
				if out, ok := w.fixed[fixedLine{pad, cont, ps[0].s}]; ok {
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
			// n counts lineMark as two columns, and each byte of the
			// pieces: room for all of the line at once.
			head := lineHead(pad)
			out := w.b.Take(n - 2 - pad + len(head) + 1)
			if out == nil {
				return // counting
			}
			k := copy(out, head)
			for _, p := range ps {
				k += copy(out[k:], p.s)
			}
			out[k] = '\n'
			return
		}
	}
	// A line of the card's own text alone (a flag, a warning) is wrapped
	// the same way each time it comes at the same indent.
	var key fixedLine
	if len(ps) == 1 && !ps[0].agent {
		key = fixedLine{pad, cont, ps[0].s}
		if out, ok := w.fixed[key]; ok {
			w.b.WriteString(out)
			return
		}
		start := w.b.Len()
		defer func() {
			if len(w.fixed) < maxFixed {
				if w.fixed == nil {
					w.fixed = map[fixedLine]string{}
				}
				w.fixed[key] = w.b.Since(start)
			}
		}()
	}
	l := &w.lay
	*l = layout{w: w, pad: pad, cont: cont, first: true, cur: l.cur[:0]}
	l.contCols = pad + displayWidth(cont) + 1
	l.room = w.width - 2 - pad // lineMark is two columns
	for _, p := range ps {
		l.split(p)
	}
	if len(l.cur) > 0 || l.first {
		l.flush("")
	}
}

// Short writes the line Line(indent, "", head, Fixed(": "), Derived(a),
// Derived(b), Derived(c)) would write when that line fits the width as it
// is, and reports whether it did; when it does not, Short writes nothing
// and the line is Line's to wrap. It is the line of most items and
// members (a scalar, quoted or not; "list of 3"), written without the
// pieces' room.
func (w *Writer) Short(indent int, head Piece, a, b, c string) bool {
	pad := min(2*indent, maxIndent, w.width-4-minRoom)
	n := 2 + pad + len(head.s) + len(": ") + len(a) + len(b) + len(c)
	// A line is at most as wide as it is long in bytes; one longer than
	// the width, or holding a backslash (a \n ends a displayed line), is
	// measured by Line.
	if pad < 0 || n > w.width || strings.IndexByte(b, '\\') >= 0 || strings.IndexByte(a, '\\') >= 0 ||
		strings.IndexByte(c, '\\') >= 0 || head.agent && strings.IndexByte(head.s, '\\') >= 0 {
		return false
	}
	lh := lineHead(pad)
	out := w.b.Take(n - 2 - pad + len(lh) + 1)
	if out == nil {
		return true // counting
	}
	k := copy(out, lh)
	k += copy(out[k:], head.s)
	k += copy(out[k:], ": ")
	k += copy(out[k:], a)
	k += copy(out[k:], b)
	k += copy(out[k:], c)
	out[k] = '\n'
	return true
}

// layout is the state of one logical line being wrapped. Its lines are
// made of atoms, each one character or escape sequence, except that a run
// of characters other than spaces and escapes that fits on the line whole
// is one atom: it holds no place to break before, so it lays out as its
// characters would.
type layout struct {
	w        *Writer
	pad      int
	cont     string
	contCols int
	first    bool
	sep      string // what the next continuation line starts with
	room     int    // columns the current line has for its text
	col      int    // columns taken on the current line
	cur      []atom
}

// flush writes the current line and starts the next, which goes on after
// nextSep.
func (l *layout) flush(nextSep string) {
	b := &l.w.b
	b.WriteString(lineMark)
	writeSpaces(b, l.pad)
	if !l.first {
		b.WriteString(l.cont)
		b.WriteString("┆")
		b.WriteString(l.sep)
	}
	for _, a := range l.cur {
		b.WriteString(a.s)
	}
	b.WriteByte('\n')
	l.cur = l.cur[:0]
	l.first = false
	l.sep = nextSep
	l.room = l.w.width - 2 - l.contCols - len(l.sep)
}

// push adds an atom to the current line, breaking the line before it when
// it does not fit.
func (l *layout) push(a atom) {
	if a.w > l.room && utf8.RuneCountInString(a.s) > 1 {
		// A word of the card's own wider than a line: by character.
		for _, r := range a.s {
			l.push(atom{s: string(r), w: runeWidth(r)})
		}
		return
	}
	if l.col+a.w > l.room && len(l.cur) > 0 {
		if a.space {
			l.flush(" ")
			l.col = 0
			return
		}
		// Break at the last space of the line when that leaves the
		// line at least a third full; else inside the word.
		cut := -1
		for i := len(l.cur) - 1; i > 0; i-- {
			if l.cur[i].space {
				cut = i
				break
			}
		}
		if cut > 0 && lineCols(l.cur[:cut]) >= l.room/3 {
			carry := l.w.carry[:0]
			carry = append(carry, l.cur[cut+1:]...)
			l.cur = l.cur[:cut]
			l.flush(" ")
			l.cur = append(l.cur, carry...)
			l.w.carry = carry[:0]
		} else {
			l.flush("")
		}
		l.col = lineCols(l.cur)
	}
	l.cur = append(l.cur, a)
	l.col += a.w
	if a.brk {
		l.flush("")
		l.col = 0
	}
}

// pushWord adds s, text with no space and no backslash: as one atom each
// longest part that fits on the line, the character after it alone (to
// break the line before it). Pushed a character at a time, each would go
// on the line the same way, with no break inside the part.
func (l *layout) pushWord(s string) {
	for len(s) > 0 {
		cols, i := 0, 0
		for i < len(s) {
			w, size := 1, 1
			if s[i] >= utf8.RuneSelf {
				var r rune
				r, size = utf8.DecodeRuneInString(s[i:])
				w = runeWidth(r)
			}
			if l.col+cols+w > l.room {
				break
			}
			cols += w
			i += size
		}
		if i > 0 {
			l.push(atom{s: s[:i], w: cols})
			s = s[i:]
		}
		if len(s) == 0 {
			return
		}
		r, size := utf8.DecodeRuneInString(s)
		l.push(atom{s: s[:size], w: runeWidth(r)})
		s = s[size:]
	}
}

func lineCols(as []atom) int {
	n := 0
	for _, a := range as {
		n += a.w
	}
	return n
}

// split cuts a Piece into atoms and pushes them; in derived text an escape
// sequence is one atom.
func (l *layout) split(p Piece) {
	s := p.s
	if !p.agent {
		// The card's own text breaks between words; a word wider than
		// a line is split into characters by push.
		for i := 0; i < len(s); {
			if s[i] == ' ' {
				l.push(atom{s: " ", w: 1, space: true})
				i++
				continue
			}
			j := strings.IndexByte(s[i:], ' ')
			if j < 0 {
				j = len(s) - i
			}
			l.push(atom{s: s[i : i+j], w: displayWidth(s[i : i+j])})
			i += j
		}
		return
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c != ' ' && c != '\\' {
			j := i + 1
			for j < len(s) && s[j] != ' ' && s[j] != '\\' {
				j++
			}
			l.pushWord(s[i:j])
			i = j
			continue
		}
		if c == '\\' && i+1 < len(s) {
			j := escape.End(s, i)
			l.push(atom{s: s[i:j], w: j - i, brk: s[i+1] == 'n'})
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		l.push(atom{s: s[i : i+size], w: runeWidth(r), space: r == ' '})
		i += size
	}
}

// runeWidth is the number of terminal columns r takes.
func runeWidth(r rune) int {
	switch {
	case r < 0x300:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

func displayWidth(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			for _, r := range s[i:] {
				n += runeWidth(r)
			}
			return n
		}
		n++
	}
	return n
}

// lineHeads are lineMark followed by each indent up to maxIndent.
var lineHeads = func() (hs [maxIndent + 1]string) {
	for i := range hs {
		hs[i] = lineMark + blanks[:i]
	}
	return hs
}()

// lineHead returns lineMark followed by pad spaces.
func lineHead(pad int) string {
	if pad >= 0 && pad <= maxIndent {
		return lineHeads[pad]
	}
	return lineMark + strings.Repeat(" ", max(pad, 0))
}

const blanks = "                                                                "

func writeSpaces(b *chunked.Builder, n int) {
	for n > len(blanks) {
		b.WriteString(blanks)
		n -= len(blanks)
	}
	b.WriteString(blanks[:n])
}
