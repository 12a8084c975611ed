package catalog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/catalog"
)

// node is a JSON value whose objects keep their members' order, so a
// mutated file is the valid one with exactly one change.
type node struct {
	obj   []member // object (when isObj)
	arr   []*node  // array (when isArr)
	raw   json.RawMessage
	isObj bool
	isArr bool
}

type member struct {
	key string
	val *node
}

func readNode(t testing.TB, dec *json.Decoder) *node {
	tok, err := dec.Token()
	require.NoError(t, err)
	switch tok {
	case json.Delim('{'):
		n := &node{isObj: true}
		for dec.More() {
			k, err := dec.Token()
			require.NoError(t, err)
			n.obj = append(n.obj, member{k.(string), readNode(t, dec)})
		}
		_, err = dec.Token()
		require.NoError(t, err)
		return n
	case json.Delim('['):
		n := &node{isArr: true}
		for dec.More() {
			n.arr = append(n.arr, readNode(t, dec))
		}
		_, err = dec.Token()
		require.NoError(t, err)
		return n
	}
	raw, err := json.Marshal(tok)
	require.NoError(t, err)
	return &node{raw: raw}
}

// write prints n one value a line, as a person would write a catalog.
func (n *node) write(b *bytes.Buffer, indent string) {
	switch {
	case n.isObj:
		b.WriteString("{")
		for i, m := range n.obj {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n" + indent + "  " + strconv.Quote(m.key) + ": ")
			m.val.write(b, indent+"  ")
		}
		b.WriteString("\n" + indent + "}")
	case n.isArr:
		b.WriteString("[")
		for i, e := range n.arr {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n" + indent + "  ")
			e.write(b, indent+"  ")
		}
		b.WriteString("\n" + indent + "]")
	default:
		b.Write(n.raw)
	}
}

// paths lists the pointer of every value below n.
func (n *node) paths(prefix string, out []string) []string {
	for _, m := range n.obj {
		p := prefix + "/" + strings.ReplaceAll(strings.ReplaceAll(m.key, "~", "~0"), "/", "~1")
		out = m.val.paths(p, append(out, p))
	}
	for i, e := range n.arr {
		p := prefix + "/" + strconv.Itoa(i)
		out = e.paths(p, append(out, p))
	}
	return out
}

// mutate returns a copy of n in which the value at ptr is replaced by
// with, or removed when with is nil.
func (n *node) mutate(ptr []string, with *node) *node {
	c := *n
	if len(ptr) == 0 {
		return with
	}
	key := strings.ReplaceAll(strings.ReplaceAll(ptr[0], "~1", "/"), "~0", "~")
	switch {
	case n.isObj:
		c.obj = slices.Clone(n.obj)
		for i, m := range c.obj {
			if m.key != key {
				continue
			}
			if v := m.val.mutate(ptr[1:], with); v != nil || len(ptr) > 1 {
				c.obj[i].val = v
			} else {
				c.obj = slices.Delete(c.obj, i, i+1)
			}
			break
		}
	case n.isArr:
		i, _ := strconv.Atoi(key)
		c.arr = slices.Clone(n.arr)
		if v := n.arr[i].mutate(ptr[1:], with); v != nil || len(ptr) > 1 {
			c.arr[i] = v
		} else {
			c.arr = slices.Delete(c.arr, i, i+1)
		}
	}
	return &c
}

// at is the value at the pointer segments segs.
func (n *node) at(segs []string) *node {
	for _, s := range segs {
		if n.isObj {
			key := strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
			for _, m := range n.obj {
				if m.key == key {
					n = m.val
					break
				}
			}
			continue
		}
		i, _ := strconv.Atoi(s)
		n = n.arr[i]
	}
	return n
}

func (n *node) kind() string {
	switch {
	case n.isObj:
		return "object"
	case n.isArr:
		return "array"
	case string(n.raw) == "true" || string(n.raw) == "false":
		return "bool"
	case string(n.raw) == "null":
		return "null"
	case n.raw[0] == '"':
		return "string"
	}
	return "number"
}

// related reports whether one pointer is the other or lies within it.
func related(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// TestMutations removes every value of a valid catalog that uses every
// field, one at a time, and retypes each to every other JSON type. No
// mutation panics; every refusal is an *Error naming a field and its
// line; every retype outside an argument schema is refused, naming the
// retyped field (or a value within or around it).
func TestMutations(t *testing.T) {
	raw, err := os.ReadFile("testdata/full.json")
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	root := readNode(t, dec)
	replacements := []*node{{raw: json.RawMessage(`"x"`)}, {raw: json.RawMessage(`7`)}, {raw: json.RawMessage(`true`)},
		{raw: json.RawMessage(`null`)}, {isObj: true}, {isArr: true}}
	required := map[string]bool{"name": true, "class": true, "tools": true, "members": true, "url": true}
	parsed, refused := 0, 0
	for _, ptr := range root.paths("", nil) {
		segs := strings.Split(ptr[1:], "/")
		inSchema := slices.Contains(segs, "schema")
		check := func(t *testing.T, m *node, mustRefuse bool) {
			var b bytes.Buffer
			m.write(&b, "")
			_, err := catalog.Parse(bytes.NewReader(b.Bytes()), &catalog.Options{File: "m.json"})
			parsed++
			if err == nil {
				if mustRefuse {
					t.Fatalf("accepted:\n%s", b.String())
				}
				return
			}
			refused++
			var ce *catalog.Error
			if !errors.As(err, &ce) || !errors.Is(err, catalog.ErrCatalog) {
				t.Fatalf("refusal without an *Error: %v", err)
			}
			if ce.Pointer == "" || ce.Line <= 0 || ce.File != "m.json" {
				t.Fatalf("refusal names no field or line: %v\n%s", err, b.String())
			}
		}
		t.Run("remove"+ptr, func(t *testing.T) {
			check(t, root.mutate(segs, nil), required[segs[len(segs)-1]] && !inSchema)
		})
		cur := root.at(segs)
		for _, r := range replacements {
			if cur.kind() == r.kind() {
				continue
			}
			t.Run("retype"+ptr+"/"+r.kind(), func(t *testing.T) {
				m := root.mutate(segs, r)
				check(t, m, !inSchema)
				if inSchema {
					return
				}
				var b bytes.Buffer
				m.write(&b, "")
				_, err := catalog.Parse(bytes.NewReader(b.Bytes()), nil)
				var ce *catalog.Error
				require.ErrorAs(t, err, &ce)
				if !related(ce.Pointer, ptr) {
					t.Fatalf("retyped %s, refusal names %s: %v", ptr, ce.Pointer, err)
				}
			})
		}
	}
	t.Logf("%d mutations parsed, %d refused", parsed, refused)
	// The original is untouched by all of it.
	var b bytes.Buffer
	root.write(&b, "")
	_, err = catalog.Parse(bytes.NewReader(b.Bytes()), nil)
	require.NoError(t, err)
}
