package receipt_test

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

var update = flag.Bool("update", false, "rewrite the golden receipts in testdata/golden")

func TestMarshalParseRoundTrip(t *testing.T) {
	s := newSigner(t, receipttest.EdDSA)
	r := sign(t, s)
	b, err := r.Marshal()
	require.NoError(t, err)
	got, err := receipt.Parse(b)
	require.NoError(t, err)
	assert.Equal(t, r, got)
	assert.Contains(t, string(b), `"format":"asu.receipt.v1"`)
	assert.NotContains(t, string(b), "=", "base64url without padding")
	_, err = receipt.Verify(got, s.Trusted(), s.Policy())
	assert.NoError(t, err)

	// HTML characters are written as signed, not escaped.
	e := receipttest.Effect("<b>&finance@example.com")
	html, err := s.Sign(e, receipttest.Card(e), expiresAt, approvedAt)
	require.NoError(t, err)
	b, err = html.Marshal()
	require.NoError(t, err)
	assert.Contains(t, string(b), `"to":"<b>&finance@example.com"`)
	assert.False(t, bytes.HasSuffix(b, []byte("\n")))
	got, err = receipt.Parse(b)
	require.NoError(t, err)
	_, err = receipt.Verify(got, s.Trusted(), s.Policy())
	assert.NoError(t, err)
}

func TestParseIsStrict(t *testing.T) {
	s := newSigner(t, receipttest.ES256)
	good, err := sign(t, s).Marshal()
	require.NoError(t, err)
	doc := string(good)
	nonce := between(doc, `"nonce":"`, `"`)
	tests := []struct {
		name string
		doc  string
		err  error
	}{
		{"unknown field", strings.Replace(doc, `{"format"`, `{"extra":1,"format"`, 1), receipt.ErrMalformed},
		{"key in another case", strings.Replace(doc, `"nonce"`, `"Nonce"`, 1), receipt.ErrMalformed},
		{"duplicate key", strings.Replace(doc, `{"format":"asu.receipt.v1"`, `{"format":"asu.receipt.v1","format":"asu.receipt.v1"`, 1), receipt.ErrMalformed},
		{"missing field", strings.Replace(doc, `"rp_id":"approve.example.com",`, ``, 1), receipt.ErrMalformed},
		{"unknown approver field", strings.Replace(doc, `"approver":{`, `"approver":{"role":"x",`, 1), receipt.ErrMalformed},
		{"unknown assertion field", strings.Replace(doc, `"assertion":{`, `"assertion":{"id":"x",`, 1), receipt.ErrMalformed},
		{"padded base64", strings.Replace(doc, nonce, nonce+"=", 1), receipt.ErrMalformed},
		{"standard base64", strings.Replace(doc, `"nonce":"`, `"nonce":"+/`, 1), receipt.ErrMalformed},
		{"escaped line break", strings.Replace(doc, nonce, nonce[:4]+`\n`+nonce[4:], 1), receipt.ErrMalformed},
		{"short nonce", strings.Replace(doc, nonce, nonce[:40], 1), receipt.ErrFormat},
		{"other format", strings.Replace(doc, `asu.receipt.v1`, `asu.receipt.v2`, 1), receipt.ErrFormat},
		{"fractional time", strings.Replace(doc, `"approved_at":`, `"approved_at":1.5,"x":`, 1), receipt.ErrMalformed},
		{"string time", strings.Replace(doc, `"expires_at":`, `"expires_at":"1"`+`,"y":`, 1), receipt.ErrMalformed},
		{"trailing data", doc + "{}", receipt.ErrMalformed},
		{"not an object", `[]`, receipt.ErrMalformed},
		{"invalid UTF-8", strings.Replace(doc, `"user":"user:dana"`, "\"user\":\"\xff\"", 1), receipt.ErrMalformed},
		{"too large", `{"x":"` + strings.Repeat("a", receipt.MaxSize) + `"}`, canon.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NotEqual(t, doc, tt.doc, "the case must change the document")
			_, err := receipt.Parse([]byte(tt.doc))
			assert.ErrorIs(t, err, tt.err)
		})
	}
}

func between(s, start, end string) string {
	i := strings.Index(s, start) + len(start)
	return s[i : i+strings.Index(s[i:], end)]
}

