package canon_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// vectors is the RFC 8785 test data: six input/output/outhex triples from the
// RFC author's reference repository and the first 10,000 lines of its ES6
// number file.
func vectors() fs.FS { return os.DirFS("testdata/jcs") }

// inexactInValues is the one number of values.json whose canonical form
// (333333333.3333333) denotes a different decimal than its text, and
// exactInValues is the spelling of that canonical form.
const (
	inexactInValues = "333333333.33333329"
	exactInValues   = "333333333.3333333"
)

func TestRFC8785Vectors(t *testing.T) {
	fsys := vectors()
	inputs, err := fs.Glob(fsys, "input/*.json")
	require.NoError(t, err)
	require.Len(t, inputs, 6, "the six RFC 8785 pairs")
	for _, in := range inputs {
		name := strings.TrimSuffix(path.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			input, err := fs.ReadFile(fsys, in)
			require.NoError(t, err)
			want, err := fs.ReadFile(fsys, "output/"+name+".json")
			require.NoError(t, err)
			hexText, err := fs.ReadFile(fsys, "outhex/"+name+".txt")
			require.NoError(t, err)
			wantFromHex, err := hex.DecodeString(strings.Join(strings.Fields(string(hexText)), ""))
			require.NoError(t, err)
			require.Equal(t, want, wantFromHex, "output and outhex disagree")

			if name == "values" {
				// Rule 4: this number would be hashed as a different decimal.
				_, err := canon.Canonicalize(input)
				var ce *canon.Error
				require.ErrorAs(t, err, &ce)
				assert.ErrorIs(t, err, canon.ErrNumber)
				assert.Equal(t, bytes.Index(input, []byte(inexactInValues)), ce.Offset)
				input = bytes.Replace(input, []byte(inexactInValues), []byte(exactInValues), 1)
			}
			got, err := canon.Canonicalize(input)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
			assert.Equal(t, wantFromHex, got, "outhex")

			viaJCS, err := jcs.Transform(input)
			require.NoError(t, err)
			assert.Equal(t, string(viaJCS), string(got), "differs from jcs.Transform")

			again, err := canon.Canonicalize(want)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(again), "output is not its own canonical form")

			// Parse reads the input into the tree ParseValue reads from
			// the output.
			parsed, err := canon.Parse(input)
			require.NoError(t, err)
			assert.Equal(t, string(want), parsed.Canonical())
			read, err := canon.ParseValue(want)
			require.NoError(t, err)
			requireSameTree(t, read, parsed)
		})
	}
}

// TestES6NumberFile checks every line "<ieee754 bits in hex>,<ES6 text>" of
// the number file both through the canonicalizer and through
// jcs.NumberToJSON, in parallel blocks of lines.
func TestES6NumberFile(t *testing.T) {
	const wantSHA256 = "b9f7a8e75ef22a835685a52ccba7f7d6bdc99e34b010992cbc5864cd12be6892"
	data, err := fs.ReadFile(vectors(), "es6testfile10k.txt")
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	require.Equal(t, wantSHA256, hex.EncodeToString(sum[:]), "number file is not the published prefix")

	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	require.NoError(t, sc.Err())
	require.Len(t, lines, 10000)

	const block = 1000
	for first := 0; first < len(lines); first += block {
		chunk := lines[first:min(first+block, len(lines))]
		t.Run(fmt.Sprintf("lines_%d-%d", first+1, first+len(chunk)), func(t *testing.T) {
			t.Parallel()
			for i, line := range chunk {
				bitsHex, want, ok := strings.Cut(line, ",")
				require.True(t, ok, "line %d", first+i+1)
				bits, err := strconv.ParseUint(bitsHex, 16, 64)
				require.NoError(t, err, "line %d", first+i+1)
				f := math.Float64frombits(bits)

				direct, err := jcs.NumberToJSON(f)
				require.NoError(t, err, "line %d", first+i+1)
				assert.Equal(t, want, direct, "jcs.NumberToJSON, line %d", first+i+1)

				text := strconv.FormatFloat(f, 'g', -1, 64)
				got, err := canon.Canonicalize([]byte(text))
				if assert.NoError(t, err, "line %d: %s", first+i+1, text) {
					assert.Equal(t, want, string(got), "line %d: %s", first+i+1, text)
				}
			}
		})
	}
}

// errorsAsCanon is a small helper for tests that need the offset.
func errorsAsCanon(err error) (*canon.Error, bool) {
	var ce *canon.Error
	ok := errors.As(err, &ce)
	return ce, ok
}
