package httpexec

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentstepup/asu/canon"
)

// Header names of a request. See the package documentation.
const (
	// HeaderSignature carries "t=<unix seconds>,v1=<hex HMAC-SHA256>".
	HeaderSignature = "Asu-Signature"
	// HeaderIdempotencyKey carries the idempotency key, the same at every
	// attempt and every re-run of one approval.
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderTool carries the tool's catalog name.
	HeaderTool = "Asu-Tool"
)

// SignatureLabel starts the canonical string every signature covers.
const SignatureLabel = "asu/v1/exec"

// MinSecretBytes is the shortest shared secret an [Executor] or [Verify]
// accepts: 32 bytes, as many as the HMAC's output.
const MinSecretBytes = 32

// Bounds on what a verifier parses, so checking a request costs little
// whatever a sender puts there.
const maxNameBytes = 256 // a tool name or an idempotency key

// message is the JSON body: the effect exactly as stored (canonical), its
// digest, the ticket and the idempotency key. Its members are written in
// this order, and the effect's bytes are canon's canonical form, so a
// tool re-hashing "effect" gets "digest".
type message struct {
	Digest         string          `json:"digest"`
	Effect         json.RawMessage `json:"effect"`
	IdempotencyKey string          `json:"idempotency_key"`
	Ticket         string          `json:"ticket"`
}

// encode writes the body of sealed effect s under key, for ticket: the
// effect's canonical bytes as they are (encoding/json would escape <, >
// and & in them, and the tool's hash of them would no longer be the
// digest).
func encode(s canon.Sealed, key, ticket string) []byte {
	return encodeParts(s.Digest().String(), s.Bytes(), key, ticket)
}

// encodeParts writes the body of members as they are.
func encodeParts(digest string, effect []byte, key, ticket string) []byte {
	b := make([]byte, 0, len(effect)+len(key)+len(ticket)+160)
	b = append(b, `{"digest":`...)
	b = appendString(b, digest)
	b = append(b, `,"effect":`...)
	b = append(b, effect...)
	b = append(b, `,"idempotency_key":`...)
	b = appendString(b, key)
	b = append(b, `,"ticket":`...)
	b = appendString(b, ticket)
	return append(b, '}')
}

// appendString appends s as a JSON string, escaping no more than it must.
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// CanonicalString is what a request's signature covers, one item a line:
//
//	asu/v1/exec
//	<t: unix seconds, decimal>
//	<tool>
//	<idempotency key>
//	<hex SHA-256 of the body>
//
// joined by "\n", no trailing newline.
func CanonicalString(t int64, tool, key string, body []byte) string {
	sum := sha256.Sum256(body)
	return strings.Join([]string{SignatureLabel, strconv.FormatInt(t, 10), tool, key, hex.EncodeToString(sum[:])}, "\n")
}

// sign returns HMAC-SHA256(secret, CanonicalString(...)).
func sign(secret []byte, t int64, tool, key string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(CanonicalString(t, tool, key, body)))
	return m.Sum(nil)
}

// formatSignature is the signature header for timestamp t and MACs sigs.
func formatSignature(t int64, sigs ...[]byte) string {
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(strconv.FormatInt(t, 10))
	for _, s := range sigs {
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(s))
	}
	return b.String()
}

// validName reports whether s may stand on a line of the canonical
// string: 1 to 256 printable ASCII bytes, so no line break can shift one
// item into the next.
func validName(s string) bool {
	if s == "" || len(s) > maxNameBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}
