package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// member is one member of a JSON object as written: its name's text
// between the quotes (escapes and all) and its value.
type member struct {
	name  string
	value json.RawMessage
}

// objectMembers returns the members of a JSON object, in order.
func objectMembers(t *testing.T, raw []byte) []member {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	_, err := dec.Token()
	require.NoError(t, err)
	var out []member
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		var v json.RawMessage
		require.NoError(t, dec.Decode(&v))
		out = append(out, member{k.(string), v})
	}
	return out
}

// writeObject writes members as a JSON object, each name as given.
func writeObject(ms []member) []byte {
	out := []byte{'{'}
	for i, m := range ms {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(append(out, '"'), m.name...), `":`...)
		out = append(out, m.value...)
	}
	return append(out, '}')
}

// misspellings are names a member named name may be given that
// encoding/json alone reads as name, or that are no field at all: every
// letter in the other case, each letter alone, a random mix, the letters
// Unicode folds to ASCII ones (KELVIN SIGN for k, LONG S for s), a case
// change written as an escape, look-alike letters of other scripts, and
// space around it. Each differs from name as a JSON string.
func misspellings(rng *rand.Rand, name string) (folded, other []string) {
	flip := func(c rune) rune {
		if unicode.IsUpper(c) {
			return unicode.ToLower(c)
		}
		return unicode.ToUpper(c)
	}
	folded = append(folded, strings.ToUpper(name), strings.ToUpper(name[:1])+name[1:])
	for i, c := range name {
		if unicode.IsLetter(c) {
			folded = append(folded, name[:i]+string(flip(c))+name[i+1:])
			folded = append(folded, name[:i]+fmt.Sprintf(`\u%04X`, flip(c))+name[i+1:])
		}
		for from, to := range map[rune]string{'k': "\u212a", 's': "\u017f", 'K': "\u212a", 'S': "\u017f"} {
			if c == from {
				folded = append(folded, name[:i]+to+name[i+1:], strings.ToUpper(name[:i])+to+strings.ToUpper(name[i+1:]))
			}
		}
	}
	for range 4 {
		mixed := []rune(name)
		for i := range mixed {
			if rng.IntN(2) == 0 {
				mixed[i] = flip(mixed[i])
			}
		}
		if s := string(mixed); s != name {
			folded = append(folded, s)
		}
	}
	for from, to := range map[rune]string{'e': "\u0435", 'o': "\u043e", 'a': "\u0430", 'i': "\u0456", 'c': "\u0441"} {
		if i := strings.IndexRune(name, from); i >= 0 {
			other = append(other, name[:i]+to+name[i+len(string(from)):])
		}
	}
	other = append(other, name+" ", " "+name, name+"\u200b")
	return folded, other
}