func TestCardHash(t *testing.T) {
	a, err := receipt.CardHash([]byte(`{"b":1, "a":[true,"x"]}`))
	require.NoError(t, err)
	b, err := receipt.CardHash([]byte(`{"a":[true,"x"],"b":1}`))
	require.NoError(t, err)
	assert.Equal(t, a, b, "harmless differences give the same hash")
	c, err := receipt.CardHash([]byte(`{"a":[true,"y"],"b":1}`))
	require.NoError(t, err)
	assert.NotEqual(t, a, c)
	// The tag separates card hashes from plain hashes of the same JSON.
	assert.NotEqual(t, canon.Sum([]byte(`{"a":[true,"x"],"b":1}`)), a)
	_, err = receipt.CardHash([]byte(`{"a":1,"a":2}`))
	assert.ErrorIs(t, err, canon.ErrDuplicateKey)

	// The card package hashes its cards with the same formula.
	for _, doc := range []string{`{"b":1, "a":[true,"x"]}`, string(receipttest.Card(receipttest.Effect("a@example.com")))} {
		want, err := card.HashJSON([]byte(doc))
		require.NoError(t, err)
		got, err := receipt.CardHash([]byte(doc))
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
}

// TestGoldenReceipts verifies the receipts in testdata/golden, which other
// implementations can use as test vectors: each NAME.json verifies with
// NAME.cose (base64url COSE_Key) and NAME.pem for RP ID approve.example.com
// and origin https://approve.example.com. go test -update rewrites them.
func TestGoldenReceipts(t *testing.T) {
	dir := filepath.Join("testdata", "golden")
	if *update {
		writeGolden(t, dir)
	}
	p := receipt.Policy{RPID: receipttest.RPID, Origins: []string{receipttest.Origin}}
	for _, name := range []string{"es256", "eddsa", "rs256"} {
		t.Run(name, func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join(dir, name+".json"))
			require.NoError(t, err)
			r, err := receipt.Parse(doc)
			require.NoError(t, err)
			coseText, err := os.ReadFile(filepath.Join(dir, name+".cose"))
			require.NoError(t, err)
			cose, err := base64.RawURLEncoding.DecodeString(string(bytes.TrimSpace(coseText)))
			require.NoError(t, err)
			k, err := receipt.ParseCOSEKey(cose)
			require.NoError(t, err)
			res, err := receipt.Verify(r, k, p)
			require.NoError(t, err)
			assert.True(t, res.Valid)

			pemText, err := os.ReadFile(filepath.Join(dir, name+".pem"))
			require.NoError(t, err)
			block, _ := pem.Decode(pemText)
			require.NotNil(t, block)
			pub, err := x509.ParsePKIXPublicKey(block.Bytes)
			require.NoError(t, err)
			pk, err := receipt.NewTrustedKey(pub)
			require.NoError(t, err)
			_, err = receipt.Verify(r, pk, p)
			assert.NoError(t, err, "a PEM key verifies the receipt too")
		})
	}
}

func writeGolden(t *testing.T, dir string) {
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, alg := range map[string]receipttest.Algorithm{"es256": receipttest.ES256, "eddsa": receipttest.EdDSA, "rs256": receipttest.RS256} {
		s := newSigner(t, alg)
		r := sign(t, s)
		b, err := r.Marshal()
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644))
		cose := base64.RawURLEncoding.EncodeToString(s.COSEKey())
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".cose"), []byte(cose+"\n"), 0o644))
		der, err := x509.MarshalPKIXPublicKey(s.PublicKey())
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".pem"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644))
	}
}

func TestTrustedKeys(t *testing.T) {
	for _, alg := range receipttest.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			s := newSigner(t, alg)
			r := sign(t, s)
			fromPub, err := receipt.NewTrustedKey(s.PublicKey())
			require.NoError(t, err)
			assert.Equal(t, alg.String(), fromPub.Algorithm())
			_, err = receipt.Verify(r, fromPub, s.Policy())
			assert.NoError(t, err)
			// Another key of the same algorithm is not a match.
			other := newSigner(t, alg)
			otherPub, err := receipt.NewTrustedKey(other.PublicKey())
			require.NoError(t, err)
			assert.Equal(t, receipt.CheckPublicKey, failedCheck(t, r, otherPub, s.Policy()))
		})
	}
	tests := []struct {
		name string
		cose []byte
	}{
		{"empty", nil},
		{"garbage", []byte{0xa1, 0x01}},
		{"CBOR not a key", []byte{0xa0}},
	}
	for _, tt := range tests {
		_, err := receipt.ParseCOSEKey(tt.cose)
		assert.ErrorIs(t, err, receipt.ErrUnsupportedKey, tt.name)
	}
	_, err := receipt.NewTrustedKey("not a key")
	assert.ErrorIs(t, err, receipt.ErrUnsupportedKey)
}

// Every card the card package can hash, receipt can hash too: a card for
// arguments nested near canon's depth limit nests about four times deeper.
func TestCardHashAcceptsEveryRenderableCard(t *testing.T) {
	assert.Equal(t, card.HashLimits(), receipt.CardLimits())
	depth := canon.DefaultMaxDepth - 2
	args := strings.Repeat(`{"a":`, depth) + `"x"` + strings.Repeat("}", depth)
	c, err := card.Render(canon.Effect{Tool: "t", Args: json.RawMessage(args)}, card.Context{Title: "T", Class: "read"})
	require.NoError(t, err)
	raw, err := c.JSON()
	require.NoError(t, err)
	_, err = canon.Canonicalize(raw)
	require.ErrorIs(t, err, canon.ErrTooDeep, "precondition: the card is deeper than an effect may be")
	got, err := receipt.CardHash(raw)
	require.NoError(t, err)
	assert.Equal(t, c.Hash(), got)
}
