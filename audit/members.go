package audit

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/agentstepup/asu/canon"
)

// An export's line and a checkpoint file are read only when every member
// of every object in them is named exactly as a field of what it is read
// into. encoding/json matches member names without regard to case, Unicode
// folding included ("Decision", "ſeq" and "\u212Aid" name decision, seq and
// kid), and keeps the last of several; canon and every other JSON reader
// take "decision" and "Decision" for two members. A line holding both
// would verify as the record encoding/json reads while any other reader
// shows the other value. Names are compared as JSON strings, after their
// escapes: "d\u0065cision" is decision to every reader.

// A shape is the member names of the objects a value may hold: an object
// read into a struct has exactly the names encoding/json gives the
// struct's fields, each with the shape of its own value. A nil shape is a
// value whose own type reads it (a digest, raw arguments) or that holds
// no object of named fields.
type shape struct {
	members map[string]*shape // an object read into a struct: by exact name
	elems   *shape            // an array's elements
}

var (
	recordShape     = shapeOf(reflect.TypeFor[Record]())
	checkpointShape = shapeOf(reflect.TypeFor[SignedCheckpoint]())

	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// shapeOf is the shape of what encoding/json reads into a value of type t.
func shapeOf(t reflect.Type) *shape {
	if p := reflect.PointerTo(t); p.Implements(jsonUnmarshaler) || p.Implements(textUnmarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return shapeOf(t.Elem())
	case reflect.Slice, reflect.Array:
		if e := shapeOf(t.Elem()); e != nil {
			return &shape{elems: e}
		}
	case reflect.Struct:
		s := &shape{members: map[string]*shape{}}
		s.addFields(t)
		return s
	}
	return nil
}

// addFields adds the fields of struct type t, and of the structs it
// embeds without a name, as encoding/json names them.
func (s *shape) addFields(t reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			s.addFields(ft)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s.members[name] = shapeOf(f.Type)
	}
}

// check fails for the first member, at any depth of the JSON value raw,
// that is not named exactly as a field; at names the value, "" for the
// top. A value of another type than its shape's is left to the decoder,
// which refuses it.
func (s *shape) check(raw []byte, at string) error {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if s == nil || len(raw) == 0 {
		return nil
	}
	switch {
	case s.members != nil && raw[0] == '{':
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil {
			return nil
		}
		for _, name := range slices.Sorted(maps.Keys(members)) {
			m, ok := s.members[name]
			if !ok {
				return s.misnamed(name, at)
			}
			if err := m.check(members[name], join(at, name)); err != nil {
				return err
			}
		}
	case s.elems != nil && raw[0] == '[':
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) != nil {
			return nil
		}
		for _, e := range elems {
			if err := s.elems.check(e, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// misnamed says what a member of no field's name is, naming the field it
// would have been read as but never quoting the input.
func (s *shape) misnamed(name, at string) error {
	for _, field := range slices.Sorted(maps.Keys(s.members)) {
		if strings.EqualFold(field, name) {
			return fmt.Errorf("a member spelled unlike field %s (another case or a folded letter)", join(at, field))
		}
	}
	if at == "" {
		return errors.New("a member that is no field")
	}
	return fmt.Errorf("a member of %s that is no field", at)
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

// readExact reads the JSON text b into out, a pointer to a value of shape
// s, when canon accepts it within maxBytes (one value, no duplicate
// member, valid UTF-8, numbers it can hash) and every member is named
// exactly as a field. what names the value in the error of a text that is
// not one. No error quotes the input.
func readExact(b []byte, maxBytes int, s *shape, out any, what string) error {
	if _, err := (canon.Limits{MaxBytes: maxBytes}).Canonicalize(b); err != nil {
		return err
	}
	if err := s.check(b, ""); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return errors.New(decodeProblem(err, what))
	}
	return nil
}
