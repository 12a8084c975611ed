package asu_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/notify"
	"github.com/agentstepup/asu/stepup/passkey"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/store"
)

// distinctMeanings are the sentinel names more than one package defines,
// each for a different thing: what is malformed, invalid, unavailable or
// closed is the package's own.
var distinctMeanings = map[string]string{
	"ErrMalformed":   "a receipt, an audit export, a model's answer, a webhook delivery",
	"ErrInvalid":     "a store record, an HTTP request, simulation parameters, a key ring",
	"ErrUnavailable": "flood admission, the grant store, the HTTP service",
	"ErrClosed":      "a store, a webhook notifier",
}

// TestOneSentinelPerMeaning: no sentinel name is created with errors.New
// in two packages, but for the names of distinctMeanings. A package that
// refuses for a reason another package already names uses that sentinel.
func TestOneSentinelPerMeaning(t *testing.T) {
	defined := map[string][]string{} // sentinel name -> packages creating it
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, name := range createdSentinels(f) {
			if dir := filepath.Dir(path); !slices.Contains(defined[name], dir) {
				defined[name] = append(defined[name], dir)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, defined["ErrNotFound"], "the scan finds the sentinels")
	for name, pkgs := range defined {
		if _, ok := distinctMeanings[name]; ok || len(pkgs) == 1 {
			continue
		}
		t.Errorf("%s is created in %d packages (%s): define it once and alias it", name, len(pkgs), strings.Join(pkgs, ", "))
	}
}

// createdSentinels returns the names of package-level variables named
// Err* whose value is an errors.New call.
func createdSentinels(f *ast.File) []string {
	var out []string
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Err") || i >= len(vs.Values) {
					continue
				}
				if call, ok := vs.Values[i].(*ast.CallExpr); ok {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "New" {
						if id, ok := sel.X.(*ast.Ident); ok && id.Name == "errors" {
							out = append(out, name.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// TestSharedSentinelsAreOneValue: the names that say the same thing in
// several packages are one value, so errors.Is holds whichever a caller
// tests.
func TestSharedSentinelsAreOneValue(t *testing.T) {
	for _, same := range [][]error{
		{stepup.ErrNotFound, store.ErrNotFound, grant.ErrNotFound},
		{stepup.ErrExpired, store.ErrExpired, grant.ErrExpired},
		{stepup.ErrRevoked, store.ErrRevoked, grant.ErrRevoked},
		{stepup.ErrConsumed, store.ErrConsumed},
		{stepup.ErrNotApproved, store.ErrNotApproved},
		{stepup.ErrResolved, store.ErrResolved},
		{store.ErrGrantUsedUp, grant.ErrUsedUp},
		{store.ErrCounter, passkey.ErrCounter},
		{canon.ErrTooLarge, store.ErrTooLarge, remote.ErrTooLarge, notify.ErrTooLarge},
	} {
		for _, e := range same[1:] {
			assert.True(t, e == same[0], "%v is %v", e, same[0])
		}
	}
}
