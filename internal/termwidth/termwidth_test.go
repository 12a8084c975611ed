package termwidth

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want int
	}{
		{"", 80}, {"120", 120}, {" 60 ", 60}, {"0", 80}, {"-5", 80}, {"abc", 80}, {"100000", 80}, {"1000", 1000},
	} {
		assert.Equal(t, tc.want, fromEnv(tc.v, 80), "%q", tc.v)
	}
}

// TestColumnsOfANonTerminal: a buffer or a regular file is no terminal:
// COLUMNS decides, then the default.
func TestColumnsOfANonTerminal(t *testing.T) {
	t.Setenv("COLUMNS", "")
	assert.Equal(t, 80, Columns(&bytes.Buffer{}, 80))
	f, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, 80, Columns(f, 80))
	t.Setenv("COLUMNS", "52")
	assert.Equal(t, 52, Columns(f, 80))
	assert.Equal(t, 52, Columns(&bytes.Buffer{}, 80))
}
