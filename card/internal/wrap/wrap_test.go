package wrap

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// genParts are the pieces generated lines are made of: plain words,
// spaces and runs of them, escape sequences (a \n among them, and a
// backslash at the very end), wide characters, marks and the card's own
// line marks.
var genParts = []string{
	"a", "word", "example.com", "x@h1.com", "0123456789abcdefghij", "-", ":",
	" ", "  ", "\\n", "\\u{200b}", "\\{3 spaces}", "\\\\", "\\",
	"\u4e00", "\u3000", "\u0301", "\u00e9", "\u2d30", "\U0001d41a", "┆", "▌",
	strings.Repeat("y", 70), strings.Repeat("\u4e00", 30), "\xff", "\xe4\xb8", "a\u0301\u0301",
}

// genLine builds the pieces of one logical line from r.
func genLine(r *rand.Rand) (indent int, cont string, ps []Piece) {
	indent = r.IntN(24)
	if r.IntN(3) == 0 {
		cont = "| "
	}
	for range 1 + r.IntN(5) {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(genParts[r.IntN(len(genParts))])
		}
		if r.IntN(3) == 0 {
			ps = append(ps, Fixed(b.String()))
		} else {
			ps = append(ps, Derived(b.String()))
		}
	}
	return indent, cont, ps
}

// sameLayout writes the lines with the writer and with the reference, one
// line at a time, and requires the same text of each.
func sameLayout(t *testing.T, width int, lines func(func(int, string, []Piece))) {
	w, ref := New(width, 0), newRef(width, 0)
	lines(func(indent int, cont string, ps []Piece) {
		w.Line(indent, cont, ps...)
		ref.Line(indent, cont, ps...)
		require.Equal(t, ref.String(), w.String(), "width %d, indent %d, cont %q, pieces %q", width, indent, cont, ps)
	})
}

// TestLineSameAsReference: on generated lines at widths from the narrowest
// up, the writer wraps every line exactly as the atom-by-atom reference.
func TestLineSameAsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 400 {
		sameLayout(t, 40+r.IntN(100), func(line func(int, string, []Piece)) {
			for range 1 + r.IntN(8) {
				indent, cont, ps := genLine(r)
				line(indent, cont, ps)
				if r.IntN(4) == 0 {
					line(indent, cont, ps) // a fixed line wrapped again
				}
			}
		})
	}
}

// FuzzLine: whatever the text, pieces and width, the writer wraps a line
// exactly as the atom-by-atom reference.
//
//	go test ./card/internal/wrap -run '^$' -fuzz FuzzLine -fuzztime 20s
func FuzzLine(f *testing.F) {
	f.Add("ok \\n next", "head: ", uint8(0), uint8(3), false)
	f.Add(strings.Repeat("abc ", 40), strings.Repeat("x", 90), uint8(40), uint8(0), true)
	f.Add(strings.Repeat("\u4e00a\\u{200b}", 30), "(!) ", uint8(10), uint8(20), false)
	f.Fuzz(func(t *testing.T, derived, fixed string, width, indent uint8, cont bool) {
		if len(derived)+len(fixed) > 1<<12 {
			return
		}
		c := ""
		if cont {
			c = "| "
		}
		sameLayout(t, 40+int(width), func(line func(int, string, []Piece)) {
			line(int(indent%40), c, []Piece{Fixed(fixed), Derived(derived)})
			line(int(indent%40), c, []Piece{Derived(derived)})
			line(int(indent%40), c, []Piece{Fixed(fixed)})
		})
	})
}

// TestShortIsLine holds Short to the line Line writes for the same head
// and value, whenever Short writes one: generated heads and values of
// every length around the width, at every indent, with escapes, wide
// characters and backslashes among them, in writers of several widths.
func TestShortIsLine(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	wrote := 0
	for i := range 20000 {
		width := []int{80, 40, 30, 200}[i%4]
		indent := r.IntN(24)
		var hb, vb strings.Builder
		for range r.IntN(4) {
			hb.WriteString(genParts[r.IntN(len(genParts))])
		}
		for range r.IntN(12) {
			vb.WriteString(genParts[r.IntN(len(genParts))])
		}
		head := Fixed("[" + hb.String() + "]")
		if r.IntN(2) == 0 {
			head = Derived(hb.String())
		}
		a, value, c := "", vb.String(), ""
		switch r.IntN(3) {
		case 0:
			a, c = `"`, `"`
		case 1:
			a = genParts[r.IntN(len(genParts))]
		}
		ps := []Piece{head, Fixed(": "), Derived(a), Derived(value), Derived(c)}
		short, line := New(width, 0), New(width, 0)
		if !short.Short(indent, head, a, value, c) {
			require.Zero(t, short.Len(), "Short wrote a line it reported it did not")
			continue
		}
		wrote++
		line.Line(indent, "", ps...)
		require.Equal(t, line.String(), short.String(), "width %d indent %d head %q value %q %q %q", width, indent, head.s, a, value, c)
	}
	require.Greater(t, wrote, 2000, "the generator made too few lines that fit")
}

// FuzzShort holds Short to Line on any head and value: a line Short
// writes is the line Line writes, and one it declines it leaves unwritten.
func FuzzShort(f *testing.F) {
	f.Add("[12]", "", "1", "", uint8(40), uint8(3), false)
	f.Add("to", `"`, "finance@example.com", `"`, uint8(40), uint8(0), true)
	f.Add("k", "list of ", "3", "", uint8(0), uint8(30), true)
	f.Add("a\\n", `"`, "x\\ny", `"`, uint8(120), uint8(2), false)
	f.Fuzz(func(t *testing.T, head, a, value, c string, width, indent uint8, derived bool) {
		if len(head)+len(a)+len(value)+len(c) > 1<<12 {
			return
		}
		h := Fixed(head)
		if derived {
			h = Derived(head)
		}
		short, line := New(20+int(width), 0), New(20+int(width), 0)
		if !short.Short(int(indent%40), h, a, value, c) {
			if short.Len() != 0 {
				t.Fatalf("Short wrote %q and reported it did not", short.String())
			}
			return
		}
		line.Line(int(indent%40), "", h, Fixed(": "), Derived(a), Derived(value), Derived(c))
		if line.String() != short.String() {
			t.Fatalf("Short wrote %q, Line %q", short.String(), line.String())
		}
	})
}
