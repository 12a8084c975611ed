package receipt_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReceiptLinksNothingOfTheGate: a receipt verifies with nothing else
// of asu linked but canon. go list -deps names no audit, figures, store,
// gate or other asu package, and of other modules only go-webauthn (whose
// COSE code verifies the signature) and what it needs.
func TestReceiptLinksNothingOfTheGate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/agentstepup/asu/receipt").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/agentstepup/asu/receipt")
	for _, d := range deps {
		if rest, ok := strings.CutPrefix(d, "github.com/agentstepup/asu/"); ok {
			assert.Contains(t, []string{"receipt", "canon"}, strings.SplitN(rest, "/", 2)[0], "receipt links %s", d)
			assert.NotRegexp(t, `(^|/)(audit|figures|store|gate|stepup|flood|card|grant)(/|$)`, rest, "receipt links %s", d)
		}
	}
}
