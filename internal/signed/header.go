package signed

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Bounds of a signature header.
const (
	MaxHeaderBytes = 1024
	MaxSignatures  = 8
	maxUnixDigits  = 12 // up to year 33658
)

// errHeader describes what is wrong with a signature header; the
// verifiers wrap it in their ErrMalformed.
type errHeader string

func (e errHeader) Error() string { return string(e) }

// ParseHeader parses a signature header: comma-separated key=value
// items, exactly one "t" (decimal unix seconds, no sign, no leading
// zeros), one to eight "v1" (64 lowercase or uppercase hex digits), and
// any other keys ignored, so a sender may add schemes later. Spaces around
// items are allowed.
func ParseHeader(h string) (t int64, sigs [][]byte, err error) {
	if len(h) > MaxHeaderBytes {
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
			if len(sigs) == MaxSignatures {
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

// parseUnix parses decimal unix seconds, at most 12 digits.
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
