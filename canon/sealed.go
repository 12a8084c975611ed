package canon

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unsafe"
)

// Sealed is an effect canonicalized once: its canonical bytes, its
// [Digest] and its arguments as a [Value], computed together by [Seal] or
// [ParseSealed] and never again. It is immutable; every accessor returns a
// copy or an immutable view (but [Sealed.BytesUnsafe], whose holder must
// never write into it), so a Sealed can be shared between goroutines and
// the digest always matches the bytes and the effect.
//
// The zero Sealed holds no effect ([Sealed.IsZero]).
type Sealed struct{ s *sealed }

type sealed struct {
	effect  Effect // without Args, which are in src
	argsLen int
	src     string // canonical effect; the args Value's tree points into it
	digest  Digest
	args    Value
}

// effectStart is how every canonical effect starts, and argsAt where its
// arguments start, after it.
const (
	effectStart = `{"args":`
	argsAt      = int32(len(effectStart))
)

// Seal canonicalizes e once and returns it sealed. Its bytes are those of
// [Effect.Canonical] and its digest that of [Effect.Digest] (which call it).
//
// The arguments are canonicalized and parsed in one pass, whatever their
// spelling and member order. It refuses what
// [Effect.Canonical] refuses: arguments that are not an object
// ([ErrNotObject]) or that [Canonicalize] refuses, arguments longer than
// [DefaultMaxBytes] before or after canonicalization ([ErrTooLarge]), a
// field that is not UTF-8 ([ErrInvalidUTF8]), a reference size a JSON
// number cannot carry exactly ([ErrNumber]).
func Seal(e Effect) (Sealed, error) {
	args := bytes.TrimLeft(e.Args, " \t\r\n")
	if len(args) == 0 || args[0] != '{' {
		return Sealed{}, ErrNotObject
	}
	if !e.validUTF8() {
		return Sealed{}, fmt.Errorf("effect field: %w", ErrInvalidUTF8)
	}
	// The args are parsed into a buffer that starts with the effect's
	// first bytes, so their nodes point at where they sit in the effect
	// and the rest of the effect is appended in place.
	t, out, err := Limits{}.build(e.Args, effectStart)
	if err != nil {
		return Sealed{}, fmt.Errorf("args: %w", err)
	}
	argsLen := len(out) - int(argsAt)
	if argsLen > DefaultMaxBytes {
		return Sealed{}, fmt.Errorf("args: %w", &Error{Offset: DefaultMaxBytes, Err: ErrTooLarge})
	}
	if out, err = appendEffectRest(out, e); err != nil {
		return Sealed{}, err
	}
	if len(out) > effectLimits().MaxBytes {
		return Sealed{}, &Error{Offset: effectLimits().MaxBytes, Err: ErrTooLarge}
	}
	digest := Sum(out)
	t.src = frozen(out)
	e.Args = nil
	return Sealed{&sealed{effect: e.clone(), argsLen: argsLen, src: t.src, digest: digest, args: Value{t: t}}}, nil
}

// SealArgs is [Seal] with the arguments already parsed, by [Parse] or
// [ParseValue]: they are not read again, and [Sealed.Args] returns args
// itself. e.Args is ignored. It refuses what Seal refuses.
//
// The first effect sealed around an object that [Parse] returned is
// written around the object's own text, which is not copied: the
// effect's bytes share memory with args, and both are immutable. Any
// other seal copies the arguments into the effect.
func SealArgs(e Effect, args Value) (Sealed, error) {
	if args.Kind() != KindObject {
		return Sealed{}, ErrNotObject
	}
	e.Args = nil
	if !e.validUTF8() {
		return Sealed{}, fmt.Errorf("effect field: %w", ErrInvalidUTF8)
	}
	c := args.Canonical()
	if len(c) > DefaultMaxBytes {
		return Sealed{}, fmt.Errorf("args: %w", &Error{Offset: DefaultMaxBytes, Err: ErrTooLarge})
	}
	out, err := appendEffectRest(argsRoom(args), e)
	if err != nil {
		return Sealed{}, err
	}
	if len(out) > effectLimits().MaxBytes {
		return Sealed{}, &Error{Offset: effectLimits().MaxBytes, Err: ErrTooLarge}
	}
	digest := Sum(out)
	return Sealed{&sealed{effect: e.clone(), argsLen: len(c), src: frozen(out), digest: digest, args: args}}, nil
}

// argsRoom returns the start of an effect with arguments args, to append
// the rest of the effect to: the buffer args were parsed into when they
// are the whole of a tree that [Limits.Parse] left room after and no
// other seal has claimed that room, and a fresh copy otherwise. Only the
// bytes past args are written to, once, by the seal that claims them;
// the bytes of args are never written again.
func argsRoom(args Value) []byte {
	t := args.t
	if t.room != nil && args.i == 0 && args.node().start == argsAt && int(args.node().stop) == len(t.src) &&
		t.claimed.CompareAndSwap(false, true) {
		return t.room[:len(t.src)]
	}
	c := args.Canonical()
	out := make([]byte, 0, int(argsAt)+len(c)+256)
	return append(append(out, effectStart...), c...)
}

