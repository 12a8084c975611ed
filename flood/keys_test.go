package flood

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fragments are pieces of ids chosen to confuse a key: separators, bytes
// that look like length prefixes, scripts that look alike, invisible and
// combining characters, and the empty string.
var fragments = []string{
	"", ":", "::", "/", "|", "\x00", "\x01", "\x03", "\x7f", "\x80", "\xff",
	"run-9", "run", "-9", "9", "user:erin", "user:dana", "agent:reports",
	"erin", "dana", "a", "b", "ab", "аgent", "Agent", "é", "e\u0301", "\u200b",
	"\ufeff", "🙂", "运行", "run\u20119", " ", "%3A", `\:`, "flood/v2/rate/",
}

// splits returns every way to cut s into three parts, at byte offsets.
func splits(s string) [][3]string {
	var out [][3]string
	for i := 0; i <= len(s); i++ {
		for j := i; j <= len(s); j++ {
			out = append(out, [3]string{s[:i], s[i:j], s[j:]})
		}
	}
	return out
}

// spellings generates triples that are hard to tell apart: every split of
// strings made of a few fragments (so the same bytes are spread over the
// three ids in every way), and random triples of fragments.
func spellings(seed uint64, n int) [][3]string {
	rng := rand.New(rand.NewPCG(seed, 0))
	var out [][3]string
	for range n {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteString(fragments[rng.IntN(len(fragments))])
		}
		out = append(out, splits(b.String())...)
		pick := func() string { return fragments[rng.IntN(len(fragments))] + fragments[rng.IntN(len(fragments))] }
		out = append(out, [3]string{pick(), pick(), pick()})
	}
	return out
}

// decodeSubject inverts encodeSubject: that it exists is what makes the
// encoding injective.
func decodeSubject(b []byte) (Scope, []string, bool) {
	var parts []string
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return "", nil, false
		}
		parts = append(parts, string(b[k:k+int(n)]))
		b = b[k+int(n):]
	}
	if len(parts) == 0 {
		return "", nil, false
	}
	return Scope(parts[0]), parts[1:], true
}

// naiveKey is the keying a hurried implementation would write: the ids
// joined with a separator.
func naiveKey(ids [3]string) string { return ids[0] + ":" + ids[1] + ":" + ids[2] }

func TestSubjectIsInjective(t *testing.T) {
	triples := spellings(1, 400)
	require.Greater(t, len(triples), 5000)
	seen := map[string][3]string{}
	naive := map[string][3]string{}
	naiveCollisions := 0
	for _, tr := range triples {
		enc := encodeSubject(ScopeSession, tr[0], tr[1], tr[2])
		scope, ids, ok := decodeSubject(enc)
		require.True(t, ok)
		require.Equal(t, ScopeSession, scope)
		require.Equal(t, tr[:], ids, "the encoding decodes back to its triple")

		key := subject(ScopeSession, tr[0], tr[1], tr[2])
		if other, dup := seen[key]; dup {
			require.Equal(t, other, tr, "two triples share a key")
		}
		seen[key] = tr
		if other, dup := naive[naiveKey(tr)]; dup && other != tr {
			naiveCollisions++
		}
		naive[naiveKey(tr)] = tr
	}
	// The generator finds what it is looking for: joined with ':', many
	// distinct triples share a key.
	assert.Greater(t, naiveCollisions, 100, "the generator must produce triples a naive key confuses")
	t.Logf("%d distinct triples, %d naive collisions", len(seen), naiveCollisions)
}

func TestSubjectSeparatesScopes(t *testing.T) {
	// The same ids under different scopes, and an id list that reads like
	// another scope's, never share a key.
	keys := map[string]string{}
	add := func(name, key string) {
		if other, dup := keys[key]; dup {
			t.Fatalf("%s and %s share a key", name, other)
		}
		keys[key] = name
	}
	for _, id := range fragments {
		add("user "+id, subject(ScopeUser, id))
		add("approver "+id, subject(ScopeApprover, id))
		add("agent "+id, subject(ScopeAgent, id, ""))
		add("session "+id, subject(ScopeSession, id, "", ""))
	}
	for _, s := range []Scope{ScopeSession, ScopeAgent, ScopeUser, ScopeApprover} {
		assert.True(t, strings.HasPrefix(rateKey(s, Rate{N: 1, Per: 1000}, "h"), "flood/v2/rate/"+string(s)+"/"))
		assert.Equal(t, "flood/v2/denials/"+string(s)+"/h", denialKey(s, "h"))
	}
}

func FuzzSubject(f *testing.F) {
	f.Add("user:erin", "agent:reports", "run-9", "user:dana", "agent:reports", "run-9")
	f.Add("a:b", "c", "d", "a", "b:c", "d")
	f.Add("a", "\x01b", "", "a\x01", "b", "")
	f.Add("", "", "", "", "", "\x00")
	f.Fuzz(func(t *testing.T, u1, a1, s1, u2, a2, s2 string) {
		x, y := [3]string{u1, a1, s1}, [3]string{u2, a2, s2}
		enc := encodeSubject(ScopeSession, u1, a1, s1)
		scope, ids, ok := decodeSubject(enc)
		if !ok || scope != ScopeSession || [3]string(ids) != x {
			t.Fatalf("encoding of %q does not decode back", x)
		}
		if (subject(ScopeSession, u1, a1, s1) == subject(ScopeSession, u2, a2, s2)) != (x == y) {
			t.Fatalf("%q and %q: keys equal iff triples equal", x, y)
		}
		if len(rateKey(ScopeSession, DefaultSessionRate, subject(ScopeSession, u1, a1, s1))) > 128 {
			t.Fatal("a key outgrew its fixed size")
		}
	})
}
