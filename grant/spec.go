package grant

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agentstepup/asu/canon"
)

// Marshal returns g as canonical JSON (RFC 8785), the form stored as
// store.Grant.Spec. It fails with [ErrInvalidGrant] when g is not valid.
func (g Grant) Marshal() ([]byte, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if g.Template != nil && g.Template.Args == nil {
		t := *g.Template
		t.Args = []Rule{}
		g.Template = &t
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(g); err != nil {
		return nil, invalid("does not encode")
	}
	out, err := canon.Canonicalize(buf.Bytes())
	if err != nil {
		return nil, invalid("does not encode canonically")
	}
	return out, nil
}

// Parse reads a grant written by [Grant.Marshal], strictly: it refuses,
// with [ErrInvalidGrant], anything canon refuses (duplicate keys, numbers
// it cannot represent exactly, trailing data), unknown fields, and any
// text that is not exactly the fields of a valid grant (a field name in
// another case, a null for a list, a number written as a string). Key
// order and whitespace do not matter.
func Parse(spec []byte) (Grant, error) {
	given, err := canon.Canonicalize(spec)
	if err != nil {
		return Grant{}, fmt.Errorf("%w: %w", ErrInvalidGrant, err)
	}
	var g Grant
	dec := json.NewDecoder(bytes.NewReader(given))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return Grant{}, invalid("not a grant object")
	}
	again, err := g.Marshal()
	if err != nil {
		return Grant{}, err
	}
	if !bytes.Equal(again, given) {
		return Grant{}, invalid("not exactly the fields of a grant")
	}
	return g, nil
}
