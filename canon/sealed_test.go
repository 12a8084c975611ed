package canon_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// effect generates an effect with noisy arguments and fields drawn from
// the generator's rune pool (quotes, controls, surrogate pairs).
func (g *gen) effect() canon.Effect {
	e := canon.Effect{
		Tool: g.str(8), Task: g.str(6), Step: g.str(3), PolicyVersion: g.str(6), Audience: g.str(6),
		Args:      json.RawMessage(g.object(3, 4).noisy(g.r)),
		Principal: canon.Principal{User: g.str(8), Agent: g.str(8)},
	}
	for range g.r.IntN(3) {
		e.Principal.Delegations = append(e.Principal.Delegations, g.str(5))
	}
	for range g.r.IntN(3) {
		r := canon.Ref{Name: g.str(6), Kind: g.str(4), Size: g.r.Int64N(1 << 40), Unbound: g.str(4)}
		r.SHA256[g.r.IntN(32)] = byte(g.r.IntN(256))
		if g.r.IntN(2) == 0 {
			r.Target = g.str(6)
		}
		e.Refs = append(e.Refs, r)
	}
	return e
}

// marshalCanonical is the effect's canonical form the long way: marshal
// with encoding/json, then canonicalize the whole document.
func marshalCanonical(t testing.TB, e canon.Effect) []byte {
	t.Helper()
	args, err := canon.Canonicalize(e.Args)
	require.NoError(t, err)
	e.Args = args
	if e.Refs == nil {
		e.Refs = []canon.Ref{}
	}
	if e.Principal.Delegations == nil {
		e.Principal.Delegations = []string{}
	}
	raw, err := json.Marshal(e)
	require.NoError(t, err)
	out, err := jcs.Transform(raw)
	require.NoError(t, err)
	return out
}

// TestSealIsTheCanonicalEffect: Seal writes the effect by hand in one
// pass; over generated effects its bytes are what encoding/json followed
// by jcs.Transform give, its digest their SHA-256, and its arguments the
// canonical arguments.
func TestSealIsTheCanonicalEffect(t *testing.T) {
	for seed := range uint64(300) {
		g := newGen(seed)
		e := g.effect()
		s, err := canon.Seal(e)
		require.NoError(t, err, "seed %d", seed)
		want := marshalCanonical(t, e)
		require.Equal(t, string(want), string(s.Bytes()), "seed %d", seed)
		assert.Equal(t, canon.Sum(want), s.Digest())
		assert.Equal(t, len(want), s.Len())
		args, err := canon.Canonicalize(e.Args)
		require.NoError(t, err)
		assert.Equal(t, string(args), s.Args().Canonical())
		assert.Equal(t, canon.KindObject, s.Args().Kind())
		sameAsJSON(t, s.Args(), decodeJSON(t, args), "")
		assert.Equal(t, e.Tool, s.Tool())
		assert.Equal(t, e.PolicyVersion, s.PolicyVersion())
		p := s.Principal()
		assert.True(t, p.User == e.Principal.User && p.Agent == e.Principal.Agent &&
			slices.Equal(p.Delegations, e.Principal.Delegations), "seed %d", seed)

		d, err := e.Digest()
		require.NoError(t, err)
		assert.Equal(t, s.Digest(), d, "Effect.Digest is the sealed digest")
	}
}

// TestSealArgsIsSeal: sealing arguments parsed once by Parse gives the
// bytes, digest and arguments Seal gives from the raw arguments, and the
// sealed arguments are the very Value handed in.
func TestSealArgsIsSeal(t *testing.T) {
	for seed := range uint64(300) {
		g := newGen(seed)
		e := g.effect()
		want, err := canon.Seal(e)
		require.NoError(t, err, "seed %d", seed)
		args, err := canon.Parse(e.Args)
		require.NoError(t, err)
		e.Args = json.RawMessage(`"ignored"`)
		got, err := canon.SealArgs(e, args)
		require.NoError(t, err, "seed %d", seed)
		assert.Equal(t, string(want.Bytes()), string(got.Bytes()), "seed %d", seed)
		assert.Equal(t, want.Digest(), got.Digest())
		assert.Equal(t, want.Effect(), got.Effect())
		assert.True(t, got.Args().Equal(args))
	}
	for _, bad := range []string{`[]`, `"x"`, `1`, `null`} {
		v, err := canon.Parse([]byte(bad))
		require.NoError(t, err)
		_, err = canon.SealArgs(canon.Effect{Tool: "t"}, v)
		assert.ErrorIs(t, err, canon.ErrNotObject, bad)
	}
	_, err := canon.SealArgs(canon.Effect{Tool: "t"}, canon.Value{})
	assert.ErrorIs(t, err, canon.ErrNotObject, "the zero Value")
	v, err := canon.Parse([]byte(`{}`))
	require.NoError(t, err)
	_, err = canon.SealArgs(canon.Effect{Tool: "t\xff"}, v)
	assert.ErrorIs(t, err, canon.ErrInvalidUTF8)
}

