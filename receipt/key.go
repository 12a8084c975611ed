package receipt

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/hex"
	"fmt"
	"math/big"
	"slices"

	"github.com/go-webauthn/webauthn/protocol/webauthncose"
)

// MinRSABits is the smallest RSA modulus a [TrustedKey] accepts.
const MinRSABits = 2048

// TrustedKey is an approver's public key obtained out of band, the one
// thing [Verify] trusts. Build one with [ParseCOSEKey] from the COSE_Key the
// gate enrolled, or with [NewTrustedKey] from a crypto.PublicKey (a PEM file,
// say). Supported are ES256, ES384 and ES512 (ECDSA on P-256, P-384 and
// P-521, each on its own curve), EdDSA (Ed25519) and RS256 (RSA PKCS #1
// v1.5 with SHA-256, at least [MinRSABits] bits), the algorithms passkeys
// use; an Ed25519 key in its canonical encoding and not of small order
// (under one of those anyone can sign). A TrustedKey is immutable
// and safe for concurrent use.
type TrustedKey struct {
	cose []byte // the COSE_Key as given; nil when built from a crypto key
	pub  crypto.PublicKey
	alg  webauthncose.COSEAlgorithmIdentifier
	key  any // webauthncose's parsed form, which verifies signatures
	id   Identity
	// holder names whoever can sign for the key, the same for every
	// encoding and algorithm label of one key (see sameKey).
	holder string
}

// Identity is what a verifier knows about whose key a [TrustedKey] is.
// Nothing in a WebAuthn assertion signs these values, so a receipt's
// approver.user, approver.credential_id and assertion.user_handle are
// bound only when the verifier pins them with [TrustedKey.WithIdentity].
type Identity struct {
	User         string // the approver's user name in the gate
	CredentialID []byte // the passkey's credential ID
	UserHandle   []byte // the WebAuthn user handle
}

// WithIdentity returns a copy of k that also requires a receipt's approver
// user, credential ID and user handle to equal the non-empty fields of id
// (checked as part of [CheckPublicKey]).
func (k *TrustedKey) WithIdentity(id Identity) *TrustedKey {
	c := *k
	c.id = Identity{User: id.User, CredentialID: bytes.Clone(id.CredentialID), UserHandle: bytes.Clone(id.UserHandle)}
	return &c
}

// identityMatches reports whether r's approver fields agree with the
// pinned identity, if any.
func (k *TrustedKey) identityMatches(r *Receipt) bool {
	return (k.id.User == "" || k.id.User == r.Approver.User) &&
		(k.id.CredentialID == nil || bytes.Equal(k.id.CredentialID, r.Approver.CredentialID)) &&
		(k.id.UserHandle == nil || bytes.Equal(k.id.UserHandle, r.Assertion.UserHandle))
}

// ParseCOSEKey returns the trusted key encoded as a COSE_Key, the encoding
// of a receipt's approver.public_key. A receipt verified against it must
// embed exactly these bytes. Failures wrap [ErrUnsupportedKey].
func ParseCOSEKey(cose []byte) (*TrustedKey, error) {
	parsed, err := webauthncose.ParsePublicKey(cose)
	if err != nil {
		return nil, fmt.Errorf("%w: not a supported COSE_Key", ErrUnsupportedKey)
	}
	k, err := fromCOSE(parsed)
	if err != nil {
		return nil, err
	}
	k.cose = bytes.Clone(cose)
	return k, nil
}

// NewTrustedKey returns the trusted key pub: an *ecdsa.PublicKey on P-256
// (ES256), P-384 (ES384) or P-521 (ES512), an ed25519.PublicKey (EdDSA)
// or an *rsa.PublicKey (RS256). A
// receipt verified against it must embed a COSE_Key for the same key and
// algorithm. Failures wrap [ErrUnsupportedKey].
func NewTrustedKey(pub crypto.PublicKey) (*TrustedKey, error) {
	switch p := pub.(type) {
	case *ecdsa.PublicKey:
		var c *ecCurve
		if p != nil {
			c = curveOf(p.Curve)
		}
		if c == nil {
			return nil, fmt.Errorf("%w: ECDSA key not on P-256, P-384 or P-521", ErrUnsupportedKey)
		}
		raw, err := p.Bytes()
		if err != nil {
			return nil, fmt.Errorf("%w: invalid ECDSA key", ErrUnsupportedKey)
		}
		size := (len(raw) - 1) / 2
		return fromCOSE(webauthncose.EC2PublicKeyData{
			PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(c.alg)},
			Curve:         int64(c.cose),
			XCoord:        raw[1 : 1+size],
			YCoord:        raw[1+size:],
		})
	case ed25519.PublicKey:
		return fromCOSE(webauthncose.OKPPublicKeyData{
			PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.OctetKey), Algorithm: int64(webauthncose.AlgEdDSA)},
			Curve:         int64(webauthncose.Ed25519),
			XCoord:        bytes.Clone(p),
		})
	case *rsa.PublicKey:
		if p == nil || p.N == nil {
			return nil, fmt.Errorf("%w: invalid RSA key", ErrUnsupportedKey)
		}
		return fromCOSE(webauthncose.RSAPublicKeyData{
			PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.RSAKey), Algorithm: int64(webauthncose.AlgRS256)},
			Modulus:       p.N.Bytes(),
			Exponent:      big.NewInt(int64(p.E)).Bytes(),
		})
	default:
		return nil, fmt.Errorf("%w: key type %T", ErrUnsupportedKey, pub)
	}
}

