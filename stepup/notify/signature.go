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
	maxHeaderBytes = 1024
	maxSignatures  = 8
	maxUnixDigits  = 12 // up to year 33658
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

// errHeader describes what is wrong with a signature header; Verify wraps
// it in ErrMalformed.
type errHeader string

func (e errHeader) Error() string { return string(e) }

// parseSignature parses a signature header: comma-separated key=value
// items, exactly one "t" (decimal unix seconds, no sign, no leading
// zeros), one to eight "v1" (64 lowercase or uppercase hex digits), and
// any other keys ignored, so a sender may add schemes later. Spaces around
// items are allowed.
func parseSignature(h string) (t int64, sigs [][]byte, err error) {
	if len(h) > maxHeaderBytes {
		return 0, nil, errHeader("signature header too long")
	}
	haveT := false
	for item := range strings.SplitSeq(h, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return 0, nil, errHeader("signature header item is not key=value")
		}
		switch k {
		case "t":
			if haveT {
				return 0, nil, errHeader("signature header has two timestamps")
			}
			if t, err = parseUnix(v); err != nil {
				return 0, nil, err
			}
			haveT = true
		case "v1":
			if len(sigs) == maxSignatures {
				return 0, nil, errHeader("signature header has too many signatures")
			}
			if len(v) != 2*sha256.Size {
				return 0, nil, errHeader("v1 signature is not 64 hex digits")
			}
			s, err := hex.DecodeString(v)
			if err != nil {
				return 0, nil, errHeader("v1 signature is not 64 hex digits")
			}
			sigs = append(sigs, s)
		}
	}
	if !haveT {
		return 0, nil, errHeader("signature header has no timestamp")
	}
	if len(sigs) == 0 {
		return 0, nil, errHeader("signature header has no v1 signature")
	}
	return t, sigs, nil
}

func parseUnix(v string) (int64, error) {
	if v == "" || len(v) > maxUnixDigits || (v[0] == '0' && len(v) > 1) {
		return 0, errHeader("timestamp is not unix seconds")
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, errHeader("timestamp is not unix seconds")
		}
	}
	return strconv.ParseInt(v, 10, 64)
}
