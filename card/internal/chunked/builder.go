// Package chunked builds a large string in chunks that are filled and
// never moved, so text much larger than first thought is copied once, when
// it is joined, rather than each time a single buffer outgrows its room.
package chunked

import (
	"strings"
	"unsafe"
)

// minChunk is the least room a buffer takes at a time.
const minChunk = 64 << 10

// Builder holds the text written so far in chunks. The zero value is
// ready to use.
//
// Bytes once written are never written again: a chunk is only ever
// written past its end so far, so the strings [Builder.String] and
// the chunks already filled read it in place, as [strings.Builder] does.
// A write copies into the chunk and moves an index, storing no pointer.
//
// A builder set to count ([Builder.CountOnly]) keeps nothing and only
// counts the bytes written, so that code writing a large text can be run
// once to learn its length and again to write it into room of that size.
type Builder struct {
	done     []string // chunks filled, in order
	doneLen  int      // their length in bytes
	buf      []byte   // the current chunk, written up to n
	n        int
	counting bool // keep nothing: n counts what is written
}

// CountOnly sets b, which holds nothing yet, to count the bytes written
// rather than keep them: [Builder.Len] and [Builder.Again] work as they
// do for a builder that keeps them; [Builder.String] and [Builder.Since]
// return "".
func (b *Builder) CountOnly() { *b = Builder{counting: true} }

// Len returns the number of bytes written.
func (b *Builder) Len() int { return b.doneLen + b.n }

// Grow makes sure the current chunk has room for n more bytes.
func (b *Builder) Grow(n int) {
	if !b.counting {
		b.room(n)
	}
}

// written returns what the current chunk holds, in place.
func (b *Builder) written() string {
	if b.n == 0 {
		return ""
	}
	return unsafe.String(&b.buf[0], b.n)
}

// room makes sure the current chunk has room for n more bytes, starting a
// new one if not: at least as large as all written so far.
func (b *Builder) room(n int) {
	if len(b.buf)-b.n >= n {
		return
	}
	if b.n > 0 {
		b.done = append(b.done, b.written())
		b.doneLen += b.n
	}
	b.buf = make([]byte, max(n, b.Len(), minChunk))
	b.n = 0
}

// WriteString appends s.
func (b *Builder) WriteString(s string) {
	if b.counting {
		b.n += len(s)
		return
	}
	if len(b.buf)-b.n < len(s) {
		b.room(len(s))
	}
	b.n += copy(b.buf[b.n:], s)
}

// Take appends n bytes for the caller to fill, and returns them: room in
// the current chunk, counted as written, which the caller must fill
// before anything else is written. A builder set to count returns nil,
// into which copy writes nothing.
func (b *Builder) Take(n int) []byte {
	if b.counting {
		b.n += n
		return nil
	}
	if len(b.buf)-b.n < n {
		b.room(n)
	}
	p := b.buf[b.n : b.n+n : b.n+n]
	b.n += n
	return p
}

// WriteByte appends c; its error is always nil.
func (b *Builder) WriteByte(c byte) error {
	if b.counting {
		b.n++
		return nil
	}
	if len(b.buf) == b.n {
		b.room(1)
	}
	b.buf[b.n] = c
	b.n++
	return nil
}

// Write appends p; it always writes all of p.
func (b *Builder) Write(p []byte) (int, error) {
	if b.counting {
		b.n += len(p)
		return len(p), nil
	}
	if len(b.buf)-b.n < len(p) {
		b.room(len(p))
	}
	b.n += copy(b.buf[b.n:], p)
	return len(p), nil
}

// rangeOf calls f with the written text from byte start to byte end, in
// the parts the chunks hold it in. The parts stay valid as more is written.
func (b *Builder) rangeOf(start, end int, f func(string)) {
	off := 0
	for _, c := range b.done {
		if off >= end {
			return
		}
		if lo, hi := max(start-off, 0), min(end-off, len(c)); lo < hi {
			f(c[lo:hi])
		}
		off += len(c)
	}
	if lo, hi := max(start-off, 0), min(end-off, b.n); lo < hi {
		f(b.written()[lo:hi])
	}
}

// Again appends once more the written text from byte start to byte end.
func (b *Builder) Again(start, end int) {
	if b.counting {
		b.n += end - start
		return
	}
	if start >= b.doneLen && len(b.buf)-b.n >= end-start {
		// In the current chunk, with room after it: copied in place.
		b.n += copy(b.buf[b.n:], b.buf[start-b.doneLen:end-b.doneLen])
		return
	}
	b.room(end - start)
	b.rangeOf(start, end, func(s string) { b.n += copy(b.buf[b.n:], s) })
}

// Since returns a copy of the text written from byte start on.
func (b *Builder) Since(start int) string {
	if b.counting {
		return ""
	}
	var s strings.Builder
	s.Grow(b.Len() - start)
	b.rangeOf(start, b.Len(), func(p string) { s.WriteString(p) })
	return s.String()
}

// String returns all that was written: the one chunk as it is, or as a
// copy of its own size when it was given much more room than it used; the
// chunks joined when there are several.
func (b *Builder) String() string {
	if b.counting {
		return ""
	}
	if len(b.done) == 0 {
		if len(b.buf) > b.n+b.n/4+4096 {
			return strings.Clone(b.written())
		}
		return b.written()
	}
	return b.Since(0)
}