// appendEffectRest writes the canonical effect after its args: the members
// in RFC 8785 order, every field present, empty lists as [].
func appendEffectRest(out []byte, e Effect) ([]byte, error) {
	out = appendString(append(out, `,"audience":`...), e.Audience)
	out = appendString(append(out, `,"policy_version":`...), e.PolicyVersion)
	out = appendString(append(out, `,"principal":{"agent":`...), e.Principal.Agent)
	out = append(out, `,"delegations":[`...)
	for i, d := range e.Principal.Delegations {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendString(out, d)
	}
	out = appendString(append(out, `],"user":`...), e.Principal.User)
	out = append(out, `},"refs":[`...)
	for i, r := range e.Refs {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendString(append(out, `{"kind":`...), r.Kind)
		out = appendString(append(out, `,"name":`...), r.Name)
		out = append(out, `,"sha256":"`...)
		out = hex.AppendEncode(out, r.SHA256[:])
		out = append(out, `","size":`...)
		var ok bool
		var buf [24]byte
		if out, ok = appendNumber(out, strconv.AppendInt(buf[:0], r.Size, 10)); !ok {
			return nil, fmt.Errorf("ref %d size: %w", i, ErrNumber)
		}
		if r.Target != "" {
			// Only when set, so an effect without targets keeps its bytes.
			out = appendString(append(out, `,"target":`...), r.Target)
		}
		out = appendString(append(out, `,"unbound":`...), r.Unbound)
		out = append(out, '}')
	}
	out = appendString(append(out, `],"step":`...), e.Step)
	out = appendString(append(out, `,"task":`...), e.Task)
	out = appendString(append(out, `,"tool":`...), e.Tool)
	return append(out, '}'), nil
}

// ParseSealed reads a stored effect: canonical bytes, exactly as
// [Sealed.Bytes] or [Effect.Canonical] wrote them. It refuses anything
// else: input that is not canonical ([ErrNotCanonical]), or not exactly
// the fields of an effect with their types ([ErrSyntax]): a field missing,
// unknown or null, arguments that are not an object, a content hash not in
// lowercase hex, a size that is not an integer. What it accepts, [Seal]
// seals to the same bytes.
func ParseSealed(canonical []byte) (Sealed, error) {
	v, err := effectLimits().ParseValue(canonical)
	if err != nil {
		return Sealed{}, err
	}
	d := effectDecoder{}
	e, args := d.effect(v)
	if d.err != nil {
		return Sealed{}, fmt.Errorf("%w: effect: %s", ErrSyntax, d.err)
	}
	if n := len(args.Canonical()); n > DefaultMaxBytes {
		return Sealed{}, fmt.Errorf("args: %w", &Error{Offset: int(argsAt) + DefaultMaxBytes, Err: ErrTooLarge})
	}
	return Sealed{&sealed{effect: e, argsLen: len(args.Canonical()), src: v.t.src, digest: Sum(canonical), args: args}}, nil
}

// effectDecoder reads an effect from its Value; err records the first
// deviation from the effect's shape.
type effectDecoder struct{ err error }

func (d *effectDecoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%s", what)
	}
}

// fields returns the members of an object that has exactly the keys
// given, in canonical order.
func (d *effectDecoder) fields(v Value, keys ...string) []Value {
	out := make([]Value, len(keys))
	if v.Kind() != KindObject || v.Len() != len(keys) {
		d.fail("not exactly the fields of an effect")
		return out
	}
	i := 0
	for k, m := range v.Members() {
		if k != keys[i] {
			d.fail("not exactly the fields of an effect")
			return out
		}
		out[i] = m
		i++
	}
	return out
}

func (d *effectDecoder) str(v Value) string {
	if v.Kind() != KindString {
		d.fail("a text field is not a string")
	}
	return v.String()
}

func (d *effectDecoder) effect(v Value) (Effect, Value) {
	var e Effect
	f := d.fields(v, "args", "audience", "policy_version", "principal", "refs", "step", "task", "tool")
	if d.err != nil {
		return e, Value{}
	}
	if f[0].Kind() != KindObject {
		d.fail("args is not an object")
	}
	e.Audience, e.PolicyVersion = d.str(f[1]), d.str(f[2])
	p := d.fields(f[3], "agent", "delegations", "user")
	if d.err != nil {
		return e, Value{}
	}
	e.Principal.Agent, e.Principal.User = d.str(p[0]), d.str(p[2])
	if p[1].Kind() != KindArray {
		d.fail("delegations is not a list")
	}
	e.Principal.Delegations = make([]string, 0, p[1].Len())
	for _, x := range p[1].Elems() {
		e.Principal.Delegations = append(e.Principal.Delegations, d.str(x))
	}
	if f[4].Kind() != KindArray {
		d.fail("refs is not a list")
	}
	e.Refs = make([]Ref, 0, f[4].Len())
	for _, x := range f[4].Elems() {
		e.Refs = append(e.Refs, d.ref(x))
	}
	e.Step, e.Task, e.Tool = d.str(f[5]), d.str(f[6]), d.str(f[7])
	return e, f[0]
}

