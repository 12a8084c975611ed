package notify

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSignature(t *testing.T) {
	sig := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name, header string
		ok           bool
		t            int64
		n            int
	}{
		{"one", "t=1700000000,v1=" + sig, true, 1700000000, 1},
		{"spaces", " t=1700000000 , v1=" + sig + " ", true, 1700000000, 1},
		{"two v1", "t=5,v1=" + sig + ",v1=" + strings.ToUpper(sig), true, 5, 2},
		{"unknown key ignored", "t=5,v0=zz,v1=" + sig + ",x=", true, 5, 1},
		{"order free", "v1=" + sig + ",t=5", true, 5, 1},
		{"zero", "t=0,v1=" + sig, true, 0, 1},
		{"empty", "", false, 0, 0},
		{"no t", "v1=" + sig, false, 0, 0},
		{"no v1", "t=5", false, 0, 0},
		{"two t", "t=5,t=6,v1=" + sig, false, 0, 0},
		{"negative t", "t=-5,v1=" + sig, false, 0, 0},
		{"plus t", "t=+5,v1=" + sig, false, 0, 0},
		{"leading zero", "t=05,v1=" + sig, false, 0, 0},
		{"t too long", "t=1234567890123,v1=" + sig, false, 0, 0},
		{"t not digits", "t=1e9,v1=" + sig, false, 0, 0},
		{"short v1", "t=5,v1=" + sig[:62], false, 0, 0},
		{"v1 not hex", "t=5,v1=" + strings.Repeat("zz", 32), false, 0, 0},
		{"item without =", "t=5,v1=" + sig + ",junk", false, 0, 0},
		{"too many v1", "t=5" + strings.Repeat(",v1="+sig, maxSignatures+1), false, 0, 0},
		{"too long", "t=5,v1=" + sig + ",x=" + strings.Repeat("a", maxHeaderBytes), false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, sigs, err := parseSignature(tc.header)
			if !tc.ok {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.t, ts)
			assert.Len(t, sigs, tc.n)
		})
	}
}

func TestSignatureRoundTrip(t *testing.T) {
	secret := bytes.Repeat([]byte{7}, MinSecretBytes)
	a := sign(secret, 1700000000, []byte(`{}`))
	b := sign(secret, 1700000001, []byte(`{}`))
	ts, sigs, err := parseSignature(formatSignature(1700000000, a, b))
	require.NoError(t, err)
	assert.Equal(t, int64(1700000000), ts)
	assert.Equal(t, [][]byte{a, b}, sigs)
	assert.NotEqual(t, a, b, "the timestamp is signed")
	assert.NotEqual(t, a, sign(secret, 1700000000, []byte(`{ }`)), "the body is signed")
}

// FuzzParseSignature checks that any header parses without panicking,
// that what parses is within the bounds, and that formatting what was
// parsed parses back to the same.
func FuzzParseSignature(f *testing.F) {
	sig := strings.Repeat("0f", 32)
	for _, s := range []string{
		"t=1700000000,v1=" + sig, "t=1,v1=" + sig + ",v1=" + sig, "v1=" + sig + ",t=0",
		"t=,v1=", "t=1,,v1=" + sig, "=,=", "t=99999999999999999999", " t = 1 ", "t=1,v1=" + sig + ",v2=x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		ts, sigs, err := parseSignature(h)
		if err != nil {
			return
		}
		if ts < 0 || len(sigs) == 0 || len(sigs) > maxSignatures {
			t.Fatalf("parsed out of bounds: t=%d, %d signatures", ts, len(sigs))
		}
		ts2, sigs2, err := parseSignature(formatSignature(ts, sigs...))
		if err != nil || ts2 != ts || len(sigs2) != len(sigs) {
			t.Fatalf("round trip failed: %v", err)
		}
		for i := range sigs {
			if !bytes.Equal(sigs[i], sigs2[i]) {
				t.Fatalf("signature %d changed in the round trip", i)
			}
		}
	})
}
