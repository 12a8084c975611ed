package receipt

import (
	"encoding/json"
	"fmt"
)

// members calls fn with the key and the value of each member of the JSON
// object valid, which must be valid JSON (json.Valid), in order, the value
// as the slice of valid it is written in; it stops at fn's first error. A
// key is given unescaped; one longer than a field name could be is given
// as "", which names no field.
//
// Reading valid JSON in place takes no memory of its own, so a document
// too large or of the wrong shape is refused at the first member that
// shows it, without copying what came before.
func members(valid []byte, fn func(key string, v []byte) error) error {
	s := scan{b: valid}
	s.space()
	if s.at() != '{' {
		return fmt.Errorf("%w: quorum is not a JSON object", ErrMalformed)
	}
	s.i++
	for s.space(); s.at() != '}'; {
		raw := s.value()
		var key string
		if len(raw) <= 64 {
			_ = json.Unmarshal(raw, &key)
		}
		s.space()
		s.i++ // ':'
		s.space()
		if err := fn(key, s.value()); err != nil {
			return err
		}
		if s.space(); s.at() == ',' {
			s.i++
			s.space()
		}
	}
	return nil
}

// elements calls fn with each element of the JSON array valid, as
// [members] calls it with members.
func elements(valid []byte, fn func(elem []byte) error) error {
	s := scan{b: valid, i: 1} // past '['
	for s.space(); s.at() != ']'; {
		if err := fn(s.value()); err != nil {
			return err
		}
		if s.space(); s.at() == ',' {
			s.i++
			s.space()
		}
	}
	return nil
}

// scan walks JSON that json.Valid accepted, finding where its values
// start and end; it checks nothing, so it is used on nothing else.
type scan struct {
	b []byte
	i int
}

func (s *scan) at() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scan) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// value returns the value at s.i and moves past it.
func (s *scan) value() []byte {
	start := s.i
	switch s.at() {
	case '"':
		s.str()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				s.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				break
			}
		}
	default: // a number, true, false or null
		for s.i < len(s.b) && !isDelimiter(s.b[s.i]) {
			s.i++
		}
	}
	return s.b[start:s.i]
}

// str moves past the string at s.i.
func (s *scan) str() {
	for s.i++; s.i < len(s.b) && s.b[s.i] != '"'; s.i++ {
		if s.b[s.i] == '\\' {
			s.i++
		}
	}
	s.i++
}

func isDelimiter(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}
