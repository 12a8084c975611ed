package receipt

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"github.com/agentstepup/asu/canon"
)

// scanEffect decodes the canonical JSON of an effect, as canon.Canonicalize
// returns it, and reports whether it is exactly what canon.Effect.Canonical
// produces for the decoded effect: every field present, in canonical key
// order, lists as lists, arguments an object, content hashes in lowercase
// hex and sizes as integers. It is the fast equivalent of decoding with
// encoding/json and comparing the re-encoded form, which the tests use as
// its oracle, and it runs on every Verify.
func scanEffect(c []byte) (canon.Effect, bool) {
	s := effectScanner{b: c, ok: true}
	var e canon.Effect
	s.lit(`{"args":`)
	e.Args = s.object()
	s.lit(`,"audience":`)
	e.Audience = s.str()
	s.lit(`,"policy_version":`)
	e.PolicyVersion = s.str()
	s.lit(`,"principal":{"agent":`)
	e.Principal.Agent = s.str()
	s.lit(`,"delegations":[`)
	e.Principal.Delegations = []string{}
	for s.ok && s.more(']') {
		e.Principal.Delegations = append(e.Principal.Delegations, s.str())
	}
	s.lit(`,"user":`)
	e.Principal.User = s.str()
	s.lit(`},"refs":[`)
	e.Refs = []canon.Ref{}
	for s.ok && s.more(']') {
		e.Refs = append(e.Refs, s.ref())
	}
	s.lit(`,"step":`)
	e.Step = s.str()
	s.lit(`,"task":`)
	e.Task = s.str()
	s.lit(`,"tool":`)
	e.Tool = s.str()
	s.lit(`}`)
	if !s.ok || s.i != len(s.b) {
		return canon.Effect{}, false
	}
	return e, true
}

// effectScanner reads canonical JSON; ok turns false at the first
// deviation and stays false.
type effectScanner struct {
	b  []byte
	i  int
	ok bool
}

func (s *effectScanner) lit(l string) {
	if !s.ok || !bytes.HasPrefix(s.b[s.i:], []byte(l)) {
		s.ok = false
		return
	}
	s.i += len(l)
}

// more reports whether a list continues: it consumes the closing byte and
// returns false at the end, and consumes the comma between items.
func (s *effectScanner) more(closing byte) bool {
	if s.i >= len(s.b) {
		s.ok = false
		return false
	}
	switch c := s.b[s.i]; {
	case c == closing:
		s.i++
		return false
	case c == ',' && s.b[s.i-1] != '[':
		s.i++
		return true
	case s.b[s.i-1] == '[':
		return true
	}
	s.ok = false
	return false
}

// str reads a string; canonical JSON escapes only quotes, backslashes and
// control characters, so most strings are their own bytes.
func (s *effectScanner) str() string {
	if !s.ok || s.i >= len(s.b) || s.b[s.i] != '"' {
		s.ok = false
		return ""
	}
	start := s.i
	escaped := false
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			escaped = true
			s.i++
		case '"':
			s.i++
			if !escaped {
				return string(s.b[start+1 : s.i-1])
			}
			var out string
			if err := json.Unmarshal(s.b[start:s.i], &out); err != nil {
				s.ok = false
			}
			return out
		}
	}
	s.ok = false
	return ""
}

// object returns a copy of the JSON object at the current position.
func (s *effectScanner) object() json.RawMessage {
	if !s.ok || s.i >= len(s.b) || s.b[s.i] != '{' {
		s.ok = false
		return nil
	}
	start, depth := s.i, 0
	for ; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '"':
			for s.i++; s.i < len(s.b) && s.b[s.i] != '"'; s.i++ {
				if s.b[s.i] == '\\' {
					s.i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				s.i++
				return bytes.Clone(s.b[start:s.i])
			}
		}
	}
	s.ok = false
	return nil
}

func (s *effectScanner) ref() canon.Ref {
	var r canon.Ref
	s.lit(`{"kind":`)
	r.Kind = s.str()
	s.lit(`,"name":`)
	r.Name = s.str()
	s.lit(`,"sha256":`)
	h := s.str()
	if s.ok && (len(h) != 64 || !isLowerHex(h)) {
		s.ok = false
	}
	if s.ok {
		hex.Decode(r.SHA256[:], []byte(h))
	}
	s.lit(`,"size":`)
	r.Size = s.integer()
	s.lit(`,"unbound":`)
	r.Unbound = s.str()
	s.lit(`}`)
	return r
}

// integer reads an integer in canonical form that fits an int64.
func (s *effectScanner) integer() int64 {
	if !s.ok {
		return 0
	}
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	if err != nil {
		s.ok = false
	}
	return n
}

func isLowerHex(h string) bool {
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
