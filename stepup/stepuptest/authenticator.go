package stepuptest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
)

// Algorithm is a COSE signature algorithm the fake authenticator can create
// credentials for.
type Algorithm int64

// Algorithms of [Authenticator] credentials.
const (
	ES256 Algorithm = -7 // ECDSA over P-256 with SHA-256
	EdDSA Algorithm = -8 // Ed25519
)

// Authenticator flag bits (WebAuthn section 6.1).
const (
	flagUP = 0x01
	flagUV = 0x04
	flagBE = 0x08
	flagBS = 0x10
	flagAT = 0x40
)

// ErrNoCredential is returned by [Authenticator.Assert] when the request
// allows none of the authenticator's credentials.
var ErrNoCredential = errors.New("stepuptest: no matching credential")

// Authenticator is a software WebAuthn authenticator and client in one: it
// answers creation and request options with the JSON a browser would send
// back, "none" attestation, ES256 or Ed25519 keys. It signs whatever it is
// asked to; [Tweak] values bend one ceremony off the happy path so tests can
// show each server-side check refusing.
//
// An Authenticator is safe for concurrent use.
type Authenticator struct {
	rpID   string
	origin string

	mu    sync.Mutex
	creds []*credential
}

type credential struct {
	id         []byte
	alg        Algorithm
	ec         *ecdsa.PrivateKey
	ed         ed25519.PrivateKey
	userHandle []byte
	rpID       string
	count      uint32
	be, bs     bool
}

// NewAuthenticator returns an authenticator that acts for rpID and reports
// origin in its client data, as a browser on that origin would.
func NewAuthenticator(rpID, origin string) *Authenticator {
	return &Authenticator{rpID: rpID, origin: origin}
}

// ceremony collects the tweaks of one Register or Assert call.
type ceremony struct {
	origin, rpID, typ string
	challenge         []byte
	noUP, noUV        bool
	be, bs            *bool
	count             *uint32
	credID            []byte
	alg               Algorithm
	userHandle        []byte
	noUserHandle      bool
}

// Tweak changes one aspect of a single ceremony.
type Tweak func(*ceremony)

// WithOrigin reports origin in the client data instead of the
// authenticator's own.
func WithOrigin(origin string) Tweak { return func(c *ceremony) { c.origin = origin } }

// WithRPID hashes rpID into the authenticator data instead of the
// requested or configured one.
func WithRPID(rpID string) Tweak { return func(c *ceremony) { c.rpID = rpID } }

// WithChallenge signs challenge instead of the one in the options.
func WithChallenge(challenge []byte) Tweak {
	return func(c *ceremony) { c.challenge = bytes.Clone(challenge) }
}

// WithType puts typ in the client data instead of webauthn.create or
// webauthn.get.
func WithType(typ string) Tweak { return func(c *ceremony) { c.typ = typ } }

// WithoutUserPresence clears the UP flag.
func WithoutUserPresence() Tweak { return func(c *ceremony) { c.noUP = true } }

// WithoutUserVerification clears the UV flag.
func WithoutUserVerification() Tweak { return func(c *ceremony) { c.noUV = true } }

// WithBackup sets the BE (backup eligible) and BS (backed up) flags. At
// registration they stick to the credential; in an assertion they override
// it once.
func WithBackup(eligible, state bool) Tweak {
	return func(c *ceremony) { c.be, c.bs = &eligible, &state }
}

// WithSignCount reports n as the signature counter instead of advancing the
// credential's counter by one. The credential's counter is set to n.
func WithSignCount(n uint32) Tweak { return func(c *ceremony) { c.count = &n } }

// WithCredential asserts with the credential whose id is id, even if the
// request does not allow it.
func WithCredential(id []byte) Tweak { return func(c *ceremony) { c.credID = bytes.Clone(id) } }

// WithAlgorithm creates an alg credential at registration (default ES256).
func WithAlgorithm(alg Algorithm) Tweak { return func(c *ceremony) { c.alg = alg } }

