// Package jsonread reads JSON already in canonical form (RFC 8785, as
// canon emits it) into a tree that keeps the members' canonical order.
package jsonread

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Kinds of value, the JSON types; the card model uses the same names.
const (
	String = "string"
	Number = "number"
	Bool   = "bool"
	Null   = "null"
	Object = "object"
	Array  = "array"
)

// Value is a parsed JSON value of canonical (RFC 8785) text.
type Value struct {
	Kind    string
	Text    string // decoded string, number text, or literal
	Members []Member
	Items   []Value
}

// Member is a member of an object.
type Member struct {
	Key string
	Val Value
}

// Member returns the value of the object member named key, or the zero
// value.
func (v Value) Member(key string) Value {
	for _, m := range v.Members {
		if m.Key == key {
			return m.Val
		}
	}
	return Value{}
}

var errNotCanonical = errors.New("card: arguments are not canonical JSON")

// Parse parses JSON already in canonical form (as canon emits it):
// no white space, members in canonical order. It keeps that order.
func Parse(b []byte) (Value, error) {
	p := cparser{b: b, s: string(b)}
	v, err := p.value()
	if err != nil {
		return Value{}, err
	}
	if p.i != len(b) {
		return Value{}, errNotCanonical
	}
	return v, nil
}

// cparser reads b; s is b as one string, which the strings read share.
// The members and items of the objects and arrays being read wait on a
// stack, so each object or array gets a slice of exactly its size.
type cparser struct {
	b     []byte
	s     string
	i     int
	mems  []Member
	items []Value
}

func (p *cparser) value() (Value, error) {
	if p.i >= len(p.b) {
		return Value{}, errNotCanonical
	}
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		v := Value{Kind: Object}
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return v, nil
		}
		base := len(p.mems)
		for {
			k, err := p.str()
			if err != nil {
				return Value{}, err
			}
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return Value{}, errNotCanonical
			}
			p.i++
			m, err := p.value()
			if err != nil {
				return Value{}, err
			}
			p.mems = append(p.mems, Member{Key: k, Val: m})
			if p.i >= len(p.b) {
				return Value{}, errNotCanonical
			}
			p.i++
			switch p.b[p.i-1] {
			case ',':
			case '}':
				v.Members = append([]Member(nil), p.mems[base:]...)
				clear(p.mems[base:])
				p.mems = p.mems[:base]
				return v, nil
			default:
				return Value{}, errNotCanonical
			}
		}
	case c == '[':
		p.i++
		v := Value{Kind: Array}
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return v, nil
		}
		base := len(p.items)
		for {
			m, err := p.value()
			if err != nil {
				return Value{}, err
			}
			p.items = append(p.items, m)
			if p.i >= len(p.b) {
				return Value{}, errNotCanonical
			}
			p.i++
			switch p.b[p.i-1] {
			case ',':
			case ']':
				v.Items = append([]Value(nil), p.items[base:]...)
				clear(p.items[base:])
				p.items = p.items[:base]
				return v, nil
			default:
				return Value{}, errNotCanonical
			}
		}
	case c == '"':
		s, err := p.str()
		return Value{Kind: String, Text: s}, err
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range [...]string{"true", "false", "null"} {
			if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
				p.i += len(lit)
				k := Bool
				if lit == "null" {
					k = Null
				}
				return Value{Kind: k, Text: lit}, nil
			}
		}
		return Value{}, errNotCanonical
	default:
		start := p.i
		for p.i < len(p.b) {
			c := p.b[p.i]
			if c == ',' || c == '}' || c == ']' {
				break
			}
			p.i++
		}
		return Value{Kind: Number, Text: p.s[start:p.i]}, nil
	}
}

func (p *cparser) str() (string, error) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", errNotCanonical
	}
	p.i++
	start := p.i
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '"':
			s := p.s[start:p.i]
			p.i++
			return s, nil
		case '\\':
			return p.escaped(start)
		}
		p.i++
	}
	return "", errNotCanonical
}

func (p *cparser) escaped(start int) (string, error) {
	out := append([]byte(nil), p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), nil
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			return "", errNotCanonical
		}
		esc := p.b[p.i+1]
		p.i += 2
		switch esc {
		case '"', '\\', '/':
			out = append(out, esc)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if p.i+4 > len(p.b) {
				return "", errNotCanonical
			}
			n, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 16)
			if err != nil {
				return "", errNotCanonical
			}
			p.i += 4
			r := rune(n)
			if utf16.IsSurrogate(r) {
				return "", errNotCanonical // canon never emits these
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", errNotCanonical
		}
	}
	return "", errNotCanonical
}
