// Package receipttest makes real, verifiable receipts for tests: a
// software passkey ([Signer]) with an ES256, ES384, ES512, EdDSA or RS256
// key that signs
// asu challenges the way a browser and authenticator would, producing
// WebAuthn-shaped authenticator data and client data JSON.
//
// [Tweak] values bend one signing off the happy path (no user verification,
// another origin, a wrong challenge), so tests can show each check of
// [receipt.Verify] refusing a receipt that is otherwise correctly signed.
package receipttest

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/receipt"
)

// Algorithm is a COSE signature algorithm a [Signer] can use.
type Algorithm int64

// Algorithms of a [Signer].
const (
	ES256 Algorithm = Algorithm(webauthncose.AlgES256) // ECDSA P-256 with SHA-256
	ES384 Algorithm = Algorithm(webauthncose.AlgES384) // ECDSA P-384 with SHA-384
	ES512 Algorithm = Algorithm(webauthncose.AlgES512) // ECDSA P-521 with SHA-512
	EdDSA Algorithm = Algorithm(webauthncose.AlgEdDSA) // Ed25519
	RS256 Algorithm = Algorithm(webauthncose.AlgRS256) // RSA 2048 PKCS #1 v1.5 with SHA-256
)

// Algorithms lists every algorithm a [Signer] supports.
func Algorithms() []Algorithm { return []Algorithm{ES256, ES384, ES512, EdDSA, RS256} }

// String returns the COSE name of a, e.g. "ES256".
func (a Algorithm) String() string { return webauthncose.COSEAlgorithmIdentifier(a).String() }

// Default relying party of a [Signer] made by [New].
const (
	RPID   = "approve.example.com"
	Origin = "https://approve.example.com"
)

// Signer is a software passkey for one relying party. It is safe for
// concurrent use.
type Signer struct {
	alg    Algorithm
	signer crypto.Signer
	cose   []byte
	credID []byte
	user   string
	handle []byte
	rpID   string
	origin string
}

// New returns a signer with a fresh alg key for [RPID] and [Origin],
// acting for approver user.
func New(alg Algorithm, user string) (*Signer, error) {
	return NewFor(alg, user, RPID, Origin)
}

// NewFor returns a signer with a fresh alg key for the given relying party
// and origin.
func NewFor(alg Algorithm, user, rpID, origin string) (*Signer, error) {
	s := &Signer{alg: alg, user: user, rpID: rpID, origin: origin,
		credID: make([]byte, 16), handle: make([]byte, 16)}
	if _, err := rand.Read(s.credID); err != nil {
		return nil, err
	}
	if _, err := rand.Read(s.handle); err != nil {
		return nil, err
	}
	var key any
	switch alg {
	case ES256, ES384, ES512:
		curve, crv := elliptic.P256(), webauthncose.P256
		switch alg {
		case ES384:
			curve, crv = elliptic.P384(), webauthncose.P384
		case ES512:
			curve, crv = elliptic.P521(), webauthncose.P521
		}
		k, err := ecdsa.GenerateKey(curve, rand.Reader)
		if err != nil {
			return nil, err
		}
		raw, err := k.PublicKey.Bytes()
		if err != nil {
			return nil, err
		}
		size := (len(raw) - 1) / 2
		s.signer = k
		key = webauthncose.EC2PublicKeyData{
			PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(alg)},
			Curve:         int64(crv), XCoord: raw[1 : 1+size], YCoord: raw[1+size:],
		}
	case EdDSA:
		pub, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		s.signer = k
		key = webauthncose.OKPPublicKeyData{
			PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.OctetKey), Algorithm: int64(alg)},
			Curve:         int64(webauthncose.Ed25519), XCoord: pub,
		}
	case RS256:
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, err
		}
		s.signer = k
		key = webauthncose.RSAPublicKeyData{
			PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.RSAKey), Algorithm: int64(alg)},
			Modulus:       k.N.Bytes(), Exponent: big.NewInt(int64(k.E)).Bytes(),
		}
	default:
		return nil, fmt.Errorf("receipttest: unsupported algorithm %d", alg)
	}
	cose, err := webauthncbor.Marshal(key)
	if err != nil {
		return nil, fmt.Errorf("receipttest: COSE key: %w", err)
	}
	s.cose = cose
	return s, nil
}

