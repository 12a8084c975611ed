package vectorgen_test

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt/internal/vectorgen"
)

var update = flag.Bool("update", false, "rewrite receipt/testdata/vectors from the generator")

const dir = "../../testdata/vectors"

// TestVectorsAreReproducible holds the published vectors to the
// generator: the checked-in files are exactly what it writes, so anyone
// can regenerate them and see nothing move.
func TestVectorsAreReproducible(t *testing.T) {
	files, err := vectorgen.Files()
	require.NoError(t, err)
	again, err := vectorgen.Files()
	require.NoError(t, err)
	require.Equal(t, files, again, "the generator is deterministic")
	if *update {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for name, b := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
		}
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var onDisk []string
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".json" {
			onDisk = append(onDisk, e.Name())
		}
	}
	var want []string
	for name, b := range files {
		want = append(want, name)
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, string(b), string(got), "%s differs from the generator's output: run go test ./receipt/internal/vectorgen -update", name)
	}
	slices.Sort(want)
	assert.Equal(t, want, onDisk, "every vector file comes from the generator")
}
