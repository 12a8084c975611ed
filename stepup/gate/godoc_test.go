package gate_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoDocShowsOneTypeInOnePlace holds the package to one type per
// meaning, documented where it is defined: no declaration of the package
// is an alias, and nothing go doc shows names an internal package (an
// option's setting, a constant's value, a field's type), so a reader
// never meets a name they cannot look up.
func TestGoDocShowsOneTypeInOnePlace(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	internal := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		require.Equal(t, "gate", f.Name.Name, name)
		for _, im := range f.Imports {
			path, err := strconv.Unquote(im.Path.Value)
			require.NoError(t, err)
			if !strings.Contains(path, "/internal/") {
				continue
			}
			local := path[strings.LastIndex(path, "/")+1:]
			if im.Name != nil {
				local = im.Name.Name
			}
			internal[local] = true
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				assert.False(t, ts.Assign.IsValid(), "%s: type %s is an alias", fset.Position(ts.Pos()), ts.Name.Name)
			}
		}
	}
	require.NotEmpty(t, internal, "the gate is built on internal packages")

	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run go doc with")
	}
	out, err := exec.Command(goBin, "doc", "-all", ".").Output()
	require.NoError(t, err)
	doc := string(out)
	require.Contains(t, doc, "func New(")
	names := make([]string, 0, len(internal))
	for n := range internal {
		names = append(names, regexp.QuoteMeta(n))
	}
	named := regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\.[A-Z]\w*`)
	for _, m := range named.FindAllString(doc, -1) {
		t.Errorf("go doc shows the internal name %s", m)
	}
	assert.NotRegexp(t, `(?m)^type \w+ = `, doc, "go doc shows an alias")
	assert.NotContains(t, doc, "/internal/")
}
