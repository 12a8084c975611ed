package card

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// value is a parsed JSON value of canonical (RFC 8785) text.
type value struct {
	kind    string
	text    string // decoded string, number text, or literal
	members []kv
	items   []value
}

type kv struct {
	key string
	val value
}

// member returns the value of the object member named key, or the zero
// value.
func (v value) member(key string) value {
	for _, m := range v.members {
		if m.key == key {
			return m.val
		}
	}
	return value{}
}

var errNotCanonical = errors.New("card: arguments are not canonical JSON")

// parseCanonical parses JSON already in canonical form (as canon emits it):
// no white space, members in canonical order. It keeps that order.
func parseCanonical(b []byte) (value, error) {
	p := cparser{b: b}
	v, err := p.value()
	if err != nil {
		return value{}, err
	}
	if p.i != len(b) {
		return value{}, errNotCanonical
	}
	return v, nil
}

type cparser struct {
	b []byte
	i int
}

func (p *cparser) value() (value, error) {
	if p.i >= len(p.b) {
		return value{}, errNotCanonical
	}
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		v := value{kind: kindObject}
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return v, nil
		}
		for {
			k, err := p.str()
			if err != nil {
				return value{}, err
			}
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return value{}, errNotCanonical
			}
			p.i++
			m, err := p.value()
			if err != nil {
				return value{}, err
			}
			v.members = append(v.members, kv{key: k, val: m})
			if p.i >= len(p.b) {
				return value{}, errNotCanonical
			}
			p.i++
			switch p.b[p.i-1] {
			case ',':
			case '}':
				return v, nil
			default:
				return value{}, errNotCanonical
			}
		}
	case c == '[':
		p.i++
		v := value{kind: kindArray}
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return v, nil
		}
		for {
			m, err := p.value()
			if err != nil {
				return value{}, err
			}
			v.items = append(v.items, m)
			if p.i >= len(p.b) {
				return value{}, errNotCanonical
			}
			p.i++
			switch p.b[p.i-1] {
			case ',':
			case ']':
				return v, nil
			default:
				return value{}, errNotCanonical
			}
		}
	case c == '"':
		s, err := p.str()
		return value{kind: kindString, text: s}, err
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range [...]string{"true", "false", "null"} {
			if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
				p.i += len(lit)
				k := kindBool
				if lit == "null" {
					k = kindNull
				}
				return value{kind: k, text: lit}, nil
			}
		}
		return value{}, errNotCanonical
	default:
		start := p.i
		for p.i < len(p.b) {
			c := p.b[p.i]
			if c == ',' || c == '}' || c == ']' {
				break
			}
			p.i++
		}
		return value{kind: kindNumber, text: string(p.b[start:p.i])}, nil
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
			s := string(p.b[start:p.i])
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
