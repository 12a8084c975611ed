package receipt_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

// FuzzParseCOSEKey: a key file's content never panics the parser, and an
// accepted key is one of the algorithms a receipt may use.
func FuzzParseCOSEKey(f *testing.F) {
	for _, alg := range receipttest.Algorithms() {
		s, err := receipttest.New(alg, "user:dana")
		require.NoError(f, err)
		f.Add(s.COSEKey())
	}
	f.Fuzz(func(t *testing.T, cose []byte) {
		k, err := receipt.ParseCOSEKey(cose)
		if err != nil {
			return
		}
		assert.NotNil(t, k)
	})
}