// TestParseSealedRoundTrip: a stored effect reads back to the same bytes,
// digest, effect and arguments, and sealing what it read gives the same
// bytes again.
func TestParseSealedRoundTrip(t *testing.T) {
	for seed := range uint64(300) {
		g := newGen(seed)
		s, err := canon.Seal(g.effect())
		require.NoError(t, err)
		p, err := canon.ParseSealed(s.Bytes())
		require.NoError(t, err, "seed %d", seed)
		assert.Equal(t, s.Bytes(), p.Bytes())
		assert.Equal(t, s.Digest(), p.Digest())
		assert.Equal(t, s.Effect(), p.Effect())
		assert.True(t, s.Args().Equal(p.Args()))
		assert.Equal(t, s.Principal(), p.Principal())
		again, err := canon.Seal(p.Effect())
		require.NoError(t, err)
		assert.Equal(t, s.Bytes(), again.Bytes())
	}
}

// TestParseSealedRefuses: whatever is not exactly a stored effect is
// refused, including every other spelling of a valid one.
func TestParseSealedRefuses(t *testing.T) {
	s, err := canon.Seal(sampleEffect())
	require.NoError(t, err)
	good := string(s.Bytes())
	for name, tc := range map[string]struct {
		in   string
		want error
	}{
		"whitespace":          {strings.Replace(good, `{"args":`, `{ "args":`, 1), canon.ErrNotCanonical},
		"members reordered":   {`{"audience":"x",` + strings.TrimPrefix(strings.Replace(good, `"audience":"mail-executor",`, "", 1), "{"), canon.ErrNotCanonical},
		"escaped letter":      {strings.Replace(good, `"send_email"`, `"send\u005femail"`, 1), canon.ErrNotCanonical},
		"field missing":       {strings.Replace(good, `"step":"3",`, "", 1), canon.ErrSyntax},
		"field unknown":       {good[:len(good)-1] + `,"zzz":1}`, canon.ErrSyntax},
		"delegations null":    {strings.Replace(good, `"delegations":["ops-team"]`, `"delegations":null`, 1), canon.ErrSyntax},
		"delegation a number": {strings.Replace(good, `"delegations":["ops-team"]`, `"delegations":[1]`, 1), canon.ErrSyntax},
		"args an array":       {`{"args":[],` + good[strings.Index(good, `"audience"`):], canon.ErrSyntax},
		"hash upper-case":     {strings.Replace(good, `"sha256":"`, `"sha256":"A`, 1)[:0] + upperHash(good), canon.ErrSyntax},
		"hash short":          {strings.Replace(good, `"sha256":"`, `"sha256":"0`, 1), canon.ErrSyntax},
		"size a fraction":     {strings.Replace(good, `"size":15`, `"size":1.5`, 1), canon.ErrSyntax},
		"size a string":       {strings.Replace(good, `"size":15`, `"size":"15"`, 1), canon.ErrSyntax},
		"size too large":      {strings.Replace(good, `"size":15`, `"size":1e+21`, 1), canon.ErrSyntax},
		"tool null":           {strings.Replace(good, `"tool":"send_email"`, `"tool":null`, 1), canon.ErrSyntax},
		"trailing data":       {good + "x", canon.ErrTrailingData},
		"duplicate":           {strings.Replace(good, `"tool":`, `"tool":"a","tool":`, 1), canon.ErrDuplicateKey},
		"empty":               {"", canon.ErrSyntax},
	} {
		_, err := canon.ParseSealed([]byte(tc.in))
		assert.ErrorIs(t, err, tc.want, name)
		_, err = canon.ParseEffect([]byte(tc.in))
		if tc.want != canon.ErrNotCanonical {
			assert.Error(t, err, "ParseEffect: %s", name)
		}
	}
}

func upperHash(good string) string {
	i := strings.Index(good, `"sha256":"`) + len(`"sha256":"`)
	return good[:i] + strings.ToUpper(good[i:i+64]) + good[i+64:]
}

