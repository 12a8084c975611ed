package audit

import (
	"bytes"
	"unicode/utf8"
)

// The fast parser reads the one spelling WriteChain writes: an object
// without whitespace, known keys each at most once, strings without
// escapes, integers of at most 15 digits, digests as 64 lowercase hex
// digits, lists or null, no arguments. It reports false for anything else, and the line
// is then read the slow way, by canon and encoding/json, as ReadChain
// reads it. It never accepts a line the slow way refuses, nor reads one
// differently (FuzzVerifierReadsAsReadChain holds it to that).

// maxInterned bounds the strings a Verifier keeps to share between
// records (tools, sessions, decisions, approvers...), so that its memory
// stays flat however many distinct values a chain holds.
const (
	maxInterned    = 1024
	maxInternBytes = 64
)

// The fields whose last value a reader keeps, to share it with the next
// record.
const (
	lastUser = iota
	lastAgent
	lastTask
	lastSession
	lastTool
	lastClass
	lastPolicy
	lastDecision
	lastReason
	lastApprover
	lastResult
	lastFields
)

type fastParser struct {
	b   []byte
	i   int
	l   *lines
	bad bool
}

func (p *fastParser) fail() bool { p.bad = true; return false }

func (p *fastParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return p.fail()
}

// plainByte marks the bytes a string may hold as they are: not a quote, a
// backslash, a control character or the start of a multi-byte sequence
// (those are checked as UTF-8).
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// raw returns the bytes of a string without escapes or control
// characters, valid UTF-8, and moves past it.
func (p *fastParser) raw() []byte {
	if !p.eat('"') {
		return nil
	}
	b, start := p.b, p.i
	k := start
	for k < len(b) && plainByte[b[k]] {
		k++
	}
	if k < len(b) && b[k] == '"' { // plain ASCII, the common case
		p.i = k + 1
		return b[start:k]
	}
	end := bytes.IndexByte(b[start:], '"')
	if end < 0 {
		p.fail()
		return nil
	}
	// Not ASCII: the rest must be valid UTF-8 with no backslash or
	// control character.
	rest := b[k : start+end]
	if !utf8.Valid(rest) || bytes.IndexByte(rest, '\\') >= 0 || hasControl(rest) {
		p.fail()
		return nil
	}
	p.i = start + end + 1
	return b[start : start+end]
}

func hasControl(s []byte) bool {
	for _, c := range s {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// hexValue is the value of a lowercase hex digit, 0xff for any other byte.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
	}
	return t
}()

// str reads a string that repeats from record to record (a tool, a
// session, a decision), shared with the records before it: the same
// field's value in the record before, or one kept by internString.
func (p *fastParser) str(field int) string {
	s := p.raw()
	if p.bad {
		return ""
	}
	if last := p.l.last[field]; string(s) == last {
		return last
	}
	str := p.l.internString(s)
	p.l.last[field] = str
	return str
}

// unique reads a string of one record (a ticket id, a nonce).
func (p *fastParser) unique() string {
	s := p.raw()
	if p.bad || len(s) == 0 {
		return ""
	}
	return string(s)
}

func (p *fastParser) integer() int64 {
	neg := p.i < len(p.b) && p.b[p.i] == '-'
	if neg {
		p.i++
	}
	start := p.i
	var n int64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		n = n*10 + int64(p.b[p.i]-'0')
		p.i++
	}
	digits := p.i - start
	// One zero, or up to 15 digits without a leading zero (and no -0):
	// exactly what canon and encoding/json read as the same integer.
	if digits == 0 || digits > 15 || (p.b[start] == '0' && (digits > 1 || neg)) {
		p.fail()
		return 0
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.fail()
		return 0
	}
	if neg {
		return -n
	}
	return n
}

func (p *fastParser) digest() (d [32]byte) {
	if len(p.b)-p.i < 66 || p.b[p.i] != '"' || p.b[p.i+65] != '"' {
		p.fail()
		return d
	}
	h := p.b[p.i+1 : p.i+65]
	var bad byte
	for k := range d {
		hi, lo := hexValue[h[2*k]], hexValue[h[2*k+1]]
		bad |= hi | lo
		d[k] = hi<<4 | lo
	}
	if bad&0xf0 != 0 {
		p.fail()
		return [32]byte{}
	}
	p.i += 66
	return d
}

func (p *fastParser) list() []string {
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" { // a nil list, as encoding/json writes it
		p.i += 4
		return nil
	}
	if !p.eat('[') {
		return nil
	}
	out := []string{}
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return out
	}
	for !p.bad {
		out = append(out, p.l.internString(p.raw()))
		if p.i < len(p.b) && p.b[p.i] == ',' {
			p.i++
			continue
		}
		p.eat(']')
		break
	}
	return out
}

// key reads `"name":` and returns the key's index in keys, or fails.
func (p *fastParser) key(index func([]byte) int) int {
	k := p.raw()
	if p.bad || !p.eat(':') {
		return -1
	}
	i := index(k)
	if i < 0 {
		p.fail()
	}
	return i
}