func (d *effectDecoder) ref(v Value) Ref {
	var r Ref
	var f []Value
	if v.Kind() == KindObject && v.Len() == 6 {
		// A reference with a target; an empty one is never written.
		f = d.fields(v, "kind", "name", "sha256", "size", "target", "unbound")
		if d.err != nil {
			return r
		}
		if r.Target = d.str(f[4]); r.Target == "" {
			d.fail("a reference's target is empty")
		}
		f = append(f[:4], f[5])
	} else {
		f = d.fields(v, "kind", "name", "sha256", "size", "unbound")
		if d.err != nil {
			return r
		}
	}
	r.Kind, r.Name, r.Unbound = d.str(f[0]), d.str(f[1]), d.str(f[4])
	h := d.str(f[2])
	if len(h) != 2*len(r.SHA256) || !isLowerHex(h) {
		d.fail("a content hash is not 64 lowercase hex digits")
	} else {
		hex.Decode(r.SHA256[:], []byte(h))
	}
	n, err := strconv.ParseInt(f[3].Number(), 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != f[3].Number() {
		d.fail("a size is not an integer")
	}
	r.Size = n
	return r
}

func isLowerHex(h string) bool {
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// IsZero reports whether s holds no effect.
func (s Sealed) IsZero() bool { return s.s == nil }

// Effect returns a deep copy of the effect, its Args in canonical form.
func (s Sealed) Effect() Effect {
	if s.s == nil {
		return Effect{}
	}
	e := s.s.effect.clone()
	e.Args = json.RawMessage(s.s.src[argsAt : int(argsAt)+s.s.argsLen])
	return e
}

// Bytes returns a copy of the canonical effect, the bytes the digest is
// of.
func (s Sealed) Bytes() []byte {
	if s.s == nil {
		return nil
	}
	return []byte(s.s.src)
}

// BytesUnsafe returns the canonical effect itself, not a copy: the slice
// is this Sealed's own memory, capped at its length, so that an append
// never writes into it. Nothing may ever write into it, which would
// change the Sealed under its digest for every holder of it. It is for a
// holder bound to keep the bytes unchanged, as a store keeps a parked
// ticket's Effect (immutable once parked, and hashed again before it
// runs); anything else takes [Sealed.Bytes].
func (s Sealed) BytesUnsafe() []byte {
	if s.s == nil {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s.s.src), len(s.s.src))[:len(s.s.src):len(s.s.src)]
}

// Len returns the length of the canonical effect in bytes.
func (s Sealed) Len() int {
	if s.s == nil {
		return 0
	}
	return len(s.s.src)
}

// Digest returns the SHA-256 of the canonical effect.
func (s Sealed) Digest() Digest {
	if s.s == nil {
		return Digest{}
	}
	return s.s.digest
}

// Args returns the arguments as a [Value]: an object.
func (s Sealed) Args() Value {
	if s.s == nil {
		return Value{}
	}
	return s.s.args
}

// Tool returns the effect's tool without copying the effect.
func (s Sealed) Tool() string {
	if s.s == nil {
		return ""
	}
	return s.s.effect.Tool
}

// Task returns the effect's task without copying the effect.
func (s Sealed) Task() string {
	if s.s == nil {
		return ""
	}
	return s.s.effect.Task
}

// Step returns the effect's step without copying the effect.
func (s Sealed) Step() string {
	if s.s == nil {
		return ""
	}
	return s.s.effect.Step
}

// PolicyVersion returns the version of the policy the effect was decided
// under, without copying the effect.
func (s Sealed) PolicyVersion() string {
	if s.s == nil {
		return ""
	}
	return s.s.effect.PolicyVersion
}

// Principal returns a copy of the effect's principal.
func (s Sealed) Principal() Principal {
	if s.s == nil {
		return Principal{}
	}
	p := s.s.effect.Principal
	p.Delegations = slices.Clone(p.Delegations)
	return p
}

// clone copies e's slices, so that the copy shares nothing a caller could
// change.
func (e Effect) clone() Effect {
	e.Args = bytes.Clone(e.Args)
	e.Refs = slices.Clone(e.Refs)
	e.Principal.Delegations = slices.Clone(e.Principal.Delegations)
	if e.Refs == nil {
		e.Refs = []Ref{}
	}
	if e.Principal.Delegations == nil {
		e.Principal.Delegations = []string{}
	}
	return e
}
