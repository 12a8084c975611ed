package canon_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

const (
	propertyDocs     = 300 // generated documents per property
	spellingsPerDoc  = 12  // noisy spellings checked per document
	mutationDocLimit = 120 // documents whose every mutation is checked
)

// TestInvarianceOverSpellings: key order, whitespace, escape spelling of keys
// and strings (\u escapes in either case, surrogate pairs, short escapes,
// \/), and number spelling (1.0 vs 1, 1e2 vs 100, 0.5e1 vs 5) never change
// the canonical form or the digest, as bare JSON or as an effect's args.
func TestInvarianceOverSpellings(t *testing.T) {
	for seed := range uint64(propertyDocs) {
		g := newGen(seed)
		doc := g.object(4, 5)
		plain := doc.plain()
		want, err := canon.Canonicalize(plain)
		require.NoError(t, err, "seed %d: %s", seed, plain)
		viaJCS, err := jcs.Transform(plain)
		require.NoError(t, err, "seed %d", seed)
		require.Equal(t, string(viaJCS), string(want), "seed %d: differs from jcs.Transform", seed)

		e := sampleEffect()
		e.Args = plain
		wantDigest, err := e.Digest()
		require.NoError(t, err)

		for n := range spellingsPerDoc {
			noisy := doc.noisy(g.r)
			got, err := canon.Canonicalize(noisy)
			require.NoError(t, err, "seed %d spelling %d: %s", seed, n, noisy)
			assert.Equal(t, string(want), string(got), "seed %d spelling %d: %s", seed, n, noisy)
			assert.Equal(t, canon.Sum(want), canon.Sum(got))

			e.Args = noisy
			d, err := e.Digest()
			require.NoError(t, err)
			assert.Equal(t, wantDigest, d, "seed %d spelling %d: effect digest", seed, n)
		}
	}
}

// TestSpellingsReallyDiffer guards the invariance test against a generator
// that stopped varying anything: most noisy spellings differ from the plain
// one as bytes.
func TestSpellingsReallyDiffer(t *testing.T) {
	g := newGen(1)
	differ := 0
	for range 50 {
		doc := g.object(3, 4)
		if string(doc.noisy(g.r)) != string(doc.plain()) {
			differ++
		}
	}
	assert.Greater(t, differ, 35)
}

// TestSensitivityToEveryChange: replacing or removing any one character of
// any string or key, changing any number, swapping any literal, and adding or
// removing any member or element changes the digest.
func TestSensitivityToEveryChange(t *testing.T) {
	total := 0
	for seed := range uint64(mutationDocLimit) {
		g := newGen(1000 + seed)
		doc := g.object(3, 4)
		base, err := canon.Canonicalize(doc.plain())
		require.NoError(t, err)
		baseDigest := canon.Sum(base)
		for i, m := range mutations(doc, g.r) {
			changed := m.plain()
			out, err := canon.Canonicalize(changed)
			require.NoError(t, err, "seed %d mutation %d: %s", seed, i, changed)
			if !assert.NotEqual(t, baseDigest, canon.Sum(out), "seed %d mutation %d", seed, i) {
				t.Logf("original: %s\nmutated:  %s", doc.plain(), changed)
			}
			// The noisy spelling of the changed value keeps it changed.
			out, err = canon.Canonicalize(m.noisy(g.r))
			require.NoError(t, err)
			assert.NotEqual(t, baseDigest, canon.Sum(out))
			total++
		}
	}
	assert.Greater(t, total, 2000, "too few mutations checked")
}

// TestNumberSpellingsAreOneValue pins the number cases the design names.
func TestNumberSpellingsAreOneValue(t *testing.T) {
	groups := [][]string{
		{"1", "1.0", "1.00", "10e-1", "0.1e1", "1E0", "1e+0", "1e-0", "100e-2"},
		{"100", "1e2", "1E2", "1e+2", "1e+02", "100.0", "10e1", "0.001e5"},
		{"19.99", "1999e-2", "0.1999e2", "19.990", "1.999E+1"},
		{"0", "-0", "0.0", "-0.0", "0e10", "0E-10"},
		{"1.5e-7", "1.5e-07", "15e-8", "0.00000015", "0.000000150"},
	}
	for _, group := range groups {
		want, err := canon.Canonicalize([]byte(`{"n":` + group[0] + `}`))
		require.NoError(t, err)
		for _, s := range group[1:] {
			got, err := canon.Canonicalize([]byte(`{"n":` + s + `}`))
			require.NoError(t, err, s)
			assert.Equal(t, string(want), string(got), s)
		}
	}
}

