package wire

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// The codecs below are encoding/json's for the agent API's hot messages
// (a propose body's members after its arguments, a ticket, a result),
// without its reflection: each writes or reads a message of plain values
// itself and hands any other to encoding/json, so what it writes is byte
// for byte what json.Marshal writes and what it reads is what
// json.Unmarshal reads. A plain string is ASCII from space up, without '"',
// '\\', '<', '>' and '&' (the bytes encoding/json escapes); when reading,
// valid UTF-8 above ASCII is plain too.

// plain reports whether encoding/json writes s as it is, between quotes.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

func plainAll(ss []string) bool {
	for _, s := range ss {
		if !plain(s) {
			return false
		}
	}
	return true
}

// appendMember appends ,"name":"s" (without the comma when first).
func appendMember(dst []byte, first bool, name, s string) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	dst = append(dst, `":"`...)
	dst = append(dst, s...)
	return append(dst, '"')
}

func appendStrings(dst []byte, name string, ss []string) []byte {
	dst = append(dst, `,"`...)
	dst = append(dst, name...)
	dst = append(dst, `":[`...)
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(append(append(dst, '"'), s...), '"')
	}
	return append(dst, ']')
}

// AppendString appends s as encoding/json writes a string.
func AppendString(dst []byte, s string) []byte {
	if plain(s) {
		return append(append(append(dst, '"'), s...), '"')
	}
	b, _ := json.Marshal(s) // a string always encodes
	return append(dst, b...)
}

// AppendJSON appends r as json.Marshal writes it.
func (r Rest) AppendJSON(dst []byte) ([]byte, error) {
	p := r.Principal
	if !plain(r.Task) || !plain(r.Step) || !plain(r.Session) || !plain(p.User) || !plain(p.Agent) ||
		!plainAll(p.Delegations) || !plainAll(r.Taint) || !plain(r.Rationale) || !plain(r.Grant) {
		return marshalAppend(dst, r)
	}
	dst = append(dst, '{')
	first := true
	if r.Task != "" {
		dst, first = appendMember(dst, first, "task", r.Task), false
	}
	if r.Step != "" {
		dst, first = appendMember(dst, first, "step", r.Step), false
	}
	dst = appendMember(dst, first, "session", r.Session)
	dst = appendMember(append(dst, `,"principal":{`...), true, "user", p.User)
	dst = appendMember(dst, false, "agent", p.Agent)
	if len(p.Delegations) > 0 {
		dst = appendStrings(dst, "delegations", p.Delegations)
	}
	dst = append(dst, '}')
	if len(r.Taint) > 0 {
		dst = appendStrings(dst, "taint", r.Taint)
	}
	if r.Rationale != "" {
		dst = appendMember(dst, false, "rationale", r.Rationale)
	}
	if r.Grant != "" {
		dst = appendMember(dst, false, "grant", r.Grant)
	}
	return append(dst, '}'), nil
}

// AppendJSON appends t as json.Marshal writes it.
func (t Ticket) AppendJSON(dst []byte) ([]byte, error) {
	if !plain(t.ID) || !plain(t.Status) || !plain(t.Tool) || !plain(t.Digest) || !plain(t.Reason) || !plain(t.Next) {
		return marshalAppend(dst, t)
	}
	orig := dst
	dst = append(dst, '{')
	dst = appendMember(dst, true, "id", t.ID)
	dst = appendMember(dst, false, "status", t.Status)
	dst = appendMember(dst, false, "tool", t.Tool)
	if t.Digest != "" {
		dst = appendMember(dst, false, "digest", t.Digest)
	}
	if t.Reason != "" {
		dst = appendMember(dst, false, "reason", t.Reason)
	}
	if !t.ExpiresAt.IsZero() {
		b, err := t.ExpiresAt.MarshalJSON()
		if err != nil {
			return marshalAppend(orig, t) // encoding/json's own error
		}
		dst = append(append(dst, `,"expires_at":`...), b...)
	}
	if t.Next != "" {
		dst = appendMember(dst, false, "next", t.Next)
	}
	if t.RetryAfterMS != 0 {
		dst = strconv.AppendInt(append(dst, `,"retry_after_ms":`...), t.RetryAfterMS, 10)
	}
	return append(dst, '}'), nil
}

// AppendJSON appends r as json.Marshal writes it.
func (r Result) AppendJSON(dst []byte) ([]byte, error) {
	if !plain(r.Ticket) || !plain(r.IdempotencyKey) || !compactPlain(r.Output) {
		return marshalAppend(dst, r)
	}
	dst = appendMember(append(dst, '{'), true, "ticket", r.Ticket)
	if len(r.Output) > 0 {
		dst = append(append(dst, `,"output":`...), r.Output...)
	}
	dst = appendMember(dst, false, "idempotency_key", r.IdempotencyKey)
	return append(dst, '}'), nil
}

