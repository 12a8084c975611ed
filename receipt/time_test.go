package receipt_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// endOf9999 is the last second a time.Time writes in RFC 3339.
var endOf9999 = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()

// TestReceiptTimesEndWithYear9999: a receipt time (the signed expires_at,
// the unsigned approved_at) from 1970 to the end of year 9999 is read,
// and the Result of its receipt encodes as JSON; a later one is refused by
// Parse and fails Verify's format check, and its Result still encodes, so
// a verifier reporting it says "invalid" rather than failing to write.
func TestReceiptTimesEndWithYear9999(t *testing.T) {
	s := newSigner(t, receipttest.EdDSA)
	fields := map[string]func(*receipt.Receipt) *int64{
		"expires_at":  func(r *receipt.Receipt) *int64 { return &r.ExpiresAt },
		"approved_at": func(r *receipt.Receipt) *int64 { return &r.ApprovedAt },
	}
	for name, field := range fields {
		for _, at := range []int64{0, 1, endOf9999 - 1, endOf9999} {
			t.Run(fmt.Sprintf("%s=%d", name, at), func(t *testing.T) {
				r := sign(t, s)
				*field(r) = at
				r = withClientData(t, s, r, `"type":"webauthn.get"`, `"challenge":%[1]s`, `"origin":"`+receipttest.Origin+`"`)
				raw, err := r.Marshal()
				require.NoError(t, err)
				parsed, err := receipt.Parse(raw)
				require.NoError(t, err)
				res, err := receipt.Verify(parsed, s.Trusted(), s.Policy())
				require.NoError(t, err)
				_, err = json.Marshal(res)
				assert.NoError(t, err)
			})
		}
		for _, at := range []int64{endOf9999 + 1, endOf9999 + 86400, 1 << 40, math.MaxInt64, -1, math.MinInt64} {
			t.Run(fmt.Sprintf("%s=%d", name, at), func(t *testing.T) {
				r := sign(t, s)
				*field(r) = at
				r = withClientData(t, s, r, `"type":"webauthn.get"`, `"challenge":%[1]s`, `"origin":"`+receipttest.Origin+`"`)
				raw, err := r.Marshal()
				require.NoError(t, err)
				_, err = receipt.Parse(raw)
				if at > -1<<53 && at < 1<<53 {
					assert.ErrorIs(t, err, receipt.ErrFormat)
				} else {
					assert.ErrorIs(t, err, receipt.ErrMalformed, "canon refuses a number JSON cannot carry exactly")
				}
				res, err := receipt.Verify(r, s.Trusted(), s.Policy())
				assert.ErrorIs(t, err, receipt.ErrFormat)
				require.NotNil(t, res)
				_, err = json.Marshal(res)
				assert.NoError(t, err, "the Result of a refused receipt encodes")
			})
		}
	}
}
