package plug_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The packages outside the standard library that plug may link: its own
// module's canon and stepup, and the RFC 8785 number formatter canon
// checks itself against.
var leafAllowed = map[string]bool{
	"github.com/agentstepup/asu/stepup/plug": true,
	"github.com/agentstepup/asu/canon":       true,
	"github.com/agentstepup/asu/stepup":      true,
	"github.com/gowebpki/jcs":                true,
}

// TestPlugIsALeaf holds the package doc's promise: a part's author who
// imports plug links the standard library, canon and stepup, and nothing
// else of asu or of any other module.
func TestPlugIsALeaf(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the dependencies with")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".").Output()
	require.NoError(t, err)
	var deps []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, std, ok := strings.Cut(sc.Text(), " ")
		require.True(t, ok, "line %q", sc.Text())
		deps = append(deps, path)
		if std == "true" {
			continue
		}
		assert.True(t, leafAllowed[path], "plug depends on %s", path)
	}
	require.NoError(t, sc.Err())
	assert.Contains(t, deps, "github.com/agentstepup/asu/canon", "the listing lists plug's dependencies")
}
