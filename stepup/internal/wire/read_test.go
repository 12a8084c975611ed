package wire_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/internal/wire"
)

// TestReadAllReadsWhatIOReadAllReads: for bodies of many lengths, read in
// pieces of many sizes, and any announced size (right, short, long,
// absent, over the bound), ReadAll returns what io.ReadAll returns, and a
// body of the announced length costs one buffer.
func TestReadAllReadsWhatIOReadAllReads(t *testing.T) {
	const max = 4 << 10
	for _, n := range []int{0, 1, 511, 512, 513, 1000, max, max + 7} {
		body := bytes.Repeat([]byte("abcdefg"), n/7+1)[:n]
		for _, size := range []int64{-1, 0, int64(n), int64(n) - 1, int64(n) + 1, 2 * int64(n), max + 1} {
			for name, wrap := range map[string]func(io.Reader) io.Reader{
				"whole": func(r io.Reader) io.Reader { return r },
				"bytes": iotest.OneByteReader,
				"half":  iotest.HalfReader,
				"eof":   iotest.DataErrReader,
			} {
				want, werr := io.ReadAll(wrap(bytes.NewReader(body)))
				got, gerr := wire.ReadAll(wrap(bytes.NewReader(body)), size, max)
				require.Equal(t, werr, gerr)
				assert.Equal(t, want, got, "%s: %d bytes announced as %d", name, n, size)
				if size == int64(n) && n > 0 && n <= max {
					assert.Equal(t, n+1, cap(got), "the announced length regrew the buffer")
				}
			}
		}
	}
	// A length announced and never sent costs at most PresizeBytes.
	got, err := wire.ReadAll(bytes.NewReader(nil), 1<<30, 1<<31)
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.LessOrEqual(t, cap(got), wire.PresizeBytes+1)
	boom := errors.New("boom")
	got, err = wire.ReadAll(io.MultiReader(bytes.NewReader([]byte("ab")), iotest.ErrReader(boom)), 2, max)
	require.ErrorIs(t, err, boom)
	assert.Equal(t, []byte("ab"), got)
}