// WithUserHandle returns handle as the assertion's user handle instead of
// the one stored at registration.
func WithUserHandle(handle []byte) Tweak {
	return func(c *ceremony) { c.userHandle = bytes.Clone(handle) }
}

// WithoutUserHandle omits the user handle from the assertion.
func WithoutUserHandle() Tweak { return func(c *ceremony) { c.noUserHandle = true } }

func (a *Authenticator) ceremony(tweaks []Tweak) *ceremony {
	c := &ceremony{origin: a.origin, alg: ES256}
	for _, t := range tweaks {
		t(c)
	}
	return c
}

// unwrap accepts options either bare or wrapped as {"publicKey": {...}},
// the two shapes servers send.
func unwrap(options []byte) ([]byte, error) {
	var wrapped struct {
		PublicKey json.RawMessage `json:"publicKey"`
	}
	if err := json.Unmarshal(options, &wrapped); err != nil {
		return nil, fmt.Errorf("stepuptest: options: %w", err)
	}
	if len(wrapped.PublicKey) > 0 {
		return wrapped.PublicKey, nil
	}
	return options, nil
}

// b64 is base64url without padding, the encoding of every binary field in
// WebAuthn's JSON forms.
var b64 = base64.RawURLEncoding

// decodeB64 accepts base64url with or without padding.
func decodeB64(s string) ([]byte, error) {
	if b, err := b64.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.URLEncoding.DecodeString(s)
}

