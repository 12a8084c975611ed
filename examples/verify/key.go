package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/agentstepup/asu/receipt"
)

// parseKey reads a key file: a PEM public key, or a COSE_Key in base64url
// (padding and surrounding white space tolerated).
func parseKey(text []byte) (*receipt.TrustedKey, error) {
	text = bytes.TrimSpace(text)
	if bytes.HasPrefix(text, []byte("-----BEGIN")) {
		block, rest := pem.Decode(text)
		if block == nil || len(bytes.TrimSpace(rest)) > 0 {
			return nil, errors.New("key file: not one PEM block")
		}
		if block.Type != "PUBLIC KEY" {
			return nil, fmt.Errorf("key file: PEM block is %q, want PUBLIC KEY", block.Type)
		}
		pub, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, errors.New("key file: not a PKIX public key")
		}
		return receipt.NewTrustedKey(pub)
	}
	cose, err := base64.RawURLEncoding.DecodeString(string(bytes.TrimRight(text, "=")))
	if err != nil {
		return nil, errors.New("key file: neither PEM nor base64url COSE_Key")
	}
	return receipt.ParseCOSEKey(cose)
}

// parseGateKey reads the gate's checkpoint key: a PEM "PUBLIC KEY" block
// holding an ed25519 key.
func parseGateKey(text []byte) (ed25519.PublicKey, error) {
	block, rest := pem.Decode(bytes.TrimSpace(text))
	if block == nil || len(bytes.TrimSpace(rest)) > 0 || block.Type != "PUBLIC KEY" {
		return nil, errors.New("gate key file: not one PEM PUBLIC KEY block")
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, errors.New("gate key file: not a PKIX public key")
	}
	ed, ok := pub.(ed25519.PublicKey)
	if !ok {
		return nil, errors.New("gate key file: not an ed25519 key")
	}
	return ed, nil
}
