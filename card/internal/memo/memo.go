// Package memo is the renderer's memory of work done once per render: a
// table of slots keyed by a string and a small tag, which grows while it
// fills, up to a bound. A key whose slot another key holds replaces it, so
// the table never outgrows its bound, a lookup is one hash and one
// comparison, and a render that names more distinct strings than the table
// holds does the work again for some of them, never more than once per
// occurrence.
package memo

import "hash/maphash"

// Table remembers values of type V. The zero Table is empty and holds up
// to DefaultMax values; a Table is not safe for concurrent use.
type Table[V any] struct {
	// Max bounds the number of slots (rounded up to a power of two); 0
	// means DefaultMax.
	Max   int
	seed  maphash.Seed
	slots []slot[V]
	fresh int // values put since the table last grew

	gets, hits int
	off        bool // the table found almost nothing it held: it is not used
}

// A table that has answered trialGets lookups, fewer than one in
// trialShare of them from what it held, stops looking up and
// remembering: each costs a hash, a comparison and a slot written for
// nothing. Being a cache, it changes no answer by that.
const (
	trialGets  = 4096
	trialShare = 16
)

// DefaultMax is the number of slots of a Table whose Max is 0.
const DefaultMax = 1 << 13

// firstSize is the number of slots of a table's first allocation.
const firstSize = 64

type slot[V any] struct {
	key  string
	tag  uint8
	full bool
	v    V
}

func (t *Table[V]) index(key string, tag uint8) int {
	h := maphash.String(t.seed, key) + uint64(tag)*0x9e3779b97f4a7c15
	return int(h>>7^h) & (len(t.slots) - 1)
}

// Get returns the value put for key and tag, if the table still holds it.
func (t *Table[V]) Get(key string, tag uint8) (V, bool) {
	var zero V
	if t.off {
		return zero, false
	}
	t.gets++
	if len(t.slots) > 0 {
		s := &t.slots[t.index(key, tag)]
		if s.full && s.tag == tag && s.key == key {
			t.hits++
			return s.v, true
		}
	}
	if t.gets == trialGets && t.hits*trialShare < t.gets {
		t.off, t.slots = true, nil
	}
	return zero, false
}

// Put remembers v for key and tag, in place of what the slot held.
func (t *Table[V]) Put(key string, tag uint8, v V) {
	switch {
	case t.off:
		return
	case len(t.slots) == 0:
		t.seed = maphash.MakeSeed()
		t.slots = make([]slot[V], firstSize)
	case t.fresh >= len(t.slots) && len(t.slots) < t.max():
		t.grow()
	}
	t.fresh++
	t.slots[t.index(key, tag)] = slot[V]{key: key, tag: tag, full: true, v: v}
}

func (t *Table[V]) max() int {
	if t.Max <= 0 {
		return DefaultMax
	}
	return t.Max
}

// grow doubles the table, keeping what it holds.
func (t *Table[V]) grow() {
	old := t.slots
	t.slots = make([]slot[V], 2*len(old))
	t.fresh = 0
	for i := range old {
		if s := &old[i]; s.full {
			t.slots[t.index(s.key, s.tag)] = *s
		}
	}
}
