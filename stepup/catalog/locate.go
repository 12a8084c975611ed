package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// maxDepth bounds the nesting of a file, argument schemas included.
const maxDepth = 64

// source is a file being read: its name for errors and its bytes, to
// place a JSON pointer on a line and column.
type source struct {
	name string
	data []byte
}

// at is an Error for the value at JSON pointer ptr.
func (s source) at(ptr, problem string) *Error {
	e := &Error{File: s.name, Pointer: ptr, Problem: problem}
	// A field that is missing is placed on the object that lacks it.
	for p := ptr; ; p = p[:strings.LastIndexByte(p, '/')] {
		if off, ok := offsetOf(s.data, p); ok {
			e.Line, e.Column = s.position(off)
			return e
		}
		if p == "" {
			return e
		}
	}
}

// atOffset is an Error at byte offset off.
func (s source) atOffset(off int64, ptr, problem string) *Error {
	e := &Error{File: s.name, Pointer: ptr, Problem: problem}
	e.Line, e.Column = s.position(off)
	return e
}

// position is the line and column (both from 1, the column in
// characters) of byte offset off.
func (s source) position(off int64) (line, col int) {
	off = min(max(off, 0), int64(len(s.data)))
	before := s.data[:off]
	start := bytes.LastIndexByte(before, '\n') + 1
	return bytes.Count(before, []byte("\n")) + 1, utf8.RuneCount(before[start:]) + 1
}

// syntaxError places a JSON decoding error.
func (s source) syntaxError(err error) *Error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		// The pointer of the last value read before the fault.
		return s.atOffset(se.Offset, s.pointerAt(se.Offset), "not JSON: "+syntaxWords(se.Error()))
	case errors.As(err, &te):
		ptr := ""
		if te.Field != "" {
			ptr = "/" + strings.ReplaceAll(te.Field, ".", "/")
		}
		return s.atOffset(te.Offset, ptr, "wrong type: want "+te.Type.String())
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return s.atOffset(int64(len(s.data)), s.pointerAt(int64(len(s.data))), "not JSON: unexpected end")
	}
	return &Error{File: s.name, Problem: "not JSON"}
}

// syntaxWords is encoding/json's complaint without the character it
// quotes ("invalid character 'x' after ..."), which is the file's: the
// column already says where it is.
func syntaxWords(msg string) string {
	if rest, ok := strings.CutPrefix(msg, "invalid character '"); ok {
		if i := strings.LastIndex(rest, "' "); i >= 0 {
			return "invalid character" + rest[i+1:]
		}
		return "invalid character"
	}
	return msg
}

// schemaError reports the first schema violation, by document order,
// preferring a property that should not be there (a misspelling, say)
// to the one it then lacks. It says what rule failed in the words of
// [schemaProblem], which never quote the value at fault.
func (s source) schemaError(err error) *Error {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &Error{File: s.name, Problem: "does not match the schema"}
	}
	var best *Error
	bestMissing := true
	for _, l := range leafErrors(ve, nil) {
		ptr := pointer(l.InstanceLocation)
		e := s.at(ptr, schemaProblem(l.ErrorKind))
		_, missing := l.ErrorKind.(*kind.Required)
		switch k := l.ErrorKind.(type) {
		case *kind.AdditionalProperties:
			if len(k.Properties) > 0 {
				e = s.at(ptr+pointer(k.Properties[:1]), e.Problem)
			}
		case *kind.PropertyNames:
			e = s.at(ptr+pointer([]string{k.Property}), e.Problem)
		case *kind.Required:
			if len(k.Missing) > 0 {
				// The line of the object that lacks the field, the
				// pointer of the field it lacks.
				e.Pointer = ptr + pointer(k.Missing[:1])
			}
		}
		if best == nil || (bestMissing && !missing) || (bestMissing == missing && e.Line < best.Line) {
			best, bestMissing = e, missing
		}
	}
	if best == nil {
		return &Error{File: s.name, Problem: schemaProblem(ve.ErrorKind)}
	}
	return best
}

// leafErrors are the violations under e that have no causes of their
// own; a member name the schema refuses is one, whatever rule of
// propertyNames it broke, since its causes are placed on the name alone.
func leafErrors(e *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if _, name := e.ErrorKind.(*kind.PropertyNames); name || len(e.Causes) == 0 {
		return append(out, e)
	}
	for _, c := range e.Causes {
		out = leafErrors(c, out)
	}
	return out
}

// pointer is the JSON pointer of a path of names.
func pointer(loc []string) string {
	var b strings.Builder
	for _, s := range loc {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// offsetOf finds where the value at JSON pointer ptr starts in data.
func offsetOf(data []byte, ptr string) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var want []string
	if ptr != "" {
		for _, s := range strings.Split(ptr[1:], "/") {
			want = append(want, strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~"))
		}
	}
	return seek(dec, data, want)
}

// seek descends into the next value of dec along path and returns where
// the value the path names starts.
func seek(dec *json.Decoder, data []byte, path []string) (int64, bool) {
	start := skipSpace(data, dec.InputOffset())
	tok, err := dec.Token()
	if err != nil {
		return 0, false
	}
	if len(path) == 0 {
		return start, true
	}
	switch tok {
	case json.Delim('{'):
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return 0, false
			}
			if k == path[0] {
				return seek(dec, data, path[1:])
			}
			if !skipValue(dec) {
				return 0, false
			}
		}
	case json.Delim('['):
		n, err := strconv.Atoi(path[0])
		if err != nil {
			return 0, false
		}
		for i := 0; dec.More(); i++ {
			if i == n {
				return seek(dec, data, path[1:])
			}
			if !skipValue(dec) {
				return 0, false
			}
		}
	}
	return 0, false
}