// Register answers PublicKeyCredentialCreationOptions JSON with a
// registration response JSON ("none" attestation) and keeps the new
// credential.
func (a *Authenticator) Register(creationOptions []byte, tweaks ...Tweak) ([]byte, error) {
	raw, err := unwrap(creationOptions)
	if err != nil {
		return nil, err
	}
	var opts struct {
		Challenge string `json:"challenge"`
		RP        struct {
			ID string `json:"id"`
		} `json:"rp"`
		User struct {
			ID string `json:"id"`
		} `json:"user"`
	}
	if err := json.Unmarshal(raw, &opts); err != nil {
		return nil, fmt.Errorf("stepuptest: creation options: %w", err)
	}
	c := a.ceremony(tweaks)
	challenge := c.challenge
	if challenge == nil {
		if challenge, err = decodeB64(opts.Challenge); err != nil {
			return nil, fmt.Errorf("stepuptest: challenge: %w", err)
		}
	}
	userHandle, err := decodeB64(opts.User.ID)
	if err != nil {
		return nil, fmt.Errorf("stepuptest: user id: %w", err)
	}
	rpID := firstNonEmpty(c.rpID, opts.RP.ID, a.rpID)

	cred, err := newCredential(c.alg)
	if err != nil {
		return nil, err
	}
	cred.userHandle, cred.rpID = userHandle, rpID
	if c.be != nil {
		cred.be, cred.bs = *c.be, *c.bs
	}
	if c.count != nil {
		cred.count = *c.count
	}
	coseKey, err := cred.coseKey()
	if err != nil {
		return nil, err
	}

	authData := authenticatorData(rpID, c.flags(cred)|flagAT, cred.count)
	authData = append(authData, make([]byte, 16)...) // AAGUID: all zero for "none"
	authData = binary.BigEndian.AppendUint16(authData, uint16(len(cred.id)))
	authData = append(authData, cred.id...)
	authData = append(authData, coseKey...)

	attObj, err := webauthncbor.Marshal(map[string]any{
		"fmt":      "none",
		"attStmt":  map[string]any{},
		"authData": authData,
	})
	if err != nil {
		return nil, fmt.Errorf("stepuptest: attestation object: %w", err)
	}
	clientData, err := clientDataJSON(firstNonEmpty(c.typ, "webauthn.create"), challenge, c.origin)
	if err != nil {
		return nil, err
	}
	resp, err := json.Marshal(map[string]any{
		"id":                      b64.EncodeToString(cred.id),
		"rawId":                   b64.EncodeToString(cred.id),
		"type":                    "public-key",
		"authenticatorAttachment": "cross-platform",
		"clientExtensionResults":  map[string]any{},
		"response": map[string]any{
			"clientDataJSON":    b64.EncodeToString(clientData),
			"attestationObject": b64.EncodeToString(attObj),
			"transports":        []string{"usb"},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("stepuptest: registration response: %w", err)
	}
	a.mu.Lock()
	a.creds = append(a.creds, cred)
	a.mu.Unlock()
	return resp, nil
}

// Assert answers PublicKeyCredentialRequestOptions JSON with an assertion
// response JSON, signed by the first allowed credential the authenticator
// holds (or by any of its credentials when allowCredentials is empty). The
// credential's signature counter advances by one unless [WithSignCount]
// says otherwise.
func (a *Authenticator) Assert(requestOptions []byte, tweaks ...Tweak) ([]byte, error) {
	raw, err := unwrap(requestOptions)
	if err != nil {
		return nil, err
	}
	var opts struct {
		Challenge string `json:"challenge"`
		RPID      string `json:"rpId"`
		Allow     []struct {
			ID string `json:"id"`
		} `json:"allowCredentials"`
	}
	if err := json.Unmarshal(raw, &opts); err != nil {
		return nil, fmt.Errorf("stepuptest: request options: %w", err)
	}
	c := a.ceremony(tweaks)
	challenge := c.challenge
	if challenge == nil {
		if challenge, err = decodeB64(opts.Challenge); err != nil {
			return nil, fmt.Errorf("stepuptest: challenge: %w", err)
		}
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	cred := a.pick(c.credID, opts.Allow)
	if cred == nil {
		return nil, ErrNoCredential
	}
	if c.count != nil {
		cred.count = *c.count
	} else {
		cred.count++
	}
	rpID := firstNonEmpty(c.rpID, opts.RPID, cred.rpID, a.rpID)
	authData := authenticatorData(rpID, c.flags(cred), cred.count)
	clientData, err := clientDataJSON(firstNonEmpty(c.typ, "webauthn.get"), challenge, c.origin)
	if err != nil {
		return nil, err
	}
	sig, err := cred.sign(authData, clientData)
	if err != nil {
		return nil, err
	}
	response := map[string]any{
		"clientDataJSON":    b64.EncodeToString(clientData),
		"authenticatorData": b64.EncodeToString(authData),
		"signature":         b64.EncodeToString(sig),
	}
	switch {
	case c.noUserHandle:
	case c.userHandle != nil:
		response["userHandle"] = b64.EncodeToString(c.userHandle)
	default:
		response["userHandle"] = b64.EncodeToString(cred.userHandle)
	}
	out, err := json.Marshal(map[string]any{
		"id":                      b64.EncodeToString(cred.id),
		"rawId":                   b64.EncodeToString(cred.id),
		"type":                    "public-key",
		"authenticatorAttachment": "cross-platform",
		"clientExtensionResults":  map[string]any{},
		"response":                response,
	})
	if err != nil {
		return nil, fmt.Errorf("stepuptest: assertion response: %w", err)
	}
	return out, nil
}

// pick returns the credential to assert with; a.mu is held.
func (a *Authenticator) pick(want []byte, allow []struct {
	ID string `json:"id"`
}) *credential {
	if want != nil {
		for _, cr := range a.creds {
			if bytes.Equal(cr.id, want) {
				return cr
			}
		}
		return nil
	}
	if len(allow) == 0 && len(a.creds) > 0 {
		return a.creds[0]
	}
	for _, al := range allow {
		id, err := decodeB64(al.ID)
		if err != nil {
			continue
		}
		for _, cr := range a.creds {
			if bytes.Equal(cr.id, id) {
				return cr
			}
		}
	}
	return nil
}

// CredentialIDs returns the ids of the credentials the authenticator holds,
// oldest first.
func (a *Authenticator) CredentialIDs() [][]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([][]byte, len(a.creds))
	for i, c := range a.creds {
		ids[i] = bytes.Clone(c.id)
	}
	return ids
}

// PublicKey returns the COSE_Key of the credential whose id is id, or nil.
func (a *Authenticator) PublicKey(id []byte) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.creds {
		if bytes.Equal(c.id, id) {
			k, err := c.coseKey()
			if err != nil {
				return nil
			}
			return k
		}
	}
	return nil
}

func (c *ceremony) flags(cred *credential) byte {
	var f byte
	if !c.noUP {
		f |= flagUP
	}
	if !c.noUV {
		f |= flagUV
	}
	be, bs := cred.be, cred.bs
	if c.be != nil {
		be, bs = *c.be, *c.bs
	}
	if be {
		f |= flagBE
	}
	if bs {
		f |= flagBS
	}
	return f
}

func authenticatorData(rpID string, flags byte, count uint32) []byte {
	h := sha256.Sum256([]byte(rpID))
	out := make([]byte, 0, 37+128)
	out = append(out, h[:]...)
	out = append(out, flags)
	return binary.BigEndian.AppendUint32(out, count)
}

func clientDataJSON(typ string, challenge []byte, origin string) ([]byte, error) {
	b, err := json.Marshal(struct {
		Type        string `json:"type"`
		Challenge   string `json:"challenge"`
		Origin      string `json:"origin"`
		CrossOrigin bool   `json:"crossOrigin"`
	}{typ, b64.EncodeToString(challenge), origin, false})
	if err != nil {
		return nil, fmt.Errorf("stepuptest: client data: %w", err)
	}
	return b, nil
}

func newCredential(alg Algorithm) (*credential, error) {
	c := &credential{id: make([]byte, 32), alg: alg}
	if _, err := rand.Read(c.id); err != nil {
		return nil, fmt.Errorf("stepuptest: credential id: %w", err)
	}
	var err error
	switch alg {
	case ES256:
		c.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case EdDSA:
		_, c.ed, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, fmt.Errorf("stepuptest: unsupported algorithm %d", alg)
	}
	if err != nil {
		return nil, fmt.Errorf("stepuptest: key: %w", err)
	}
	return c, nil
}

// coseKey encodes the public key as a COSE_Key. EC2 coordinates are always
// 32 bytes, big-endian, left-padded with zeros: a shorter encoding is what
// makes other fakes fail now and then.
func (c *credential) coseKey() ([]byte, error) {
	var key map[int]any
	switch c.alg {
	case ES256:
		pub, err := c.ec.PublicKey.Bytes() // 0x04 ‖ X[32] ‖ Y[32]
		if err != nil {
			return nil, fmt.Errorf("stepuptest: public key: %w", err)
		}
		key = map[int]any{1: 2, 3: int(ES256), -1: 1, -2: pub[1:33], -3: pub[33:65]}
	case EdDSA:
		key = map[int]any{1: 1, 3: int(EdDSA), -1: 6, -2: []byte(c.ed.Public().(ed25519.PublicKey))}
	}
	b, err := webauthncbor.Marshal(key)
	if err != nil {
		return nil, fmt.Errorf("stepuptest: COSE key: %w", err)
	}
	return b, nil
}

// sign signs authenticatorData ‖ SHA-256(clientDataJSON), as WebAuthn
// assertions do.
func (c *credential) sign(authData, clientData []byte) ([]byte, error) {
	h := sha256.Sum256(clientData)
	msg := append(bytes.Clone(authData), h[:]...)
	switch c.alg {
	case ES256:
		d := sha256.Sum256(msg)
		sig, err := ecdsa.SignASN1(rand.Reader, c.ec, d[:])
		if err != nil {
			return nil, fmt.Errorf("stepuptest: sign: %w", err)
		}
		return sig, nil
	default:
		return ed25519.Sign(c.ed, msg), nil
	}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