// fromCOSE accepts a parsed COSE key of a supported algorithm and derives
// the crypto.PublicKey used to compare keys.
func fromCOSE(parsed any) (*TrustedKey, error) {
	switch k := parsed.(type) {
	case webauthncose.EC2PublicKeyData:
		alg := webauthncose.COSEAlgorithmIdentifier(k.Algorithm)
		c := curveFor(alg)
		if c == nil {
			return nil, fmt.Errorf("%w: EC2 algorithm %s", ErrUnsupportedKey, alg)
		}
		if k.Curve != int64(c.cose) {
			// ES384 on P-256 and the like: WebAuthn pairs each with one
			// curve, and a key is one key under one label.
			return nil, fmt.Errorf("%w: %s key not on %s", ErrUnsupportedKey, alg, c.curve.Params().Name)
		}
		pub, err := k.ToECDSA()
		if err != nil {
			return nil, fmt.Errorf("%w: invalid EC2 key", ErrUnsupportedKey)
		}
		raw, err := pub.Bytes()
		if err != nil {
			return nil, fmt.Errorf("%w: invalid EC2 key", ErrUnsupportedKey)
		}
		return &TrustedKey{pub: pub, alg: alg, key: k, holder: c.holder + string(raw)}, nil
	case webauthncose.OKPPublicKeyData:
		alg := webauthncose.COSEAlgorithmIdentifier(k.Algorithm)
		if (alg != webauthncose.AlgEdDSA && alg != webauthncose.AlgEd25519) ||
			k.Curve != int64(webauthncose.Ed25519) || len(k.XCoord) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("%w: OKP key is not Ed25519", ErrUnsupportedKey)
		}
		if !canonicalEd25519(k.XCoord) {
			return nil, fmt.Errorf("%w: Ed25519 key is not in canonical encoding", ErrUnsupportedKey)
		}
		if smallOrderEd25519(k.XCoord) {
			return nil, fmt.Errorf("%w: Ed25519 key of small order, for which anyone can sign", ErrUnsupportedKey)
		}
		return &TrustedKey{pub: ed25519.PublicKey(bytes.Clone(k.XCoord)), alg: alg, key: k,
			holder: "ed25519:" + string(k.XCoord)}, nil
	case webauthncose.RSAPublicKeyData:
		alg := webauthncose.COSEAlgorithmIdentifier(k.Algorithm)
		if alg != webauthncose.AlgRS256 {
			return nil, fmt.Errorf("%w: RSA algorithm %s", ErrUnsupportedKey, alg)
		}
		e, err := webauthncose.ParseRSAPublicKeyDataExponent(&k)
		if err != nil || e < 3 || e > 1<<31-1 {
			return nil, fmt.Errorf("%w: invalid RSA exponent", ErrUnsupportedKey)
		}
		n := new(big.Int).SetBytes(k.Modulus)
		if n.BitLen() < MinRSABits {
			return nil, fmt.Errorf("%w: RSA key shorter than %d bits", ErrUnsupportedKey, MinRSABits)
		}
		// The modulus alone: whoever can factor it signs under any
		// exponent, so keys that share it share their holder.
		return &TrustedKey{pub: &rsa.PublicKey{N: n, E: e}, alg: alg, key: k, holder: "rsa:" + string(n.Bytes())}, nil
	default:
		return nil, fmt.Errorf("%w: key type not ECDSA, EdDSA or RS256", ErrUnsupportedKey)
	}
}

// ecCurve is one ECDSA algorithm a TrustedKey accepts, with the one
// curve WebAuthn pairs it with.
type ecCurve struct {
	alg    webauthncose.COSEAlgorithmIdentifier
	cose   webauthncose.COSEEllipticCurve
	curve  elliptic.Curve
	holder string // the prefix of a key's holder on this curve
}

var ecCurves = [...]ecCurve{
	{webauthncose.AlgES256, webauthncose.P256, elliptic.P256(), "p256:"},
	{webauthncose.AlgES384, webauthncose.P384, elliptic.P384(), "p384:"},
	{webauthncose.AlgES512, webauthncose.P521, elliptic.P521(), "p521:"},
}