// COSEKey returns the signer's public key as a COSE_Key.
func (s *Signer) COSEKey() []byte { return bytes.Clone(s.cose) }

// PublicKey returns the signer's public key as a crypto.PublicKey.
func (s *Signer) PublicKey() crypto.PublicKey { return s.signer.Public() }

// User returns the approver user name the signer's receipts carry.
func (s *Signer) User() string { return s.user }

// Trusted returns the signer's key as a verifier would hold it.
func (s *Signer) Trusted() *receipt.TrustedKey {
	k, err := receipt.ParseCOSEKey(s.cose)
	if err != nil {
		panic("receipttest: own key refused: " + err.Error())
	}
	return k
}

// Policy returns the verification policy for the signer's relying party.
func (s *Signer) Policy() receipt.Policy {
	return receipt.Policy{RPID: s.rpID, Origins: []string{s.origin}}
}

// ceremony is one signing, as bent by tweaks.
type ceremony struct {
	typ, origin, rpID string
	flags             byte
	challenge         []byte
	count             uint32
	crossOrigin       bool
}

// Tweak changes one aspect of a single [Signer.Sign].
type Tweak func(*ceremony)

// WithType puts typ in the client data instead of webauthn.get.
func WithType(typ string) Tweak { return func(c *ceremony) { c.typ = typ } }

// WithOrigin reports origin in the client data (the receipt keeps the
// signer's).
func WithOrigin(origin string) Tweak { return func(c *ceremony) { c.origin = origin } }

// WithCrossOrigin marks the client data crossOrigin.
func WithCrossOrigin() Tweak { return func(c *ceremony) { c.crossOrigin = true } }

// WithRPID hashes rpID into the authenticator data (the receipt keeps the
// signer's).
func WithRPID(rpID string) Tweak { return func(c *ceremony) { c.rpID = rpID } }

// WithFlags sets the authenticator data flags byte (default UP|UV).
func WithFlags(flags byte) Tweak { return func(c *ceremony) { c.flags = flags } }

// WithChallenge signs challenge instead of the receipt's.
func WithChallenge(challenge []byte) Tweak {
	return func(c *ceremony) { c.challenge = bytes.Clone(challenge) }
}

// WithSignCount reports n as the signature counter.
func WithSignCount(n uint32) Tweak { return func(c *ceremony) { c.count = n } }

// Sign approves effect shown as card: it draws a fresh nonce, signs the
// asu challenge as a passkey would, and returns the complete receipt.
func (s *Signer) Sign(effect canon.Effect, card []byte, expiresAt, approvedAt time.Time, tweaks ...Tweak) (*receipt.Receipt, error) {
	canonical, err := effect.Canonical()
	if err != nil {
		return nil, fmt.Errorf("receipttest: effect: %w", err)
	}
	cardHash, err := receipt.CardHash(card)
	if err != nil {
		return nil, fmt.Errorf("receipttest: %w", err)
	}
	var nonce [32]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	r := &receipt.Receipt{
		Format:     receipt.FormatV1,
		Effect:     canonical,
		Digest:     canon.Sum(canonical),
		Card:       bytes.Clone(card),
		CardHash:   cardHash,
		Nonce:      nonce[:],
		ExpiresAt:  expiresAt.Unix(),
		ApprovedAt: approvedAt.Unix(),
		Approver:   receipt.Approver{User: s.user, CredentialID: bytes.Clone(s.credID), PublicKey: s.COSEKey()},
		RPID:       s.rpID,
		Origin:     s.origin,
	}
	return s.answer(r, tweaks...)
}

