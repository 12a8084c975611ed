package grant_test

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
)

func fuzzSeeds(f *testing.F) [][]byte {
	var specs [][]byte
	for _, g := range []grant.Grant{refundTemplate(), mailTemplate(), oneOf(), nested(), escaped(), noArgs(), wholeArgs(),
		grant.Exact(canon.Sum([]byte("x"))), grant.Plan(canon.Sum([]byte("x")), canon.Sum([]byte("y")))} {
		spec, err := g.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		specs = append(specs, spec)
	}
	return specs
}

// FuzzCovers checks that Covers never panics, and that whatever a template
// covers passes an independent check: every argument lies under exactly
// one rule's path, and each rule's argument is present and satisfies the
// rule as declared.
func FuzzCovers(f *testing.F) {
	args := []string{
		`{"order":"A-17","currency":"EUR","amount":120}`, `{"order":"A-17","currency":"EUR","amount":1200}`,
		`{"to":"finance@example.com","subject":"Q3"}`, `{"to":"a@b.example.org","subject":"","bcc":"x@y.z"}`,
		`{"plan":"pro"}`, `{"items":[{"sku":"X","n":2}],"addr":{"zip":"10115","city":"Berlin"}}`,
		`{"a/b":1,"c~d":2}`, `{}`, `{"b":[1,2],"a":"x"}`, `{"x":[]}`,
		`{"items":{"0":{"sku":"X","n":2}},"addr":{"zip":"10115","city":"Berlin"}}`,
		`{"to":"a%evil.com@example.com","subject":"Q3"}`, `{"to":"evil.com!a@example.org","subject":""}`,
	}
	specs := fuzzSeeds(f)
	for _, s := range specs {
		for _, a := range args {
			f.Add(s, []byte(a))
		}
	}
	f.Fuzz(func(t *testing.T, spec, rawArgs []byte) {
		g, err := grant.Parse(spec)
		if err != nil {
			return
		}
		e := effect("t", string(rawArgs))
		if g.Template != nil {
			e.Tool, e.Audience, e.Principal.User = g.Template.Tool, g.Template.Audience, g.Template.User
		}
		cov, err := grant.Covers(g, e)
		if err != nil {
			if cov.Covered {
				t.Fatal("covered with an error")
			}
			return
		}
		sealed, err := canon.Seal(e)
		if err != nil {
			t.Fatal("Covers accepted an effect Seal refuses")
		}
		if again, err := grant.CoversSealed(g, sealed); err != nil || again != cov {
			t.Fatalf("CoversSealed differs from Covers: %+v %v", again, err)
		}
		if !cov.Covered {
			if cov.Reason == "" {
				t.Fatal("not covered without a reason")
			}
			return
		}
		if g.Template == nil {
			d, err := e.Digest()
			if err != nil || !containsDigest(g.Digests, d) {
				t.Fatal("digest grant covers an effect whose digest it does not hold")
			}
			return
		}
		checkTemplateCoverage(t, g.Template, e.Args)
	})
}

func containsDigest(ds []canon.Digest, d canon.Digest) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}

func checkTemplateCoverage(t *testing.T, tmpl *grant.Template, rawArgs []byte) {
	dec := json.NewDecoder(bytes.NewReader(rawArgs))
	dec.UseNumber()
	var args any
	if err := dec.Decode(&args); err != nil {
		t.Fatalf("covered arguments do not decode: %v", err)
	}
	paths := map[string]bool{}
	for _, r := range tmpl.Args {
		paths[r.Path] = true
	}
	leaves(args, "", func(p string) {
		n := 0
		for q := range paths {
			if q == p || q == "" || strings.HasPrefix(p, q+"/") {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("argument %q lies under %d rules", p, n)
		}
	})
	for _, r := range tmpl.Args {
		v, ok := resolve(args, r.Path)
		if !ok {
			t.Fatalf("rule %q: argument missing", r.Path)
		}
		if !satisfies(r, v) {
			t.Fatalf("rule %q: argument does not satisfy it", r.Path)
		}
	}
}

// leaves calls fn with the path of every scalar and empty container, the
// empty root excepted.
func leaves(v any, path string, fn func(string)) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 && path != "" {
			fn(path)
		}
		for k, x := range v {
			leaves(x, path+"/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"), fn)
		}
	case []any:
		if len(v) == 0 {
			fn(path)
		}
		for i, x := range v {
			leaves(x, path+"/"+strconv.Itoa(i), fn)
		}
	default:
		fn(path)
	}
}

func resolve(v any, pointer string) (any, bool) {
	if pointer == "" {
		return v, true
	}
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			// A token in array-index form names an array element only.
			if n, err := strconv.Atoi(tok); err == nil && n >= 0 && strconv.Itoa(n) == tok {
				return nil, false
			}
			var ok bool
			if v, ok = x[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) || strconv.Itoa(i) != tok {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func satisfies(r grant.Rule, v any) bool {
	canonical := func(x any) string {
		b, err := json.Marshal(x)
		if err != nil {
			return "!"
		}
		c, err := canon.Canonicalize(b)
		if err != nil {
			return "!"
		}
		return string(c)
	}
	switch {
	case r.Equals != nil:
		want, err := canon.Canonicalize(r.Equals)
		return err == nil && canonical(v) == string(want)
	case r.OneOf != nil:
		for _, o := range r.OneOf {
			if want, err := canon.Canonicalize(o); err == nil && canonical(v) == string(want) {
				return true
			}
		}
		return false
	case r.Domains != nil:
		s, ok := v.(string)
		if !ok || strings.Count(s, "@") > 1 || strings.ContainsAny(s[:max(strings.IndexByte(s, '@'), 0)], "%!") {
			return false
		}
		d := strings.ToLower(s[strings.LastIndexByte(s, '@')+1:])
		for _, x := range r.Domains {
			if x == d {
				return true
			}
		}
		return false
	case r.MaxBytes != 0:
		s, ok := v.(string)
		return ok && len(s) <= r.MaxBytes
	}
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	x, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return false
	}
	if r.Min != "" {
		lo, _ := new(big.Rat).SetString(string(r.Min))
		if lo == nil || x.Cmp(lo) < 0 {
			return false
		}
	}
	if r.Max != "" {
		hi, _ := new(big.Rat).SetString(string(r.Max))
		if hi == nil || x.Cmp(hi) > 0 {
			return false
		}
	}
	return true
}

// FuzzParse checks that Parse never panics and that what it accepts is
// exactly what Marshal writes for the grant it returns.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Add([]byte(`{"KIND":"exact","digests":[]}`))
	f.Fuzz(func(t *testing.T, spec []byte) {
		g, err := grant.Parse(spec)
		if err != nil {
			return
		}
		out, err := g.Marshal()
		if err != nil {
			t.Fatalf("parsed grant does not marshal: %v", err)
		}
		want, err := canon.Canonicalize(spec)
		if err != nil || !bytes.Equal(out, want) {
			t.Fatalf("parsed %q, marshals as %q", spec, out)
		}
	})
}
