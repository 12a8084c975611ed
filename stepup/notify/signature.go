package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"github.com/agentstepup/asu/internal/signed"
	"strconv"
	"strings"
)

// Header names of a delivery. See the package documentation for their
// format.
const (
	// HeaderSignature carries "t=<unix seconds>,v1=<hex HMAC-SHA256>".
	HeaderSignature = "Asu-Signature"
	// HeaderDelivery carries the delivery id, the same for every attempt
	// of one delivery and equal to the body's "delivery" member.
	HeaderDelivery = "Asu-Delivery"
)

// MinSecretBytes is the shortest shared secret a [Webhook] or [Verify]
// accepts: 32 bytes, as many as the HMAC's output.
const MinSecretBytes = 32

// ErrSecret means the shared secret is shorter than [MinSecretBytes].
var ErrSecret = signed.ErrSecret

// Bounds on the signature header, so parsing it costs little whatever a
// sender puts there.
const (
	maxHeaderBytes = signed.MaxHeaderBytes
	maxSignatures  = signed.MaxSignatures
)

// sign returns HMAC-SHA256(secret, "<t>.<body>").
func sign(secret []byte, t int64, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(strconv.AppendInt(nil, t, 10))
	m.Write([]byte{'.'})
	m.Write(body)
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

// parseSignature parses a signature header (see [signed.ParseHeader]).
func parseSignature(h string) (int64, [][]byte, error) { return signed.ParseHeader(h) }