// edited is another value of the same JSON type as v: what a line hiding
// an edit would show every reader but encoding/json.
func edited(v json.RawMessage) json.RawMessage {
	switch {
	case len(v) == 66 && v[0] == '"':
		return json.RawMessage(`"` + strings.Repeat("e", 64) + `"`)
	case v[0] == '"':
		return json.RawMessage(`"edited"`)
	case v[0] == '[' || v[0] == 'n':
		return json.RawMessage(`["edited"]`)
	case v[0] == '{':
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(`424242`)
}

// legacyRead is how a line was read before names had to be exact: canon,
// then encoding/json.
func legacyRead(b []byte, out any) error {
	if _, err := (canon.Limits{MaxBytes: MaxLine}).Canonicalize(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

// spelling is a change to one member of an object: the member renamed, or
// a twin member of another name put before it (showing an edited value)
// or after it (holding the member's own value, which encoding/json keeps
// while every other reader keeps the first).
type spelling struct {
	mode string // "renamed", "twin before", "twin after"
	name string
}

func (s spelling) apply(ms []member, i int) []member {
	out := append([]member(nil), ms...)
	m := out[i]
	switch s.mode {
	case "renamed":
		out[i].name = s.name
	case "twin before":
		out = append(out[:i], append([]member{{s.name, edited(m.value)}}, out[i:]...)...)
	case "twin after":
		out[i].value = edited(m.value)
		out = append(out[:i+1], append([]member{{s.name, m.value}}, out[i+1:]...)...)
	}
	return out
}

// spellings are the changes to a member named name: every misspelling in
// every mode, and its exact name as a twin (a plain duplicate).
func spellings(rng *rand.Rand, name string) (hiding, other []spelling) {
	folded, unknown := misspellings(rng, name)
	for _, mode := range []string{"renamed", "twin before", "twin after"} {
		for _, n := range folded {
			s := spelling{mode, n}
			if mode == "twin before" {
				other = append(other, s) // encoding/json shows the edit
			} else {
				hiding = append(hiding, s)
			}
		}
		for _, n := range unknown {
			other = append(other, spelling{mode, n})
		}
	}
	other = append(other, spelling{"twin before", name}, spelling{"twin after", name})
	return hiding, other
}

// linkedChain is a chain of generated records, linked and hashed, each
// with arguments whose own members differ only in case.
func linkedChain(t *testing.T, rng *rand.Rand, n int) []Record {
	t.Helper()
	c := make([]Record, n)
	var prev canon.Digest
	for i := range c {
		r := randomRecord(rng)
		r.Seq, r.PrevHash = int64(i+1), prev
		r.Time, r.DecisionMillis = rng.Int64N(2e12), rng.Int64N(1e6)
		r.Args = json.RawMessage(`{"to":"finance@example.com","To":"x","amount":19.99}`)
		h, err := r.ComputeHash()
		require.NoError(t, err)
		r.Hash, prev = h, h
		c[i] = r
	}
	return c
}

// TestReadRefusesMembersNotNamedExactly: on generated chains, a line one
// of whose members, at the top or in the principal, is renamed to another
// case, to a folded letter (K as KELVIN SIGN, s as LONG S), to a name that
// is no field, or has a twin so named or named the same, is refused by
// ReadChain and by the streaming verifier, naming its line. The same line
// read the old way (canon, then encoding/json) reads, and verifies, as
// the genuine record in every spelling that hides an edit: the test
// bites. The exact names spelled with escapes, and arguments' own members
// in any case, still read.
func TestReadRefusesMembersNotNamedExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 9))
	bites, refused := map[string]int{}, 0
	for range 2 {
		c := linkedChain(t, rng, 1+rng.IntN(3))
		at := rng.IntN(len(c))
		lines := make([][]byte, len(c))
		for i, r := range c {
			lines[i] = exportLine(t, r)
		}
		top := objectMembers(t, lines[at])
		require.Len(t, top, len(recordShape.members), "the line holds every field")
		export := func(line []byte) []byte {
			ls := append([][]byte(nil), lines...)
			ls[at] = line
			return append(bytes.Join(ls, []byte("\n")), '\n')
		}
		try := func(field string, line []byte, hides bool) {
			data := export(line)
			_, err := ReadChain(bytes.NewReader(data))
			require.ErrorIs(t, err, ErrMalformed, "%s: %s", field, line)
			assert.Contains(t, err.Error(), fmt.Sprintf("line %d:", at+1))
			v := NewVerifier(bytes.NewReader(data), VerifyOptions{})
			_, err = v.Verify()
			require.ErrorIs(t, err, ErrMalformed, "%s: %s", field, line)
			assert.Equal(t, at+1, v.Line())
			refused++
			var old Record
			if hides && legacyRead(line, &old) == nil && assert.ObjectsAreEqual(c[at], old) {
				bites[field]++ // and so it verified
			}
		}
		for i, m := range top {
			hiding, other := spellings(rng, m.name)
			for _, s := range hiding {
				try(m.name, writeObject(s.apply(top, i)), true)
			}
			for _, s := range other {
				try(m.name, writeObject(s.apply(top, i)), false)
			}
			// The exact name, written with an escape, is the same name.
			esc := append([]member(nil), top...)
			esc[i].name = fmt.Sprintf(`\u%04x`, m.name[0]) + m.name[1:]
			got, err := ReadChain(bytes.NewReader(export(writeObject(esc))))
			require.NoError(t, err, m.name)
			assert.Equal(t, c[at].Hash, got[at].Hash)

			if m.name != "principal" {
				continue
			}
			inner := objectMembers(t, m.value)
			for k, im := range inner {
				hiding, other := spellings(rng, im.name)
				for _, group := range []struct {
					ss    []spelling
					hides bool
				}{{hiding, true}, {other, false}} {
					for _, s := range group.ss {
						nested := append([]member(nil), top...)
						nested[i].value = writeObject(s.apply(inner, k))
						try("principal."+im.name, writeObject(nested), group.hides)
					}
				}
			}
		}
	}
	names := append(fieldNames(recordShape, ""), "principal.user", "principal.agent", "principal.delegations")
	for _, n := range names {
		assert.Positive(t, bites[n], "no spelling of %s hid an edit from the old reader", n)
	}
	t.Logf("%d lines refused; spellings that fooled the old reader: %v", refused, bites)
}