// skipSpace moves off past whitespace and the separators ':' and ','
// that the decoder has not consumed yet.
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n:,", data[off]) >= 0 {
		off++
	}
	return off
}

func skipValue(dec *json.Decoder) bool {
	var v json.RawMessage
	return dec.Decode(&v) == nil
}

// checkKeys walks the whole document once and refuses the same key twice
// in one object (encoding/json would keep the last silently, the schema
// validator the first) and nesting deeper than maxDepth.
func (s source) checkKeys() *Error {
	dec := json.NewDecoder(bytes.NewReader(s.data))
	dec.UseNumber()
	if e := s.walkKeys(dec, "", 0); e != nil {
		return e
	}
	at := skipSpace(s.data, dec.InputOffset())
	if _, err := dec.Token(); err != io.EOF {
		return s.atOffset(at, "", "data after the end of the document")
	}
	return nil
}

func (s source) walkKeys(dec *json.Decoder, ptr string, depth int) *Error {
	start := skipSpace(s.data, dec.InputOffset())
	tok, err := dec.Token()
	if err != nil {
		return s.syntaxError(err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth >= maxDepth {
		return s.atOffset(start, ptr, fmt.Sprintf("nested deeper than %d levels", maxDepth))
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			at := skipSpace(s.data, dec.InputOffset())
			k, err := dec.Token()
			if err != nil {
				return s.syntaxError(err)
			}
			key, _ := k.(string)
			kp := ptr + pointer([]string{key})
			if seen[key] {
				return s.atOffset(at, kp, "key "+strconv.Quote(key)+" given twice in one object")
			}
			seen[key] = true
			if e := s.walkKeys(dec, kp, depth+1); e != nil {
				return e
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if e := s.walkKeys(dec, ptr+"/"+strconv.Itoa(i), depth+1); e != nil {
				return e
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return s.syntaxError(err)
	}
	return nil
}

// readLimited reads r up to max bytes, refusing more.
func readLimited(name string, r io.Reader, limit int) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, &Error{File: name, Problem: "cannot read: " + err.Error()}
	}
	if len(data) > limit {
		return nil, &Error{File: name, Problem: fmt.Sprintf("larger than %d bytes", limit)}
	}
	if e := plainText(name, data); e != nil {
		return nil, e
	}
	return data, nil
}

// plainText refuses a file that is not UTF-8, that starts with a byte
// order mark (which JSON forbids and editors on some systems add
// unseen), or that holds nothing but white space: each said so, since a
// JSON parser's complaint about them reads as a syntax error.
func plainText(name string, data []byte) *Error {
	switch {
	case !utf8.Valid(data):
		return &Error{File: name, Problem: "not UTF-8"}
	case bytes.HasPrefix(data, []byte("\ufeff")):
		return &Error{File: name, Line: 1, Column: 1, Problem: "starts with a byte order mark (U+FEFF); save it as UTF-8 without one"}
	case len(bytes.TrimLeft(data, " \t\r\n")) == 0:
		return &Error{File: name, Problem: "the file is empty"}
	}
	return nil
}

// decodeStrict decodes data, a document the schema accepted, into v,
// refusing unknown fields and anything after the value.
func (s source) decodeStrict(v any) *Error {
	dec := json.NewDecoder(bytes.NewReader(s.data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			return &Error{File: s.name, Problem: err.Error()[len("json: "):]}
		}
		return s.syntaxError(err)
	}
	if dec.More() {
		return s.atOffset(dec.InputOffset(), "", "data after the catalog")
	}
	return nil
}

// compileSchema compiles an embedded schema; it is tested, so a failure
// is a bug in this package.
func compileSchema(url string, raw []byte) *jsonschema.Schema {
	sch, err := compileJSONSchema(url, raw)
	if err != nil {
		panic("catalog: schema " + url + ": " + err.Error())
	}
	return sch
}

// validate reads a document as the schema validator does and checks it
// against sch, then for duplicate keys and depth.
func (s source) validate(sch *jsonschema.Schema) *Error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(s.data))
	if err != nil {
		if e := s.checkKeys(); e != nil && e.Line > 0 {
			return e
		}
		return s.syntaxError(err)
	}
	if e := s.checkKeys(); e != nil {
		return e
	}
	if err := sch.Validate(inst); err != nil {
		return s.schemaError(err)
	}
	return nil
}

// pointerAt is the pointer of the last value that starts at or before
// byte offset off: the value a decoder's offset falls in.
func (s source) pointerAt(off int64) string {
	dec := json.NewDecoder(bytes.NewReader(s.data))
	dec.UseNumber()
	best := ""
	var walk func(ptr string, depth int) bool
	walk = func(ptr string, depth int) bool {
		start := skipSpace(s.data, dec.InputOffset())
		if start > off || depth > maxDepth {
			return false
		}
		best = ptr
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return false
				}
				key, _ := k.(string)
				if !walk(ptr+pointer([]string{key}), depth+1) {
					return false
				}
			}
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if !walk(ptr+"/"+strconv.Itoa(i), depth+1) {
					return false
				}
			}
		default:
			return true
		}
		_, err = dec.Token()
		return err == nil
	}
	walk("", 0)
	return best
}