// compactPlain reports whether raw is JSON that encoding/json writes as it
// is: valid, with no byte it would drop (whitespace) or escape.
func compactPlain(raw json.RawMessage) bool {
	for _, c := range raw {
		if c <= 0x20 || c >= utf8.RuneSelf || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return len(raw) == 0 || json.Valid(raw)
}

func marshalAppend(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// DecodeTicket reads raw into *t as json.Unmarshal reads it into a zero
// Ticket.
func DecodeTicket(raw []byte, t *Ticket) error { return decode(raw, t, readTicket) }

// DecodeResult reads raw into *r as json.Unmarshal reads it into a zero
// Result.
func DecodeResult(raw []byte, r *Result) error { return decode(raw, r, readResult) }

// decode reads raw into *v with read, or with encoding/json where read
// does not take the text.
func decode[T any](raw []byte, v *T, read func([]byte, *T) bool) error {
	var zero T
	*v = zero
	if read(raw, v) {
		return nil
	}
	*v = zero
	return json.Unmarshal(raw, v)
}

// readTicket reads a ticket of plain members, each named exactly, with no
// whitespace but at the end; it reports false for any other text, which
// encoding/json then reads.
func readTicket(raw []byte, t *Ticket) bool {
	return readObject(raw, func(s *scanner, name string) bool {
		var ok bool
		switch name {
		case "id":
			t.ID, ok = s.str()
		case "status":
			t.Status, ok = s.str()
		case "tool":
			t.Tool, ok = s.str()
		case "digest":
			t.Digest, ok = s.str()
		case "reason":
			t.Reason, ok = s.str()
		case "expires_at":
			ok = s.time(&t.ExpiresAt)
		case "next":
			t.Next, ok = s.str()
		case "retry_after_ms":
			t.RetryAfterMS, ok = s.int()
		}
		return ok
	})
}

func readResult(raw []byte, r *Result) bool {
	return readObject(raw, func(s *scanner, name string) bool {
		var ok bool
		switch name {
		case "ticket":
			r.Ticket, ok = s.str()
		case "output":
			r.Output, ok = s.raw()
		case "idempotency_key":
			r.IdempotencyKey, ok = s.str()
		}
		return ok
	})
}

// readObject reads one object, handing each member's value to member by
// its name, then nothing but whitespace.
func readObject(raw []byte, member func(s *scanner, name string) bool) bool {
	s := scanner{b: raw}
	if !s.byte('{') {
		return false
	}
	if !s.byte('}') {
		for {
			name, ok := s.str()
			if !ok || !s.byte(':') || !member(&s, name) {
				return false
			}
			if s.byte(',') {
				continue
			}
			if s.byte('}') {
				break
			}
			return false
		}
	}
	for _, c := range s.b[s.i:] {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

type scanner struct {
	b []byte
	i int
}

func (s *scanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// quoted reads a string without escapes or control characters and
// returns its text, quotes included.
func (s *scanner) quoted() ([]byte, bool) {
	start := s.i
	if !s.byte('"') {
		return nil, false
	}
	ascii := true
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			q := s.b[start:s.i]
			return q, ascii || utf8.Valid(q)
		case c < 0x20 || c == '\\':
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

func (s *scanner) str() (string, bool) {
	q, ok := s.quoted()
	if !ok {
		return "", false
	}
	return string(q[1 : len(q)-1]), true
}

// time reads a string as encoding/json hands it to time.Time.UnmarshalJSON.
func (s *scanner) time(t *time.Time) bool {
	q, ok := s.quoted()
	return ok && t.UnmarshalJSON(q) == nil
}

// int reads an integer written without fraction or exponent that fits
// an int64.
func (s *scanner) int() (int64, bool) {
	start := s.i
	s.byte('-')
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == digits || (s.b[digits] == '0' && s.i > digits+1) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	return n, err == nil
}

// maxMemberDepth is how deeply a member's value may nest: encoding/json
// refuses a document nested deeper than 10,000, counting the object the
// member is in.
const maxMemberDepth = 10000 - 1

// raw reads any value but null, as encoding/json hands it to a
// json.RawMessage: a copy of its text. It reads a member's value of the
// message's object, so a value nested deeper than maxMemberDepth is left
// to encoding/json, which refuses it.
func (s *scanner) raw() (json.RawMessage, bool) {
	start, depth := s.i, 0
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			for s.i++; s.i < len(s.b) && s.b[s.i] != '"'; s.i++ {
				if s.b[s.i] == '\\' {
					s.i++
				}
			}
			if s.i >= len(s.b) {
				return nil, false
			}
		case '{', '[':
			if depth++; depth > maxMemberDepth {
				return nil, false
			}
		case '}', ']':
			if depth == 0 {
				return s.value(start)
			}
			depth--
		case ',':
			if depth == 0 {
				return s.value(start)
			}
		case ' ', '\t', '\n', '\r':
			if depth == 0 {
				return nil, false
			}
		}
		s.i++
		if depth == 0 && (s.b[s.i-1] == '"' || s.b[s.i-1] == '}' || s.b[s.i-1] == ']') {
			return s.value(start)
		}
	}
	return nil, false
}

func (s *scanner) value(start int) (json.RawMessage, bool) {
	v := s.b[start:s.i]
	if len(v) == 0 || v[0] == 'n' || !json.Valid(v) {
		return nil, false
	}
	return append(json.RawMessage(nil), v...), true
}
