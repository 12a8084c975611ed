package canon_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// TestRefTargetIsBound: a reference's target is part of the effect, so
// two effects naming the same file by the same name but resolving it to
// different objects have different digests; an effect without a target
// keeps the bytes it always had (the golden effect's digest is checked in
// TestEffectGolden), and its canonical form has no "target" member.
func TestRefTargetIsBound(t *testing.T) {
	e := sampleEffect()
	plain, err := canon.Seal(e)
	require.NoError(t, err)
	assert.NotContains(t, string(plain.Bytes()), `"target"`)

	digests := map[canon.Digest]string{plain.Digest(): ""}
	for _, target := range []string{"/srv/files/q3.csv", "/srv/files/q3.csv.bak", "/home/dana/q3.csv"} {
		e.Refs[0].Target = target
		s, err := canon.Seal(e)
		require.NoError(t, err)
		assert.Contains(t, string(s.Bytes()), `"size":15,"target":`, "members in canonical order")
		_, dup := digests[s.Digest()]
		assert.False(t, dup, "target %q shares a digest", target)
		digests[s.Digest()] = target

		back, err := canon.ParseSealed(s.Bytes())
		require.NoError(t, err)
		assert.Equal(t, target, back.Effect().Refs[0].Target)
		assert.Equal(t, s.Digest(), back.Digest())
	}
}

// TestRefTargetRefusedWhenEmpty: a stored effect spelling an empty target
// is not canonical (Seal never writes one), so it is refused: one effect
// has one encoding.
func TestRefTargetRefusedWhenEmpty(t *testing.T) {
	s, err := canon.Seal(sampleEffect())
	require.NoError(t, err)
	bad := strings.Replace(string(s.Bytes()), `"size":15,`, `"size":15,"target":"",`, 1)
	require.NotEqual(t, string(s.Bytes()), bad)
	_, err = canon.ParseSealed([]byte(bad))
	assert.ErrorIs(t, err, canon.ErrSyntax)
	_, err = canon.ParseEffect([]byte(bad))
	assert.Error(t, err)

	wrongType := strings.Replace(string(s.Bytes()), `"size":15,`, `"size":15,"target":1,`, 1)
	_, err = canon.ParseSealed([]byte(wrongType))
	assert.ErrorIs(t, err, canon.ErrSyntax)

	_, err = canon.Seal(func() canon.Effect {
		e := sampleEffect()
		e.Refs[0].Target = "\xff"
		return e
	}())
	assert.ErrorIs(t, err, canon.ErrInvalidUTF8)
}
