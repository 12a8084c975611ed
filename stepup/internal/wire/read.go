package wire

import (
	"errors"
	"io"
)

// PresizeBytes bounds the buffer [ReadAll] makes before it has read
// anything.
const PresizeBytes = 64 << 10

// ReadAll reads r to its end, as io.ReadAll does, into room for size
// bytes when 0 < size <= max (a request's or response's Content-Length,
// under the caller's own bound), so that a body of the length announced is
// read without regrowing its buffer. The size only sizes the first buffer,
// and that at most [PresizeBytes], so that a length announced and never
// sent costs little: r (a MaxBytesReader or LimitReader) still bounds what
// is read, and a body longer or shorter than announced reads as io.ReadAll
// would read it.
func ReadAll(r io.Reader, size, max int64) ([]byte, error) {
	c := 512
	if size > 0 && size <= max {
		c = int(min(size, PresizeBytes)) + 1 // the one more lets the last Read report io.EOF
	}
	b := make([]byte, 0, c)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}
