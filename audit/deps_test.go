package audit_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAuditLinksOnlyCanon: an auditor who checks a chain links canon and
// the standard library, nothing of receipts, figures, stores or the gate:
// every package outside the standard library that audit depends on is
// audit itself or one canon depends on.
func TestAuditLinksOnlyCanon(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	list := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.Fields(string(out))
	}
	canon := list("github.com/agentstepup/asu/canon")
	for _, d := range list("github.com/agentstepup/asu/audit") {
		if d != "github.com/agentstepup/asu/audit" {
			assert.Contains(t, canon, d, "audit links %s, which canon does not", d)
		}
	}
}
