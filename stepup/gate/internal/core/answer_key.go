package core

import (
	"crypto/elliptic"
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
// base64url padded or not, and a P-256 signature (r, s) verifies as
// (r, n-s) too. An answer is therefore marked by what it asserts: the
// credential, the authenticator data, the client data and the
// signature's r and the lesser of s and n-s. An answer that does not
// read as a WebAuthn assertion (another approver's) is marked by its
// bytes.

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
	parts[3] = lowS(parts[3])
	return parts
}

// p256Order is the order n of P-256's group.
var p256Order = elliptic.P256().Params().N

// lowS returns a DER ECDSA signature over P-256 as r ‖ min(s, n-s), 32
// bytes each, and any other signature as it is.
func lowS(sig []byte) []byte {
	var rs struct{ R, S *big.Int }
	rest, err := asn1.Unmarshal(sig, &rs)
	if err != nil || len(rest) > 0 || rs.R.Sign() <= 0 || rs.S.Sign() <= 0 ||
		rs.R.Cmp(p256Order) >= 0 || rs.S.Cmp(p256Order) >= 0 {
		return sig
	}
	r, s := rs.R, rs.S
	if half := new(big.Int).Rsh(p256Order, 1); s.Cmp(half) > 0 {
		s.Sub(p256Order, s)
	}
	out := make([]byte, 65)
	out[0] = 0xec // not a DER SEQUENCE: no other signature reads the same
	r.FillBytes(out[1:33])
	s.FillBytes(out[33:])
	return out
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
