package card

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card/internal/escape"
	"github.com/agentstepup/asu/card/internal/host"
)

// TestRenderStopsAtTheLimit: the renderer counts the least size of the
// card JSON as it builds the model and stops at the first node past the
// limit, not after building the whole card: for every shape, the work
// done is bounded by the limit, not by the effect.
func TestRenderStopsAtTheLimit(t *testing.T) {
	const limit = 64 << 10
	shapes := map[string]string{
		"empty lists":  strings.Repeat("[],", 100000) + "[]",
		"deep":         strings.Repeat(`{"a":[`, 30) + "1" + strings.Repeat("]}", 30),
		"keys":         "",
		"long strings": strings.Repeat(`"`+strings.Repeat("\u200b", 2000)+`",`, 100) + `""`,
	}
	for name, items := range shapes {
		t.Run(name, func(t *testing.T) {
			args := `{"v":[` + items + `]}`
			if name == "deep" {
				args = `{"v":[` + strings.Repeat(items+",", 3000) + items + `]}`
			}
			if name == "keys" {
				var b strings.Builder
				b.WriteString(`{"v":{`)
				for i := range 20000 {
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(`"k` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strconv.Itoa(i) + `":null`)
				}
				b.WriteString(`}}`)
				args = b.String()
			}
			require.True(t, json.Valid([]byte(args)))
			s, err := canon.Seal(canon.Effect{Tool: "t", Args: json.RawMessage(args), PolicyVersion: "1"})
			require.NoError(t, err)
			r := renderer{hosts: host.NewAnalyzer(nil), esc: escape.Escaper{Quote: true}, prose: escape.Escaper{Quote: true, Prose: true},
				limit: limit}
			_, err = r.fields(s.Args())
			require.True(t, errors.Is(err, errTooLarge), "%v", err)
			// One step past the limit: a node, a member, or one shown string.
			assert.LessOrEqual(t, r.size, limit+memberBytes+nodeBytes+8*maxMemoLen*8, "stopped at %d", r.size)
			assert.Greater(t, r.size, limit)
		})
	}
}

// TestViewsKeepTheirBudget: a view that would pass its byte budget is
// refused (no approval can be made from it) rather than written out; a
// card within budget shows in full. The budget here is the floor alone,
// as for a card whose JSON were empty.
func TestViewsKeepTheirBudget(t *testing.T) {
	args := `{"v":[` + strings.Repeat("[],", 60000) + `[]]}`
	c, err := Render(canon.Effect{Tool: "t", Args: json.RawMessage(args), PolicyVersion: "1"}, Context{Class: ClassRead})
	require.NoError(t, err)
	assert.NotEqual(t, tooLargeText, c.Text())
	assert.NotEqual(t, string(tooLargeHTML), string(c.HTML()))
	assert.Greater(t, len(c.HTML()), viewMinBytes, "the test card's view passes the floor")
	squeezed := *c
	squeezed.source = 1
	assert.Equal(t, tooLargeText, squeezed.Text())
	assert.Equal(t, string(tooLargeHTML), string(squeezed.HTML()))
}
