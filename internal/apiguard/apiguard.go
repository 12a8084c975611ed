// Package apiguard keeps asu's exported Go API from changing by accident.
//
// [Dump] type-checks every public package of a module (everything but
// internal/, examples/, commands and test files) and lists its exported
// API, one line per exported identifier with its type or signature, in the
// line format of the Go project's own api/ files:
//
//	pkg github.com/agentstepup/asu/receipt, func Verify(*Receipt, *TrustedKey, Policy) (*Result, error)
//	pkg github.com/agentstepup/asu/receipt, type Receipt struct, Nonce Bytes
//	pkg github.com/agentstepup/asu/receipt, method (*Receipt) Marshal() ([]uint8, error)
//
// The test of this package holds the lines of both modules (the root and
// adapters) to the snapshot in testdata/api.txt, and the snapshot to
// CHANGELOG.md: see docs/versioning.md.
package apiguard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// listed is the part of `go list -json` output Dump reads.
type listed struct {
	ImportPath string
	Name       string
	Dir        string
	Export     string
	GoFiles    []string
	Standard   bool
	Module     *struct{ Path string }
	Error      *struct{ Err string }
}

// Dump returns the exported API of every public package of the module
// rooted at dir, as sorted lines. It runs `go list -export -deps` in dir,
// so the packages and their dependencies must build.
func Dump(ctx context.Context, dir string) ([]string, error) {
	pkgs, err := list(ctx, dir)
	if err != nil {
		return nil, err
	}
	exports := make(map[string]string, len(pkgs))
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	module, err := modulePath(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("apiguard: no export data for %s", path)
		}
		return os.Open(f)
	})
	var lines []string
	for _, p := range pkgs {
		if !public(p, module) {
			continue
		}
		if p.Error != nil {
			return nil, fmt.Errorf("apiguard: %s: %s", p.ImportPath, p.Error.Err)
		}
		pkg, err := check(fset, imp, p)
		if err != nil {
			return nil, err
		}
		lines = append(lines, describe(pkg)...)
	}
	slices.Sort(lines)
	return slices.Compact(lines), nil
}

// list runs go list in dir.
func list(ctx context.Context, dir string) ([]listed, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-e", "-export", "-deps", "-json=ImportPath,Name,Dir,Export,GoFiles,Standard,Module,Error", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("apiguard: go list in %s: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("apiguard: go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// modulePath reads the module path from dir/go.mod.
func modulePath(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("apiguard: %w", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("apiguard: %s/go.mod: no module line", dir)
}

// public reports whether p is a package of module that others can import
// and that the guard covers.
func public(p listed, module string) bool {
	if p.Standard || p.Module == nil || p.Module.Path != module || p.Name == "main" {
		return false
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
	for part := range strings.SplitSeq(rel, "/") {
		if part == "internal" || part == "examples" || part == "testdata" {
			return false
		}
	}
	return true
}

// check type-checks the package's non-test files.
func check(fset *token.FileSet, imp types.Importer, p listed) (*types.Package, error) {
	files := make([]*ast.File, 0, len(p.GoFiles))
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("apiguard: %w", err)
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: imp}
	pkg, err := conf.Check(p.ImportPath, fset, files, nil)
	if err != nil {
		return nil, fmt.Errorf("apiguard: type-check %s: %w", p.ImportPath, err)
	}
	return pkg, nil
}

// describe lists the exported API of pkg.
func describe(pkg *types.Package) []string {
	q := types.RelativeTo(pkg)
	prefix := "pkg " + pkg.Path() + ", "
	var out []string
	add := func(s string) { out = append(out, prefix+s) }
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			add(fmt.Sprintf("const %s %s = %s", name, types.TypeString(o.Type(), q), o.Val().ExactString()))
		case *types.Var:
			add(fmt.Sprintf("var %s %s", name, types.TypeString(o.Type(), q)))
		case *types.Func:
			add("func " + name + signature(o.Type().(*types.Signature), q))
		case *types.TypeName:
			out = append(out, describeType(prefix, o, q)...)
		}
	}
	return out
}

// describeType lists a named type: its kind, its exported fields or
// methods, and its exported methods.
func describeType(prefix string, o *types.TypeName, q types.Qualifier) []string {
	var out []string
	add := func(s string) { out = append(out, prefix+s) }
	name := o.Name()
	if o.IsAlias() {
		add(fmt.Sprintf("type %s = %s", name, types.TypeString(types.Unalias(o.Type()), q)))
		return out
	}
	named, ok := o.Type().(*types.Named)
	if !ok {
		return out
	}
	head := name + typeParams(named.TypeParams(), q)
	switch u := named.Underlying().(type) {
	case *types.Struct:
		add("type " + head + " struct")
		for f := range u.Fields() {
			if !f.Exported() {
				continue
			}
			if f.Embedded() {
				add(fmt.Sprintf("type %s struct, embedded %s", head, types.TypeString(f.Type(), q)))
			} else {
				add(fmt.Sprintf("type %s struct, %s %s", head, f.Name(), types.TypeString(f.Type(), q)))
			}
		}
	case *types.Interface:
		add("type " + head + " interface")
		for m := range u.ExplicitMethods() {
			if m.Exported() {
				add(fmt.Sprintf("type %s interface, %s%s", head, m.Name(), signature(m.Type().(*types.Signature), q)))
			} else {
				add(fmt.Sprintf("type %s interface, unexported methods", head))
			}
		}
		for e := range u.EmbeddedTypes() {
			add(fmt.Sprintf("type %s interface, embedded %s", head, types.TypeString(e, q)))
		}
	default:
		add(fmt.Sprintf("type %s %s", head, types.TypeString(u, q)))
	}
	for m := range named.Methods() {
		if !m.Exported() {
			continue
		}
		sig := m.Type().(*types.Signature)
		add(fmt.Sprintf("method (%s) %s%s", types.TypeString(sig.Recv().Type(), q), m.Name(), signature(sig, q)))
	}
	return out
}

// signature writes sig without the func keyword, the receiver or the
// parameter names, which are not part of the API.
func signature(sig *types.Signature, q types.Qualifier) string {
	params := make([]string, 0, sig.Params().Len())
	for i, v := range slices.Collect(sig.Params().Variables()) {
		if sig.Variadic() && i == sig.Params().Len()-1 {
			params = append(params, "..."+types.TypeString(v.Type().(*types.Slice).Elem(), q))
			continue
		}
		params = append(params, types.TypeString(v.Type(), q))
	}
	out := typeParams(sig.TypeParams(), q) + "(" + strings.Join(params, ", ") + ")"
	results := make([]string, 0, sig.Results().Len())
	for v := range sig.Results().Variables() {
		results = append(results, types.TypeString(v.Type(), q))
	}
	switch len(results) {
	case 0:
	case 1:
		out += " " + results[0]
	default:
		out += " (" + strings.Join(results, ", ") + ")"
	}
	return out
}

// typeParams writes a type parameter list, or nothing.
func typeParams(tps *types.TypeParamList, q types.Qualifier) string {
	if tps.Len() == 0 {
		return ""
	}
	parts := make([]string, 0, tps.Len())
	for tp := range tps.TypeParams() {
		parts = append(parts, tp.Obj().Name()+" "+types.TypeString(tp.Constraint(), q))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