// curveFor returns the ECDSA algorithm alg, or nil if it is none.
func curveFor(alg webauthncose.COSEAlgorithmIdentifier) *ecCurve {
	for i := range ecCurves {
		if ecCurves[i].alg == alg {
			return &ecCurves[i]
		}
	}
	return nil
}

// curveOf returns the ECDSA algorithm on curve c, or nil if it is none.
func curveOf(c elliptic.Curve) *ecCurve {
	for i := range ecCurves {
		if ecCurves[i].curve == c {
			return &ecCurves[i]
		}
	}
	return nil
}

// canonicalEd25519 reports whether x is the canonical encoding of its
// point (RFC 8032 section 5.1.2): y below the field prime, and no sign bit
// on an x of zero. crypto/ed25519 also takes the other encodings, which
// name the same point in other bytes, so one key could pass for two.
func canonicalEd25519(x []byte) bool {
	top := x[31] & 0x7f
	ones := true // x[1:31] are all 0xff
	zeros := true
	for _, b := range x[1:31] {
		ones = ones && b == 0xff
		zeros = zeros && b == 0
	}
	if top == 0x7f && ones && x[0] >= 0xed {
		return false // y >= 2^255-19
	}
	if x[31]&0x80 != 0 {
		// x is zero only where y is 1 or 2^255-20.
		if (top == 0 && zeros && x[0] == 1) || (top == 0x7f && ones && x[0] == 0xec) {
			return false
		}
	}
	return true
}

// smallOrderYs are the y coordinates, little-endian, of the eight points
// of Ed25519 whose order divides the cofactor 8: the identity (y = 1),
// the point of order 2 (y = p-1), the two of order 4 (y = 0) and the four
// of order 8, two on each y. An x of either sign is one of them.
var smallOrderYs = [...]string{
	"0100000000000000000000000000000000000000000000000000000000000000",
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"0000000000000000000000000000000000000000000000000000000000000000",
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
}

// smallOrderEd25519 reports whether the canonical encoding x names a
// point of small order. A signature check (crypto/ed25519's, RFC 8032's
// without the cofactor) under such a key A holds for R = [S]B whenever
// the message's hash is a multiple of A's order: for every message when A
// is the identity, one in eight at worst. Anyone can sign for it, so it
// proves no one's approval.
func smallOrderEd25519(x []byte) bool {
	y := hex.EncodeToString(append(bytes.Clone(x[:31]), x[31]&0x7f))
	return slices.Contains(smallOrderYs[:], y)
}

// Algorithm returns the key's COSE algorithm name: "ES256", "ES384",
// "ES512", "EdDSA", "Ed25519" or "RS256".
func (k *TrustedKey) Algorithm() string { return k.alg.String() }

// PublicKey returns the key as an *ecdsa.PublicKey, ed25519.PublicKey or
// *rsa.PublicKey.
func (k *TrustedKey) PublicKey() crypto.PublicKey { return k.pub }

// matches reports whether the COSE_Key embedded in a receipt is this key:
// byte for byte when the trusted key was given as a COSE_Key, otherwise the
// same algorithm (EdDSA and Ed25519 name one) and the same public key.
func (k *TrustedKey) matches(embedded []byte) bool {
	if k.cose != nil {
		return bytes.Equal(k.cose, embedded)
	}
	parsed, err := webauthncose.ParsePublicKey(embedded)
	if err != nil {
		return false
	}
	other, err := fromCOSE(parsed)
	if err != nil || signing(other.alg) != signing(k.alg) {
		return false
	}
	eq, ok := k.pub.(interface{ Equal(crypto.PublicKey) bool })
	return ok && eq.Equal(other.pub)
}

// signing returns the algorithm a signature under alg is made with: EdDSA
// on curve Ed25519 (the only curve fromCOSE accepts) and the fully
// specified Ed25519 are one algorithm under two labels.
func signing(alg webauthncose.COSEAlgorithmIdentifier) webauthncose.COSEAlgorithmIdentifier {
	if alg == webauthncose.AlgEd25519 {
		return webauthncose.AlgEdDSA
	}
	return alg
}

// sameKey reports whether a and b are one public key, or keys whoever
// holds one can sign for the other with: however each was given (a
// COSE_Key or a crypto.PublicKey from a PEM file), whatever its COSE
// encoding, and under either label of Ed25519 (EdDSA, -8, and Ed25519,
// -19). RSA keys with one modulus are one key, whatever their exponents.
// [VerifyQuorum] refuses people who share a key in this sense.
func sameKey(a, b *TrustedKey) bool {
	return a != nil && b != nil && a.holder == b.holder
}

// verify reports whether sig is the key's signature over data.
func (k *TrustedKey) verify(data, sig []byte) bool {
	ok, err := webauthncose.VerifySignature(k.key, data, sig)
	return err == nil && ok
}