// effectMutations changes each field of an effect, keyed by the JSON path of
// the field it changes.
var effectMutations = map[string]func(e *canon.Effect){
	"tool": func(e *canon.Effect) { e.Tool = "send_emaiI" },
	"args": func(e *canon.Effect) {
		e.Args = []byte(`{"to":"finance@exarnple.com","subject":"Q3 numbers","attachment":"q3.csv"}`)
	},
	"refs":                   func(e *canon.Effect) { e.Refs = nil },
	"refs[].name":            func(e *canon.Effect) { e.Refs[0].Name = "q4.csv" },
	"refs[].kind":            func(e *canon.Effect) { e.Refs[0].Kind = "url" },
	"refs[].sha256":          func(e *canon.Effect) { e.Refs[0].SHA256[31] ^= 1 },
	"refs[].size":            func(e *canon.Effect) { e.Refs[0].Size++ },
	"refs[].unbound":         func(e *canon.Effect) { e.Refs[0].Unbound = "not fetched" },
	"task":                   func(e *canon.Effect) { e.Task = "task-8" },
	"step":                   func(e *canon.Effect) { e.Step = "4" },
	"principal.user":         func(e *canon.Effect) { e.Principal.User = "mallory@example.com" },
	"principal.agent":        func(e *canon.Effect) { e.Principal.Agent = "other-bot" },
	"principal.delegations":  func(e *canon.Effect) { e.Principal.Delegations = append(e.Principal.Delegations, "x") },
	"principal.delegations2": func(e *canon.Effect) { e.Principal.Delegations = []string{"ops-team2"} },
	"policy_version":         func(e *canon.Effect) { e.PolicyVersion = "2026-11-02" },
	"audience":               func(e *canon.Effect) { e.Audience = "other-executor" },
	"refs added":             func(e *canon.Effect) { e.Refs = append(e.Refs, canon.Ref{Name: "b", Kind: "url", Unbound: "x"}) },
	"args added field": func(e *canon.Effect) {
		e.Args = []byte(`{"to":"finance@example.com","subject":"Q3 numbers","attachment":"q3.csv","bcc":""}`)
	},
}

// TestEffectDigestCoversEveryField changes each field of an effect in turn
// and checks that every change gives a digest of its own. It also fails when
// a field is added to Effect, Principal or Ref without a mutation here.
func TestEffectDigestCoversEveryField(t *testing.T) {
	var paths []string
	jsonPaths(&paths, "", jsonShapeOf(t, sampleEffect()))
	for _, p := range paths {
		assert.Contains(t, effectMutations, p, "no mutation covers field %s", p)
	}

	base, err := sampleEffect().Digest()
	require.NoError(t, err)
	seen := map[canon.Digest]string{base: "base"}
	for name, mutate := range effectMutations {
		e := sampleEffect()
		mutate(&e)
		d, err := e.Digest()
		require.NoError(t, err, name)
		if prev, dup := seen[d]; dup {
			t.Errorf("%s gives the same digest as %s", name, prev)
		}
		seen[d] = name
	}
}

// jsonShapeOf marshals e and decodes it generically, so the test sees the
// fields the wire format has, not the ones it expects.
func jsonShapeOf(t *testing.T, e canon.Effect) map[string]any {
	t.Helper()
	c, err := e.Canonical()
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(c, &m))
	return m
}

func jsonPaths(out *[]string, prefix string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if _, isObj := sub.(map[string]any); isObj && k != "args" {
				jsonPaths(out, p, sub)
				continue
			}
			if arr, isArr := sub.([]any); isArr && len(arr) > 0 {
				if _, ofObj := arr[0].(map[string]any); ofObj {
					*out = append(*out, p)
					jsonPaths(out, p+"[]", arr[0])
					continue
				}
			}
			*out = append(*out, p)
		}
	default:
		panic(fmt.Sprintf("unexpected %T at %s", v, prefix))
	}
}

// TestEffectEmptyListsAreOneValue: nil and empty lists are the same effect,
// so a caller's choice between them never voids an approval.
func TestEffectEmptyListsAreOneValue(t *testing.T) {
	a := sampleEffect()
	a.Refs, a.Principal.Delegations = nil, nil
	b := sampleEffect()
	b.Refs, b.Principal.Delegations = []canon.Ref{}, []string{}
	da, err := a.Digest()
	require.NoError(t, err)
	db, err := b.Digest()
	require.NoError(t, err)
	assert.Equal(t, da, db)
	c, err := a.Canonical()
	require.NoError(t, err)
	assert.Contains(t, string(c), `"refs":[]`)
	assert.Contains(t, string(c), `"delegations":[]`)
}

// TestSensitivityAgainstNaiveDigest shows the attack the sensitivity test
// guards against: a digest over a lossy form (here, numbers through float64,
// as a careless canonicalizer would do) lets a changed amount keep its
// approval, while canon refuses the input instead of hashing it wrongly.
func TestSensitivityAgainstNaiveDigest(t *testing.T) {
	approved := []byte(`{"amount":9007199254740992}`)
	executed := []byte(`{"amount":9007199254740993}`)
	naive := func(b []byte) canon.Digest {
		out, err := jcs.Transform(b)
		require.NoError(t, err)
		return canon.Sum(out)
	}
	assert.Equal(t, naive(approved), naive(executed), "the naive digest should collide")
	_, err := canon.Canonicalize(executed)
	assert.ErrorIs(t, err, canon.ErrNumber)
}

func TestGeneratorIsDeterministic(t *testing.T) {
	a := newGen(7).object(3, 4).noisy(rand.New(rand.NewPCG(1, 2)))
	b := newGen(7).object(3, 4).noisy(rand.New(rand.NewPCG(1, 2)))
	assert.Equal(t, a, b)
}
