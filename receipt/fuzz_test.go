package receipt_test

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// golden is one receipt of testdata/golden with its pinned trusted key.
type golden struct {
	doc []byte
	r   *receipt.Receipt
	key *receipt.TrustedKey
}

func loadGolden(t testing.TB) []golden {
	t.Helper()
	var out []golden
	for _, name := range []string{"es256", "eddsa", "rs256"} {
		doc, err := os.ReadFile(filepath.Join("testdata", "golden", name+".json"))
		require.NoError(t, err)
		r, err := receipt.Parse(doc)
		require.NoError(t, err)
		text, err := os.ReadFile(filepath.Join("testdata", "golden", name+".cose"))
		require.NoError(t, err)
		cose, err := base64.RawURLEncoding.DecodeString(string(bytes.TrimSpace(text)))
		require.NoError(t, err)
		k, err := receipt.ParseCOSEKey(cose)
		require.NoError(t, err)
		k = k.WithIdentity(receipt.Identity{User: r.Approver.User, CredentialID: r.Approver.CredentialID, UserHandle: r.Assertion.UserHandle})
		out = append(out, golden{doc: doc, r: r, key: k})
	}
	return out
}

// FuzzVerify feeds arbitrary documents to Parse and Verify against the
// golden receipts' keys. Verify never panics, and whatever verifies proves
// exactly what the golden receipt signed by that key proves: a mutation
// that changes the evidence is never accepted.
func FuzzVerify(f *testing.F) {
	gs := loadGolden(f)
	for i, g := range gs {
		f.Add(uint8(i), g.doc)
		pretty := bytes.ReplaceAll(g.doc, []byte(`,"`), []byte(",\n \""))
		f.Add(uint8(i), pretty)
	}
	f.Add(uint8(0), []byte(`{}`))
	p := receipt.Policy{RPID: receipttest.RPID, Origins: []string{receipttest.Origin}}
	f.Fuzz(func(t *testing.T, which uint8, doc []byte) {
		g := gs[int(which)%len(gs)]
		r, err := receipt.Parse(doc)
		if err != nil {
			return
		}
		res, err := receipt.Verify(r, g.key, p)
		require.NotNil(t, res)
		require.Len(t, res.Checks, len(receipt.CheckNames()))
		if err != nil {
			require.False(t, res.Valid)
			return
		}
		require.True(t, res.Valid)
		assert.Equal(t, evidence(t, g.r), evidence(t, r), "a receipt with other evidence verified")
	})
}

// FuzzParse checks that whatever Parse accepts marshals and parses back to
// the same receipt.
func FuzzParse(f *testing.F) {
	for _, g := range loadGolden(f) {
		f.Add(g.doc)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		r, err := receipt.Parse(doc)
		if err != nil {
			return
		}
		b, err := r.Marshal()
		require.NoError(t, err)
		again, err := receipt.Parse(b)
		require.NoError(t, err)
		assert.Equal(t, r.Digest, again.Digest)
		b2, err := again.Marshal()
		require.NoError(t, err)
		assert.Equal(t, b, b2)
	})
}