// fieldNames are the member names a shape allows at its top.
func fieldNames(s *shape, at string) []string {
	var out []string
	for n := range s.members {
		out = append(out, join(at, n))
	}
	return out
}

// TestParseSignedCheckpointRefusesMembersNotNamedExactly: a checkpoint
// file with a member in another case, with a folded letter, unknown or
// repeated is refused; the old reader took the ones that hide an edit
// ({"seq":3,"Seq":8} as seq 8).
func TestParseSignedCheckpointRefusesMembersNotNamedExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 10))
	sc := SignedCheckpoint{Checkpoint: Checkpoint{Seq: 8, Hash: canon.Digest{8}, Time: 1_764_460_800_000},
		Sig: bytes.Repeat([]byte{7}, 64), KeyID: "k1"}
	b, err := json.Marshal(sc)
	require.NoError(t, err)
	ms := objectMembers(t, b)
	require.Len(t, ms, len(checkpointShape.members), "the file holds every field")
	bites := map[string]int{}
	for i, m := range ms {
		hiding, other := spellings(rng, m.name)
		for _, s := range append(hiding, other...) {
			in := writeObject(s.apply(ms, i))
			_, err := ParseSignedCheckpoint(in)
			require.ErrorIs(t, err, ErrCheckpoint, "%s", in)
			var old SignedCheckpoint
			if legacyRead(in, &old) == nil && assert.ObjectsAreEqual(sc, old) {
				bites[m.name]++
			}
		}
	}
	for _, n := range fieldNames(checkpointShape, "") {
		assert.Positive(t, bites[n], "no spelling of %s fooled the old reader", n)
	}
	got, err := ParseSignedCheckpoint(b)
	require.NoError(t, err)
	assert.Equal(t, sc, got)
}

// TestShapesAreTheFields: the names a line and a checkpoint file may use
// are exactly the ones encoding/json writes, and the principal's below.
func TestShapesAreTheFields(t *testing.T) {
	line := exportLine(t, Record{Args: json.RawMessage(`{}`)})
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(line, &top))
	assert.ElementsMatch(t, fieldNames(recordShape, ""), mapKeys(top))
	assert.ElementsMatch(t, []string{"user", "agent", "delegations"}, fieldNames(recordShape.members["principal"], ""))
	assert.Nil(t, recordShape.members["args"], "arguments are the caller's: their members are not fields")
	assert.Nil(t, recordShape.members["hash"], "a digest reads itself")
	assert.ElementsMatch(t, []string{"seq", "hash", "time", "sig", "kid"}, fieldNames(checkpointShape, ""))
}

func mapKeys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
