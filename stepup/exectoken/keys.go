package exectoken

import (
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/keyring"
)

// NewTokenIssuerRing is [NewTokenIssuer] with a key ring that may rotate:
// each token is signed with the ring's current key (its Ed25519 key, see
// [keyring.Key.Ed25519]) and names it in the JWT "kid" header. keys is
// read at each Issue, so a [*keyring.Live] rotates a running gate.
// Executors verify with [NewVerifierRing] and the ring's public half
// ([keyring.Ring.Public]).
func NewTokenIssuerRing(g *gate.Gate, keys keyring.Source, issuer string, opts ...TokenOption) (*TokenIssuer, error) {
	if keys == nil || keys.Ring() == nil {
		return nil, fmt.Errorf("%w: token issuer needs a key ring", stepup.ErrConfig)
	}
	ti, err := NewTokenIssuer(g, keys.Ring().Current().Ed25519(), issuer, opts...)
	if err != nil {
		return nil, err
	}
	ti.keys = keys
	return ti, nil
}

// signer returns the key to sign the next token with, and its id.
func (ti *TokenIssuer) signer() (ed25519.PrivateKey, any, string) {
	if ti.keys == nil {
		// One key and no ring: no id to name. A ring verifier takes the
		// token as one from before key ids.
		return nil, ti.key, ""
	}
	k := ti.keys.Ring().Current()
	return k.Ed25519(), nil, k.ID
}

// NewVerifierRing is [NewVerifier] with the public half of the issuer's
// key ring: a token is checked under the key its "kid" header names, as
// that key stands at the store's time, so tokens signed before a
// rotation verify while the old key's grace runs and none after. A token
// without a "kid" (issued before key ids) verifies under any key still in
// force. A token naming an unknown key, or one retired past its grace,
// is refused with [ErrTokenSignature], the error naming the key.
func NewVerifierRing(keys keyring.PublicSource, issuer, audience string, st Store, check Checker, opts ...VerifierOption) (*Verifier, error) {
	if keys == nil || keys.PublicRing() == nil {
		return nil, fmt.Errorf("%w: verifier needs a public key ring", stepup.ErrConfig)
	}
	return newVerifier(nil, keys, issuer, audience, st, check, opts)
}

// key returns the key to verify t with at now.
func (v *Verifier) key(t *jwt.Token, now time.Time) (any, error) {
	if v.keys == nil {
		return v.pub, nil // one key: the kid only names it
	}
	ring := v.keys.PublicRing()
	kid, _ := t.Header["kid"].(string)
	if _, present := t.Header["kid"]; present && kid == "" {
		return nil, fmt.Errorf("%w: the kid header is not a key id", keyring.ErrUnknownKey)
	}
	if kid == "" {
		set := jwt.VerificationKeySet{}
		for _, k := range ring.Verifying(now) {
			set.Keys = append(set.Keys, k)
		}
		if len(set.Keys) == 0 {
			return nil, fmt.Errorf("%w: no key in force", keyring.ErrMismatch)
		}
		return set, nil
	}
	return ring.Find(kid, now)
}
