package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/internal/wire"
	"github.com/agentstepup/asu/stepup/remote"
)

// callKeys and principalKeys are the only member names a call may use,
// spelled exactly: encoding/json would also take "Tool" or "TOOL" for
// "tool", which another parser in front of the gate would not.
var (
	callKeys      = []string{"tool", "args", "task", "step", "session", "principal", "taint", "rationale", "grant"}
	principalKeys = []string{"user", "agent", "delegations"}
)

// decodeCall decodes a propose body strictly. A body canon parses is read
// from its parsed form, in that one pass, as encoding/json would read it
// but for the arguments, which come in canonical form (the gate
// canonicalizes them anyway); any other body token by token, its arguments
// canonical too where they canonicalize.
func decodeCall(body []byte) (wire.Call, error) {
	parsed, err := bodyLimits.Parse(body)
	if err != nil {
		// The rest of the body does not parse (a name that is not UTF-8,
		// say); the arguments may, and then come canonical all the same.
		w, err := decodeCallTokens(body)
		if err == nil {
			if c, cerr := canon.Canonicalize(w.Args); cerr == nil {
				w.Args = c
			}
		}
		return w, err
	}
	if err := memberNames(parsed, callKeys); err != nil {
		return wire.Call{}, fmt.Errorf("%w: %v", remote.ErrInvalid, err)
	}
	var w wire.Call
	r := valueReader{}
	for k, v := range parsed.Members() {
		switch k {
		case "tool":
			w.Tool = r.str(v)
		case "args":
			w.Args = json.RawMessage(v.Canonical())
		case "task":
			w.Task = r.str(v)
		case "step":
			w.Step = r.str(v)
		case "session":
			w.Session = r.str(v)
		case "taint":
			w.Taint = r.strs(v)
		case "rationale":
			w.Rationale = r.str(v)
		case "grant":
			w.Grant = r.str(v)
		case "principal":
			if v.Kind() == canon.KindNull {
				continue
			}
			if err := memberNames(v, principalKeys); err != nil {
				return wire.Call{}, fmt.Errorf("%w: principal: %v", remote.ErrInvalid, err)
			}
			for pk, pv := range v.Members() {
				switch pk {
				case "user":
					w.Principal.User = r.str(pv)
				case "agent":
					w.Principal.Agent = r.str(pv)
				case "delegations":
					w.Principal.Delegations = r.strs(pv)
				}
			}
		}
	}
	if r.wrongType {
		return wire.Call{}, fmt.Errorf("%w: a member has a value of the wrong type", remote.ErrInvalid)
	}
	return w, nil
}

// valueReader reads members of a parsed body as encoding/json reads them
// into strings and string lists: null is the zero value, any other type is
// wrongType.
type valueReader struct{ wrongType bool }

func (r *valueReader) str(v canon.Value) string {
	switch v.Kind() {
	case canon.KindString:
		return v.String()
	case canon.KindNull:
		return ""
	}
	r.wrongType = true
	return ""
}

func (r *valueReader) strs(v canon.Value) []string {
	switch v.Kind() {
	case canon.KindNull:
		return nil
	case canon.KindArray:
	default:
		r.wrongType = true
		return nil
	}
	out := make([]string, 0, v.Len())
	for _, e := range v.Elems() {
		out = append(out, r.str(e))
	}
	return out
}

// decodeCallTokens is decodeCall for a body canon does not parse: token
// by token, with encoding/json's reading of each member.
func decodeCallTokens(body []byte) (wire.Call, error) {
	var w wire.Call
	if err := decodeStrictTokens(body, &w, callKeys); err != nil {
		return wire.Call{}, err
	}
	if err := principalTokens(body); err != nil {
		return wire.Call{}, err
	}
	return w, nil
}

// principalTokens checks the principal's member names in a body canon does
// not parse.
func principalTokens(body []byte) error {
	var top struct {
		Principal json.RawMessage `json:"principal"`
	}
	_ = json.Unmarshal(body, &top)
	if len(top.Principal) > 0 && string(top.Principal) != "null" {
		if err := exactKeys(top.Principal, principalKeys); err != nil {
			return fmt.Errorf("%w: principal: %v", remote.ErrInvalid, err)
		}
	}
	return nil
}

