package core

import (
	"bytes"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math/big"
	"strings"
)

// A mark on an answer (early, refused) must hold for every spelling of
// the same answer: the JSON of navigator.credentials.get can be written
// with its members in any order, with spaces and escapes, with its
// base64url padded or not, and an ECDSA signature (r, s) verifies as
// (r, n-s) too, on whatever curve it was made (P-256, P-384, P-521: every
// one enrolment accepts). An answer is therefore marked by what it
// asserts: the credential, the authenticator data, the client data and,
// of an ECDSA signature, r alone. r is the one part of it that no one
// without the key can change: for a given r and message, the only
// signatures that verify are (r, s) and (r, n-s), so r names the
// signature whatever the curve, with no need to know it, and a signer
// that signs again draws a new r. Any other signature (Ed25519, RSA),
// and one that does not read as strict DER, is marked by its bytes: those
// verify in one spelling only. An answer that does not read as a WebAuthn
// assertion (another approver's) is marked by its bytes.

// assertionParts is what an answer asserts, as read for its key.
type assertionParts struct {
	RawID    string `json:"rawId"`
	Response struct {
		AuthenticatorData string `json:"authenticatorData"`
		ClientDataJSON    string `json:"clientDataJSON"`
		Signature         string `json:"signature"`
	} `json:"response"`
}

// answerContent returns the parts of answer its key covers, or nil when
// answer does not read as a WebAuthn assertion.
func answerContent(answer []byte) [][]byte {
	// Read at any size, in time linear in it, as the approver read it:
	// a bound here would let an answer padded past it escape its mark.
	var p assertionParts
	if json.Unmarshal(answer, &p) != nil {
		return nil
	}
	var parts [][]byte
	for _, s := range []string{p.RawID, p.Response.AuthenticatorData, p.Response.ClientDataJSON, p.Response.Signature} {
		b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
		if err != nil || len(b) == 0 {
			return nil
		}
		parts = append(parts, b)
	}
	parts[3] = signatureID(parts[3])
	return parts
}

// maxECDSAInt bounds the integers of a signature read as ECDSA: P-521's
// are 521 bits.
const maxECDSAInt = 66

// signatureID returns what names signature sig among its spellings: for
// a strict DER ECDSA signature (r, s), a tag and r; for any other, sig as
// it is.
func signatureID(sig []byte) []byte {
	var rs struct{ R, S *big.Int }
	rest, err := asn1.Unmarshal(sig, &rs)
	if err != nil || len(rest) > 0 || rs.R.Sign() <= 0 || rs.S.Sign() <= 0 {
		return sig
	}
	if der, err := asn1.Marshal(rs); err != nil || !bytes.Equal(der, sig) {
		return sig // not the one encoding a verifier accepts
	}
	r := rs.R.Bytes()
	if len(r) > maxECDSAInt || len(rs.S.Bytes()) > maxECDSAInt {
		return sig
	}
	// Not a DER SEQUENCE: no other signature reads the same.
	return append([]byte{0xec}, r...)
}

// answerID is what the keys of answer's marks cover: a digest of what
// it asserts when it reads as a WebAuthn assertion, of its bytes when
// not. It is read once per answer, whatever marks are looked for.
type answerID [sha256.Size]byte

func identify(answer []byte) answerID {
	h := sha256.New()
	if parts := answerContent(answer); parts != nil {
		h.Write([]byte("assertion\x00"))
		for _, p := range parts {
			h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(p))))
			h.Write(p)
		}
	} else {
		h.Write([]byte("bytes\x00"))
		h.Write(answer)
	}
	var id answerID
	h.Sum(id[:0])
	return id
}

// key is the key of a mark of kind domain on the answer about ticket id.
func (a answerID) key(domain, id string) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(domain))
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write(a[:])
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// answerKey is the key of a mark of kind domain on answer about ticket
// id.
func answerKey(domain, id string, answer []byte) [sha256.Size]byte {
	return identify(answer).key(domain, id)
}
