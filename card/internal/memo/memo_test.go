package memo

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTableNeverAnswersWrong: whatever was put and however often the table
// grew or replaced slots, Get returns either nothing or the value last put
// for exactly that key and tag.
func TestTableNeverAnswersWrong(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, bound := range []int{0, 1, 64, 256} {
		tab := Table[string]{Max: bound}
		last := map[string]string{}
		for i := range 20000 {
			key := strconv.Itoa(rng.IntN(3000))
			tag := uint8(rng.IntN(3))
			k := key + "/" + strconv.Itoa(int(tag))
			if rng.IntN(2) == 0 {
				v := strconv.Itoa(i)
				tab.Put(key, tag, v)
				last[k] = v
				got, ok := tab.Get(key, tag)
				require.True(t, ok, "just put")
				require.Equal(t, v, got)
				continue
			}
			if got, ok := tab.Get(key, tag); ok {
				require.Equal(t, last[k], got, "key %q tag %d", key, tag)
			}
		}
		assert.LessOrEqual(t, len(tab.slots), max(tab.max(), firstSize))
	}
}

// TestTableKeepsWhatFits: a table that has room keeps every value.
func TestTableKeepsWhatFits(t *testing.T) {
	var tab Table[int]
	hits := 0
	for i := range 100 {
		tab.Put(strconv.Itoa(i), 0, i)
	}
	for i := range 100 {
		if v, ok := tab.Get(strconv.Itoa(i), 0); ok {
			assert.Equal(t, i, v)
			hits++
		}
	}
	// A direct-mapped table loses some to collisions, never most.
	assert.Greater(t, hits, 50)
	_, ok := tab.Get("1", 1)
	assert.False(t, ok, "another tag")
}

// TestTableGivesUpWhenUseless: a table that almost never holds what is
// asked stops remembering; one that does keeps on.
func TestTableGivesUpWhenUseless(t *testing.T) {
	var useless, useful Table[int]
	for i := range 3 * trialGets {
		k := strconv.Itoa(i)
		if _, ok := useless.Get(k, 0); !ok {
			useless.Put(k, 0, i)
		}
		if _, ok := useful.Get(strconv.Itoa(i%10), 0); !ok {
			useful.Put(strconv.Itoa(i%10), 0, i%10)
		}
	}
	assert.True(t, useless.off)
	assert.Nil(t, useless.slots)
	assert.False(t, useful.off)
	v, ok := useful.Get("7", 0)
	assert.True(t, ok)
	assert.Equal(t, 7, v)
}
