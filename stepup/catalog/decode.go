package catalog

import (
	"bytes"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// DecodeJSON reads data, a JSON file named file (the name is for errors
// only) that is not a catalog, as strictly as [Parse] reads a catalog, and
// decodes it into v as encoding/json does. The file must be UTF-8 without
// a byte order mark, at most [MaxBytes], one value and nothing after it,
// with no member given twice in one object at any depth, nested no deeper
// than 64 levels, and valid against schema, a JSON Schema (draft 2020-12)
// that loads nothing from elsewhere. encoding/json would take "Tokens"
// for a field "tokens"; a schema that refuses unknown members
// ("additionalProperties": false, at every level, as the catalog's does)
// has every member spelled exactly.
//
// check, when not nil, runs once v is decoded, for what a schema cannot
// say: it returns nil, or the Pointer of the value at fault and the
// Problem in an [*Error], to which DecodeJSON adds the file, line and
// column.
//
// Every refusal is an [*Error] wrapping [ErrCatalog], naming the file,
// line, column and JSON pointer, in words that never quote a value of
// the file. A schema that does not compile is a fault of the program,
// reported as a plain error.
func DecodeJSON(file string, data, schema []byte, v any, check func() *Error) error {
	sch, err := compileJSONSchema("asu:catalog/decode.schema.json", schema)
	if err != nil {
		return fmt.Errorf("catalog: DecodeJSON: the schema does not compile: %w", err)
	}
	if len(data) > MaxBytes {
		return &Error{File: file, Problem: fmt.Sprintf("larger than %d bytes", MaxBytes)}
	}
	if e := plainText(file, data); e != nil {
		return e
	}
	src := source{name: file, data: data}
	if e := src.validate(sch); e != nil {
		return e
	}
	if e := src.decodeStrict(v); e != nil {
		return e
	}
	if check == nil {
		return nil
	}
	if e := check(); e != nil {
		return src.at(e.Pointer, e.Problem)
	}
	return nil
}

// compileJSONSchema compiles raw, a schema that may load nothing from
// elsewhere: the compiler has no loader but for the meta-schemas. Its
// formats and contents are asserted, so that a schema means what it says.
func compileJSONSchema(url string, raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	comp := jsonschema.NewCompiler()
	comp.AssertFormat()
	comp.AssertContent()
	if err := comp.AddResource(url, doc); err != nil {
		return nil, err
	}
	return comp.Compile(url)
}
