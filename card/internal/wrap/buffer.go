package wrap

import "strings"

// minChunk is the least room a buffer takes at a time.
const minChunk = 64 << 10

// buffer holds the text written so far in chunks that are filled and never
// moved, so a view much larger than first thought is copied once, when it
// is joined, rather than each time a single buffer outgrows its room.
type buffer struct {
	done    []string // chunks filled, in order
	doneLen int      // their length in bytes
	cur     strings.Builder
}

// Len returns the number of bytes written.
func (b *buffer) Len() int { return b.doneLen + b.cur.Len() }

// room makes sure the current chunk has room for n more bytes, starting a
// new one if not: at least as large as all written so far.
func (b *buffer) room(n int) {
	if b.cur.Cap()-b.cur.Len() >= n {
		return
	}
	if b.cur.Len() > 0 {
		b.done = append(b.done, b.cur.String())
		b.doneLen += b.cur.Len()
	}
	b.cur = strings.Builder{}
	b.cur.Grow(max(n, b.Len(), minChunk))
}

// writeString appends s.
func (b *buffer) writeString(s string) {
	b.room(len(s))
	b.cur.WriteString(s)
}

// writeByte appends c.
func (b *buffer) writeByte(c byte) {
	b.room(1)
	b.cur.WriteByte(c)
}

// rangeOf calls f with the written text from byte start to byte end, in
// the parts the chunks hold it in. The parts stay valid as more is written.
func (b *buffer) rangeOf(start, end int, f func(string)) {
	off := 0
	for _, c := range append(b.done[:len(b.done):len(b.done)], b.cur.String()) {
		lo, hi := max(start-off, 0), min(end-off, len(c))
		if lo < hi {
			f(c[lo:hi])
		}
		off += len(c)
		if off >= end {
			return
		}
	}
}

// Again appends once more the written text from byte start to byte end.
func (b *buffer) Again(start, end int) {
	b.room(end - start)
	b.rangeOf(start, end, func(s string) { b.cur.WriteString(s) })
}

// Since returns a copy of the text written from byte start on.
func (b *buffer) Since(start int) string {
	var s strings.Builder
	s.Grow(b.Len() - start)
	b.rangeOf(start, b.Len(), func(p string) { s.WriteString(p) })
	return s.String()
}

// String returns all that was written: the one chunk as it is, or as a
// copy of its own size when it was given much more room than it used; the
// chunks joined when there are several.
func (b *buffer) String() string {
	if len(b.done) == 0 {
		if b.cur.Cap() > b.cur.Len()+b.cur.Len()/4+4096 {
			return strings.Clone(b.cur.String())
		}
		return b.cur.String()
	}
	return b.Since(0)
}