// TestSealSkipsNothing: arguments in canonical form and any other spelling
// of them seal to the same effect, and arguments canon refuses are refused
// whether or not they look canonical.
func TestSealSkipsNothing(t *testing.T) {
	for seed := range uint64(100) {
		g := newGen(seed)
		doc := g.object(3, 4)
		noisy := doc.noisy(g.r)
		c, err := canon.Canonicalize(noisy)
		require.NoError(t, err)
		a, err := canon.Seal(canon.Effect{Tool: "t", Args: noisy})
		require.NoError(t, err)
		b, err := canon.Seal(canon.Effect{Tool: "t", Args: c})
		require.NoError(t, err)
		assert.Equal(t, a.Bytes(), b.Bytes())
	}
	for _, args := range []string{`{"a":1,"a":1}`, `{"a":9007199254740993}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", `{"a":1}x`, `[]`, `"x"`, ``} {
		_, err := canon.Seal(canon.Effect{Tool: "t", Args: json.RawMessage(args)})
		assert.Error(t, err, args)
	}
	_, err := canon.Seal(canon.Effect{Tool: "t", Args: json.RawMessage(`{}`), Refs: []canon.Ref{{Size: 1<<53 + 1}}})
	assert.ErrorIs(t, err, canon.ErrNumber, "a size a JSON number cannot carry")
	_, err = canon.Seal(canon.Effect{Tool: "t\xff", Args: json.RawMessage(`{}`)})
	assert.ErrorIs(t, err, canon.ErrInvalidUTF8)
	// Arguments whose canonical form outgrows the limit (1e20 spelt out)
	// are refused: a stored effect must read back.
	grow := `{"a":[` + strings.Repeat("1e20,", canon.DefaultMaxBytes/5-10) + `1]}`
	require.LessOrEqual(t, len(grow), canon.DefaultMaxBytes)
	_, err = canon.Seal(canon.Effect{Tool: "t", Args: json.RawMessage(grow)})
	assert.ErrorIs(t, err, canon.ErrTooLarge)
}

// TestSealedIsImmutable: changing what an accessor returned, or the effect
// that was sealed, changes nothing in the Sealed, read from many goroutines.
func TestSealedIsImmutable(t *testing.T) {
	e := sampleEffect()
	s, err := canon.Seal(e)
	require.NoError(t, err)
	want := string(s.Bytes())
	e.Args[2] = 'X'
	e.Refs[0].Name = "other.csv"
	e.Principal.Delegations[0] = "someone"

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got := s.Effect()
			got.Args[2] = 'Y'
			got.Refs[0].Size = 99
			got.Principal.Delegations[0] = "x"
			b := s.Bytes()
			b[0] = '['
			p := s.Principal()
			p.Delegations[0] = "y"
		})
	}
	wg.Wait()
	assert.Equal(t, want, string(s.Bytes()))
	assert.Equal(t, canon.Sum([]byte(want)), s.Digest())
	again, err := canon.Seal(s.Effect())
	require.NoError(t, err)
	assert.Equal(t, want, string(again.Bytes()))

	var zero canon.Sealed
	assert.True(t, zero.IsZero())
	assert.Nil(t, zero.Bytes())
	assert.True(t, zero.Digest().IsZero())
	assert.Equal(t, canon.KindInvalid, zero.Args().Kind())
}

func ExampleSeal() {
	s, err := canon.Seal(canon.Effect{
		Tool:      "issue_refund",
		Args:      json.RawMessage(`{"order": "A-1009", "amount": 300.00}`),
		Principal: canon.Principal{User: "user:dana", Agent: "agent:support"},
	})
	if err != nil {
		panic(err)
	}
	amount, _ := s.Args().Get("amount")
	over, _ := canon.CompareDecimal(amount.Number(), "500")
	fmt.Println(string(s.Effect().Args), amount.Number(), over > 0)
	fmt.Println(s.Digest().Short())

	stored, err := canon.ParseSealed(s.Bytes())
	fmt.Println(err, stored.Digest() == s.Digest())
	_, err = canon.ParseSealed(bytes.ReplaceAll(s.Bytes(), []byte(`"args":`), []byte(`"args" :`)))
	fmt.Println(err)
	// Output:
	// {"amount":300,"order":"A-1009"} 300 false
	// d481dce55fa5
	// <nil> true
	// canon: not in canonical form at byte 7
}

// TestTextsOutliveLaterWork: the text of a parsed Value and of a Sealed
// are their own (the parse's buffer becomes the text without a copy):
// changing the input, or parsing and sealing other documents, from many
// goroutines, changes neither, and the digest still matches the bytes.
func TestTextsOutliveLaterWork(t *testing.T) {
	raw := []byte(`{"z":"last","a":{"y":[1,2,{"q":"\u00e9"}],"b":true},"m":19.99}`)
	v, err := canon.Parse(raw)
	require.NoError(t, err)
	e := sampleEffect()
	s, err := canon.SealArgs(e, v)
	require.NoError(t, err)
	e.Args = raw
	s2, err := canon.Seal(e)
	require.NoError(t, err)
	wantV, wantS, wantS2 := v.Canonical(), string(s.Bytes()), string(s2.Bytes())
	for i := range raw {
		raw[i] = ' '
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			g := newGen(uint64(w))
			for range 50 {
				doc := g.object(3, 4).noisy(g.r)
				x, err := canon.Parse(doc)
				if err != nil {
					continue
				}
				f := sampleEffect()
				_, _ = canon.SealArgs(f, x)
				f.Args = doc
				_, _ = canon.Seal(f)
				_, _ = canon.Canonicalize(doc)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, wantV, v.Canonical())
	assert.Equal(t, wantS, string(s.Bytes()))
	assert.Equal(t, wantS2, string(s2.Bytes()))
	assert.Equal(t, canon.Sum([]byte(wantS)), s.Digest())
	assert.Equal(t, canon.Sum([]byte(wantS2)), s2.Digest())
	assert.Equal(t, wantS, wantS2)
}

// TestSealArgsAroundParsedText: the first seal of an object from Parse
// writes the effect around the object's own text; every seal of that
// Value, the first and the others, from many goroutines at once, gives
// the bytes and digest Seal gives for its own effect, and the Value, like
// every Sealed made from it, keeps its text. Were two seals to share the
// room after the object, the later ones would write their effects' fields
// over the first one's (and the race detector would see the writes).
func TestSealArgsAroundParsedText(t *testing.T) {
	raw := []byte(`{"to":"finance@example.com","body":"` + strings.Repeat("numbers ", 512) + `","cc":[]}`)
	v, err := canon.Parse(raw)
	require.NoError(t, err)
	want := v.Canonical()
	effects := make([]canon.Effect, 16)
	for i := range effects {
		e := canon.Effect{Tool: "send_email", Task: "t", Step: strconv.Itoa(i), PolicyVersion: "v1",
			Principal: canon.Principal{User: "u", Agent: "a"}}
		e.Audience = strings.Repeat("a", i*40) // the later effects outgrow the room
		effects[i] = e
	}
	sealed := make([]canon.Sealed, len(effects))
	sealed[0], err = canon.SealArgs(effects[0], v) // the one that fits the room
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i, e := range effects[1:] {
		i++
		wg.Go(func() {
			s, err := canon.SealArgs(e, v)
			assert.NoError(t, err)
			sealed[i] = s
		})
	}
	wg.Wait()
	for i, e := range effects {
		e.Args = raw
		s, err := canon.Seal(e)
		require.NoError(t, err)
		assert.Equal(t, string(s.Bytes()), string(sealed[i].Bytes()), "effect %d", i)
		assert.Equal(t, s.Digest(), sealed[i].Digest(), "effect %d", i)
		assert.Equal(t, canon.Sum(sealed[i].Bytes()), sealed[i].Digest(), "effect %d", i)
		assert.Equal(t, want, sealed[i].Args().Canonical(), "effect %d", i)
	}
	assert.Equal(t, want, v.Canonical())
}

// TestSealArgsDoesNotCopyParsedObject: sealing an object Parse returned
// allocates far less than the object, since the effect is written around
// its text; a second seal of it copies it.
func TestSealArgsDoesNotCopyParsedObject(t *testing.T) {
	raw := []byte(`{"to":"finance@example.com","body":"` + strings.Repeat("numbers ", 8<<10) + `"}`)
	v, err := canon.Parse(raw)
	require.NoError(t, err)
	e := sampleEffect()
	allocated := func() uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := canon.SealArgs(e, v)
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		return after.TotalAlloc - before.TotalAlloc
	}
	assert.Less(t, allocated(), uint64(len(raw)/8), "the first seal copied the arguments")
	assert.Greater(t, allocated(), uint64(len(raw)), "a second seal shares the first one's room")
}