// quotedKeys are the keys of a Record as `"key":`, in the order of its
// fields (the order WriteChain writes them in), by their recordKey index.
var quotedKeys = func() [][]byte {
	names := []string{"seq", "time", "ticket_id", "task", "step", "session", "tool", "effect_class", "args_digest",
		"principal", "policy_version", "decision", "reason", "taint", "approver", "nonce", "card_hash",
		"decision_millis", "result", "idempotency_key", "prev_hash", "hash"}
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = []byte(`"` + n + `":`)
	}
	return out
}()

// recordKey is the index of key k of a Record (its bit among the keys
// seen), or -1.
func recordKey(k []byte) int {
	switch string(k) {
	case "seq":
		return 0
	case "time":
		return 1
	case "ticket_id":
		return 2
	case "task":
		return 3
	case "step":
		return 4
	case "session":
		return 5
	case "tool":
		return 6
	case "effect_class":
		return 7
	case "args_digest":
		return 8
	case "principal":
		return 9
	case "policy_version":
		return 10
	case "decision":
		return 11
	case "reason":
		return 12
	case "taint":
		return 13
	case "approver":
		return 14
	case "nonce":
		return 15
	case "card_hash":
		return 16
	case "decision_millis":
		return 17
	case "result":
		return 18
	case "idempotency_key":
		return 19
	case "prev_hash":
		return 20
	case "hash":
		return 21
	}
	return -1
}

func principalKey(k []byte) int {
	switch string(k) {
	case "user":
		return 0
	case "agent":
		return 1
	case "delegations":
		return 2
	}
	return -1
}

func (p *fastParser) principal(r *Record) {
	if !p.eat('{') {
		return
	}
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return
	}
	var seen uint8
	for !p.bad {
		k := p.key(principalKey)
		if p.bad || seen&(1<<k) != 0 {
			p.fail()
			return
		}
		seen |= 1 << k
		switch k {
		case 0:
			r.Principal.User = p.str(lastUser)
		case 1:
			r.Principal.Agent = p.str(lastAgent)
		case 2:
			r.Principal.Delegations = p.list()
		}
		if p.i < len(p.b) && p.b[p.i] == ',' {
			p.i++
			continue
		}
		p.eat('}')
		return
	}
}

// parseFast reads b into l.rec, or reports false having decided nothing.
func (l *lines) parseFast(b []byte) bool {
	p := fastParser{b: b, l: l}
	r := &l.rec
	*r = Record{}
	if !p.eat('{') {
		return false
	}
	if p.i < len(b) && b[p.i] == '}' {
		p.i++
	} else {
		var seen uint32
		next := 0 // the key WriteChain writes next, in Record's field order
		for !p.bad {
			var k int
			if q := quotedKeys[next%len(quotedKeys)]; bytes.HasPrefix(b[p.i:], q) {
				k = next % len(quotedKeys)
				p.i += len(q)
			} else {
				k = p.key(recordKey)
			}
			next = k + 1
			if p.bad || seen&(1<<k) != 0 {
				return false
			}
			seen |= 1 << k
			switch k {
			case 0: // seq
				r.Seq = p.integer()
			case 1: // time
				r.Time = p.integer()
			case 17: // decision_millis
				r.DecisionMillis = p.integer()
			case 2: // ticket_id
				r.TicketID = p.unique()
			case 3: // task
				r.Task = p.str(lastTask)
			case 4: // step
				r.Step = p.unique()
			case 5: // session
				r.Session = p.str(lastSession)
			case 6: // tool
				r.Tool = p.str(lastTool)
			case 7: // effect_class
				r.EffectClass = p.str(lastClass)
			case 10: // policy_version
				r.PolicyVersion = p.str(lastPolicy)
			case 11: // decision
				r.Decision = p.str(lastDecision)
			case 12: // reason
				r.Reason = p.str(lastReason)
			case 14: // approver
				r.Approver = p.str(lastApprover)
			case 15: // nonce
				r.Nonce = p.unique()
			case 16: // card_hash
				r.CardHash = p.unique()
			case 18: // result
				r.Result = p.str(lastResult)
			case 19: // idempotency_key
				r.IdempotencyKey = p.unique()
			case 8: // args_digest
				r.ArgsDigest = p.digest()
			case 20: // prev_hash
				r.PrevHash = p.digest()
			case 21: // hash
				r.Hash = p.digest()
			case 13: // taint
				r.Taint = p.list()
			case 9: // principal
				p.principal(r)
			}
			if p.i < len(b) && b[p.i] == ',' {
				p.i++
				continue
			}
			p.eat('}')
			break
		}
	}
	// The object and nothing else.
	return !p.bad && p.i == len(b)
}

// internString returns s as a string, the same string for the same bytes
// while the Verifier keeps fewer than maxInterned of them.
func (l *lines) internString(s []byte) string {
	if len(s) == 0 {
		return ""
	}
	if len(s) > maxInternBytes {
		return string(s)
	}
	if str, ok := l.intern[string(s)]; ok {
		return str
	}
	str := string(s)
	if len(l.intern) < maxInterned {
		l.intern[str] = str
	}
	return str
}