// memberNames fails unless v is an object whose member names are all in
// allowed, byte for byte.
func memberNames(v canon.Value, allowed []string) error {
	if v.Kind() != canon.KindObject {
		return errors.New("not a JSON object")
	}
	for k := range v.Members() {
		if !slices.Contains(allowed, k) {
			return unknownMember(allowed)
		}
	}
	return nil
}

// exactKeys fails unless raw is an object whose member names are all in
// allowed, byte for byte.
func exactKeys(raw []byte, allowed []string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return errors.New("not a JSON object")
	}
	for k := range m {
		if !slices.Contains(allowed, k) {
			return unknownMember(allowed)
		}
	}
	return nil
}

// maxDepth bounds the nesting of a request body; the gate's canonical form
// refuses deeper arguments anyway.
const maxDepth = 128

var errTooDeep = fmt.Errorf("nesting deeper than %d", maxDepth)

var errDuplicate = errors.New("an object repeats a member name")

// unknownMember is the refusal of a member name not in allowed. Like
// every refusal of a body, it quotes nothing the caller sent (a member
// name may be anything, a secret included): it names what is allowed.
func unknownMember(allowed []string) error {
	return fmt.Errorf("a member name is not one this API takes here (it takes, spelled exactly: %s)",
		strings.Join(allowed, ", "))
}

// decodeErr is a refusal of a body encoding/json would not decode, in
// words of ours: encoding/json's own errors quote the caller's bytes (an
// unexpected character, an unknown field's name).
func decodeErr(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%w: a member has a value of the wrong type", remote.ErrInvalid)
	}
	return fmt.Errorf("%w: the body is not one valid JSON object of this API's members", remote.ErrInvalid)
}

// bodyLimits are canon's limits on a request body: the largest call, and
// the nesting [noDuplicates] allows.
var bodyLimits = canon.Limits{MaxBytes: MaxCallBytes, MaxDepth: maxDepth}

// decodeStrict decodes one JSON object from body into v, refusing member
// names not in keys (spelled exactly), trailing data, and duplicate keys
// anywhere: a body two parsers could read differently is not a body to
// act on.
//
// A body canon parses (one pass that refuses duplicate keys however they
// are escaped, nesting over maxDepth and trailing data) is decoded once
// more into v, and its parsed form is returned. canon also refuses what
// this API takes and leaves to the gate to refuse (a number it cannot hash
// faithfully in the arguments): such a body is walked token by token
// instead, and the returned Value is the zero Value (KindInvalid).
func decodeStrict(body []byte, v any, keys []string) (canon.Value, error) {
	if parsed, err := bodyLimits.Parse(body); err == nil {
		if err := memberNames(parsed, keys); err != nil {
			return canon.Value{}, fmt.Errorf("%w: %v", remote.ErrInvalid, err)
		}
		if err := json.Unmarshal(body, v); err != nil {
			return canon.Value{}, decodeErr(err)
		}
		return parsed, nil
	}
	return canon.Value{}, decodeStrictTokens(body, v, keys)
}

// decodeStrictTokens is decodeStrict token by token.
func decodeStrictTokens(body []byte, v any, keys []string) error {
	if err := noDuplicates(body); err != nil {
		if errors.Is(err, errDuplicate) || errors.Is(err, errTooDeep) {
			return fmt.Errorf("%w: %w", remote.ErrInvalid, err)
		}
		return decodeErr(err)
	}
	if err := exactKeys(body, keys); err != nil {
		return fmt.Errorf("%w: %v", remote.ErrInvalid, err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeErr(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: data after the JSON value", remote.ErrInvalid)
	}
	return nil
}

// noDuplicates walks body's tokens and fails on a repeated key in any
// object, or nesting deeper than maxDepth.
func noDuplicates(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	type frame struct {
		keys   map[string]bool
		object bool
		key    bool // the next token in an object is a key
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			top := &stack[n-1]
			if top.key {
				if d, ok := tok.(json.Delim); ok && d == '}' {
					stack = stack[:n-1]
					continue
				}
				k, _ := tok.(string)
				if top.keys[k] {
					return errDuplicate
				}
				top.keys[k] = true
				top.key = false
				continue
			}
			top.key = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{keys: map[string]bool{}, object: true, key: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > maxDepth {
			return errTooDeep
		}
	}
}