// answer signs r's challenge as a passkey would and completes r with the
// assertion.
func (s *Signer) answer(r *receipt.Receipt, tweaks ...Tweak) (*receipt.Receipt, error) {
	challenge := receipt.Challenge(r.Digest, [32]byte(r.Nonce), r.ExpiresAt, r.CardHash)
	c := ceremony{typ: "webauthn.get", origin: s.origin, rpID: s.rpID, flags: 0x05, challenge: challenge[:], count: 1}
	for _, t := range tweaks {
		t(&c)
	}
	a, err := s.assert(c)
	if err != nil {
		return nil, err
	}
	r.Assertion = a
	return r, nil
}

// Cosign approves the same request as r (its effect, card, nonce and
// expiry: one challenge) as this signer, at approvedAt: a second
// approver's receipt for a [receipt.Quorum].
func (s *Signer) Cosign(r *receipt.Receipt, approvedAt time.Time, tweaks ...Tweak) (*receipt.Receipt, error) {
	if len(r.Nonce) != 32 {
		return nil, fmt.Errorf("receipttest: receipt nonce is not 32 bytes")
	}
	out := &receipt.Receipt{
		Format: receipt.FormatV1, Effect: bytes.Clone(r.Effect), Digest: r.Digest, Card: bytes.Clone(r.Card),
		CardHash: r.CardHash, Nonce: bytes.Clone(r.Nonce), ExpiresAt: r.ExpiresAt, ApprovedAt: approvedAt.Unix(),
		Approver: receipt.Approver{User: s.user, CredentialID: bytes.Clone(s.credID), PublicKey: s.COSEKey()},
		RPID:     s.rpID, Origin: s.origin,
	}
	return s.answer(out, tweaks...)
}

// assert produces the authenticator's and browser's part of an assertion.
func (s *Signer) assert(c ceremony) (receipt.Assertion, error) {
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
	sig, err := s.SignRaw(authData, clientData)
	if err != nil {
		return receipt.Assertion{}, err
	}
	return receipt.Assertion{AuthenticatorData: authData, ClientDataJSON: clientData,
		Signature: sig, UserHandle: bytes.Clone(s.handle)}, nil
}

// SignRaw signs authData ‖ SHA-256(clientData) with the signer's key, as a
// WebAuthn authenticator does.
func (s *Signer) SignRaw(authData, clientData []byte) ([]byte, error) {
	h := sha256.Sum256(clientData)
	msg := append(bytes.Clone(authData), h[:]...)
	switch k := s.signer.(type) {
	case ed25519.PrivateKey:
		return ed25519.Sign(k, msg), nil
	case *ecdsa.PrivateKey:
		h := crypto.SHA256
		switch s.alg {
		case ES384:
			h = crypto.SHA384
		case ES512:
			h = crypto.SHA512
		}
		d := h.New()
		d.Write(msg)
		return ecdsa.SignASN1(rand.Reader, k, d.Sum(nil))
	case *rsa.PrivateKey:
		d := sha256.Sum256(msg)
		return rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, d[:])
	}
	return nil, fmt.Errorf("receipttest: no key")
}

// Effect returns a sample send_email effect, the demo's approved call,
// with to as the recipient.
func Effect(to string) canon.Effect {
	args, _ := json.Marshal(map[string]string{"to": to, "subject": "Q3 summary", "attachment": "q3.csv"})
	var sum canon.Digest
	copy(sum[:], bytes.Repeat([]byte{0x5a}, 32))
	return canon.Effect{
		Tool: "send_email",
		Args: args,
		Refs: []canon.Ref{{Name: "q3.csv", Kind: "file", SHA256: sum, Size: 34}},
		Task: "t-42", Step: "3",
		Principal:     canon.Principal{User: "user:ravi", Agent: "agent:reports"},
		PolicyVersion: "2026-10-30.1",
		Audience:      "mailer",
	}
}

// Card returns a sample card model JSON for effect: the card package's
// real model is what a gate signs; receipts treat it as opaque JSON.
func Card(e canon.Effect) []byte {
	b, _ := json.Marshal(map[string]any{
		"title":     "Send an email",
		"tool":      e.Tool,
		"fields":    []map[string]string{{"label": "Arguments", "value": string(e.Args)}},
		"untrusted": "",
	})
	return b
}
