package grant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// node is a JSON value with its object members in document order. Numbers
// keep their text: parsed from canonical JSON, equal texts are equal
// decimals and the other way round.
type node struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys  []string
	elems []*node // object member values (by keys) or array elements
	text  string  // string value or number text
	b     bool
}

// parseTree parses one canonical JSON value, which canon has already
// bounded in size and depth.
func parseTree(canonical []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(canonical))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the value")
	}
	return n, nil
}

func parseNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			n := &node{kind: 'o'}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := k.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string")
				}
				child, err := parseNode(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, key)
				n.elems = append(n.elems, child)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &node{kind: 'a'}
			for dec.More() {
				child, err := parseNode(dec)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, child)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, fmt.Errorf("unexpected delimiter")
	case string:
		return &node{kind: 's', text: v}, nil
	case json.Number:
		return &node{kind: 'n', text: string(v)}, nil
	case bool:
		return &node{kind: 'b', b: v}, nil
	case nil:
		return &node{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("unexpected token")
}

// equal reports whether a and b are the same JSON value. Both come from
// canonical JSON, so keys are unique and numbers canonical.
func equal(a, b *node) bool {
	if a.kind != b.kind || a.text != b.text || a.b != b.b || len(a.elems) != len(b.elems) {
		return false
	}
	if a.kind == 'o' {
		// Canonical objects are sorted the same way, so members line up.
		for i := range a.keys {
			if a.keys[i] != b.keys[i] {
				return false
			}
		}
	}
	for i := range a.elems {
		if !equal(a.elems[i], b.elems[i]) {
			return false
		}
	}
	return true
}

// child returns the pointer of a member or element below path.
func child(path string, n *node, i int) string {
	if n.kind == 'a' {
		return path + "/" + strconv.Itoa(i)
	}
	return path + "/" + escapeToken(n.keys[i])
}

var tokenEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// escapeToken escapes one reference token (RFC 6901 section 3).
func escapeToken(s string) string { return tokenEscaper.Replace(s) }

// validPointer reports whether p is a JSON pointer: empty, or "/"-prefixed
// tokens in which "~" is always followed by "0" or "1".
func validPointer(p string) bool {
	if p == "" {
		return true
	}
	if p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return false
		}
	}
	return true
}

// ancestors calls fn with every proper ancestor pointer of p, "" first.
func ancestors(p string, fn func(string) bool) bool {
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && !fn(p[:i]) {
			return false
		}
	}
	return true
}
