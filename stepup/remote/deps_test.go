package remote_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientLinksNoGateStack: a runtime that imports the thin client (and
// the runtime's contract) links none of the approver's, the policy's or
// the stores' stacks.
func TestClientLinksNoGateStack(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	for _, pkg := range []string{".", "../"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		require.NoError(t, err, string(out))
		for _, forbidden := range []string{"go-webauthn", "go-tpm", "fxamacker/cbor", "golang-jwt", "jsonschema",
			"golang.org/x/net", "golang.org/x/text", "modernc.org", "jackc/pgx", "asu/store", "asu/stepup/gate",
			"asu/card", "asu/flood", "asu/grant", "asu/receipt", "go.opentelemetry.io", "prometheus"} {
			for _, dep := range strings.Fields(string(out)) {
				if strings.HasPrefix(dep, "vendor/") {
					continue // the standard library's own vendored copies
				}
				assert.NotContains(t, dep, forbidden, "%s links %s", pkg, dep)
			}
		}
	}
}
