package vectorgen

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"

	"github.com/agentstepup/asu/receipt"
)

// stream returns n bytes derived from label: SHA-256 in counter mode. The
// vectors' keys, nonces and credential IDs come from it, so the generator
// writes the same files on every run; it is no source of secrets.
func stream(label string, n int) []byte {
	out := make([]byte, 0, n+sha256.Size)
	for i := uint32(0); len(out) < n; i++ {
		var ctr [4]byte
		binary.BigEndian.PutUint32(ctr[:], i)
		h := sha256.Sum256(append([]byte("asu vectors\x00"+label+"\x00"), ctr[:]...))
		out = append(out, h[:]...)
	}
	return out[:n]
}

// passkey is a software passkey with a key derived from its label.
type passkey struct {
	name   string
	alg    string
	user   string
	signer crypto.Signer
	cose   []byte
	credID []byte
	handle []byte
}

// relabelled returns k's key enrolled for user under the COSE algorithm
// label alg (an Ed25519 key as -19 rather than -8, say): one key, another
// encoding of it.
func (k *passkey) relabelled(name, alg string, coseAlg webauthncose.COSEAlgorithmIdentifier, user string) (*passkey, error) {
	pub, ok := k.signer.Public().(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("vectorgen: relabel %s: not an Ed25519 key", k.name)
	}
	cose, err := webauthncbor.Marshal(webauthncose.OKPPublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.OctetKey), Algorithm: int64(coseAlg)},
		Curve:         int64(webauthncose.Ed25519), XCoord: pub,
	})
	if err != nil {
		return nil, fmt.Errorf("vectorgen: COSE key: %w", err)
	}
	c := *k
	c.name, c.alg, c.user, c.cose = name, alg, user, cose
	c.credID, c.handle = stream(name+"/credential", 16), stream(name+"/handle", 16)
	return &c, nil
}

// newPasskey derives a passkey for user from label.
func newPasskey(label, alg, user string) (*passkey, error) {
	k := &passkey{name: label, alg: alg, user: user,
		credID: stream(label+"/credential", 16), handle: stream(label+"/handle", 16)}
	var key any
	switch alg {
	case "ES256":
		var priv *ecdsa.PrivateKey
		for i := 0; priv == nil; i++ {
			p, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), stream(fmt.Sprintf("%s/p256/%d", label, i), 32))
			if err == nil {
				priv = p
			}
		}
		raw, err := priv.PublicKey.Bytes()
		if err != nil {
			return nil, err
		}
		k.signer = priv
		key = webauthncose.EC2PublicKeyData{
			PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
			Curve:         int64(webauthncose.P256), XCoord: raw[1:33], YCoord: raw[33:65],
		}
	case "EdDSA":
		priv := ed25519.NewKeyFromSeed(stream(label+"/ed25519", ed25519.SeedSize))
		k.signer = priv
		key = webauthncose.OKPPublicKeyData{
			PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.OctetKey), Algorithm: int64(webauthncose.AlgEdDSA)},
			Curve:         int64(webauthncose.Ed25519), XCoord: priv.Public().(ed25519.PublicKey),
		}
	case "RS256":
		priv, err := rsaKey(label)
		if err != nil {
			return nil, err
		}
		k.signer = priv
		key = webauthncose.RSAPublicKeyData{
			PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.RSAKey), Algorithm: int64(webauthncose.AlgRS256)},
			Modulus:       priv.N.Bytes(), Exponent: big.NewInt(int64(priv.E)).Bytes(),
		}
	default:
		return nil, fmt.Errorf("vectorgen: algorithm %s", alg)
	}
	cose, err := webauthncbor.Marshal(key)
	if err != nil {
		return nil, fmt.Errorf("vectorgen: COSE key: %w", err)
	}
	k.cose = cose
	return k, nil
}

// rsaKey derives a 2048-bit RSA key from label: two primes searched for
// from derived odd candidates with the top two bits set.
func rsaKey(label string) (*rsa.PrivateKey, error) {
	e := big.NewInt(65537)
	one := big.NewInt(1)
	prime := func(which string) *big.Int {
		for i := 0; ; i++ {
			b := stream(fmt.Sprintf("%s/rsa/%s/%d", label, which, i), 128)
			b[0] |= 0xc0
			b[127] |= 1
			p := new(big.Int).SetBytes(b)
			if p.ProbablyPrime(32) && new(big.Int).GCD(nil, nil, e, new(big.Int).Sub(p, one)).Cmp(one) == 0 {
				return p
			}
		}
	}
	p, q := prime("p"), prime("q")
	phi := new(big.Int).Mul(new(big.Int).Sub(p, one), new(big.Int).Sub(q, one))
	priv := &rsa.PrivateKey{
		PublicKey: rsa.PublicKey{N: new(big.Int).Mul(p, q), E: int(e.Int64())},
		D:         new(big.Int).ModInverse(e, phi),
		Primes:    []*big.Int{p, q},
	}
	priv.Precompute()
	if err := priv.Validate(); err != nil {
		return nil, fmt.Errorf("vectorgen: RSA key: %w", err)
	}
	return priv, nil
}

// ceremony is one signing as a browser and an authenticator do it, with
// the fields a tampering vector bends.
type ceremony struct {
	typ, origin, rpID string
	challenge         []byte
	flags             byte
	count             uint32
	crossOrigin       bool
	// clientData, when set, writes the client data JSON itself from the
	// challenge in base64url: a browser that writes it otherwise.
	clientData func(challenge string) string
}

// sign returns the assertion of c.
func (k *passkey) sign(c ceremony) (receipt.Assertion, error) {
	rpHash := sha256.Sum256([]byte(c.rpID))
	authData := append(rpHash[:], c.flags)
	authData = binary.BigEndian.AppendUint32(authData, c.count)
	clientData, err := json.Marshal(struct {
		Type        string `json:"type"`
		Challenge   string `json:"challenge"`
		Origin      string `json:"origin"`
		CrossOrigin bool   `json:"crossOrigin"`
	}{c.typ, base64.RawURLEncoding.EncodeToString(c.challenge), c.origin, c.crossOrigin})
	if err != nil {
		return receipt.Assertion{}, err
	}
	if c.clientData != nil {
		clientData = []byte(c.clientData(base64.RawURLEncoding.EncodeToString(c.challenge)))
	}
	sig, err := k.signRaw(authData, clientData)
	if err != nil {
		return receipt.Assertion{}, err
	}
	return receipt.Assertion{AuthenticatorData: authData, ClientDataJSON: clientData,
		Signature: sig, UserHandle: bytes.Clone(k.handle)}, nil
}

// signRaw signs authData ‖ SHA-256(clientData) deterministically: Ed25519
// and RSA PKCS #1 v1.5 are, and ECDSA signs by RFC 6979.
func (k *passkey) signRaw(authData, clientData []byte) ([]byte, error) {
	h := sha256.Sum256(clientData)
	msg := append(bytes.Clone(authData), h[:]...)
	d := sha256.Sum256(msg)
	switch s := k.signer.(type) {
	case ed25519.PrivateKey:
		return ed25519.Sign(s, msg), nil
	case *ecdsa.PrivateKey:
		return s.Sign(nil, d[:], crypto.SHA256)
	case *rsa.PrivateKey:
		return rsa.SignPKCS1v15(nil, s, crypto.SHA256, d[:])
	}
	return nil, fmt.Errorf("vectorgen: no key")
}
