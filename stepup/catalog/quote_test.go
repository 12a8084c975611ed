package catalog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agentstepup/asu/stepup/catalog"
)

// secrets are values an operator might paste into a config file: each
// holds a core that must never appear in a refusal.
var secrets = []struct{ value, core string }{
	{"HUNTER2PASS", "HUNTER2PASS"},
	{"sk_live_9ZqHUNTER2", "9ZqHUNTER2"},
	{"Pässwört-Ω", "Pässwört"},
	{"tok-0xDEADBEEF", "0xDEADBEEF"},
	{"A very secret phrase", "very secret"},
}

// numericSecret is a number that must not appear in a refusal either.
const numericSecret = "987654321"

// js is s as a JSON string.
func js(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// leakCase is a file that breaks one rule of its schema with a value
// holding a secret; the refusal must name where and what rule, not the
// value.
type leakCase struct {
	name, doc, pointer string
	rules              []string // the refusal names one of these
}

// catalogLeaks breaks each kind of rule the catalog schema has, on each
// field it has that kind of rule on, with secret s: on line 4 of a doc.
func catalogLeaks(s string) []leakCase {
	long := func(n int) string { return s + strings.Repeat("a", n) }
	tool := func(field string) string { return doc("", `{"name": "a", "class": "irreversible", `+field+`}`) }
	return []leakCase{
		{"url with a password, other scheme", tool(`"executor": {"url": ` + js("ftp://svc:"+s+"@tools.internal/r") + `}`), "/tools/0/executor/url", []string{"pattern"}},
		{"url after a space", tool(`"executor": {"url": ` + js(" https://svc:"+s+"@tools.internal/r") + `}`), "/tools/0/executor/url", []string{"pattern"}},
		{"url in capitals then junk", tool(`"executor": {"url": ` + js("HTTPX://"+s) + `}`), "/tools/0/executor/url", []string{"pattern"}},
		{"url too long", tool(`"executor": {"url": ` + js("https://t.test/?token="+long(2100)) + `}`), "/tools/0/executor/url", []string{"maxLength"}},
		{"executor timeout", tool(`"executor": {"url": "https://t.test/r", "timeout": ` + js(s) + `}`), "/tools/0/executor/timeout", []string{"pattern", "minLength", "maxLength"}},
		{"title too long", tool(`"title": ` + js(long(300))), "/tools/0/title", []string{"maxLength"}},
		{"audience too long", tool(`"audience": ` + js(long(300))), "/tools/0/audience", []string{"maxLength"}},
		{"class", doc("", `{"name": "a", "class": `+js(s)+`}`), "/tools/0/class", []string{"must be one of"}},
		{"timeout outcome", tool(`"timeout": {"outcome": ` + js(s) + `}`), "/tools/0/timeout/outcome", []string{"must be one of"}},
		{"timeout after", tool(`"timeout": {"after": ` + js(s) + `}`), "/tools/0/timeout/after", []string{"pattern", "maxLength"}},
		{"escalate to", tool(`"timeout": {"escalate_to": ` + js(s+"!") + `}`), "/tools/0/timeout/escalate_to", []string{"pattern"}},
		{"fixed currency", tool(`"card": {"fixed_currency": ` + js(s) + `}`), "/tools/0/card/fixed_currency", []string{"pattern"}},
		{"card label a number", tool(`"card": {"labels": {"x": ` + numericSecret + `}}`), "/tools/0/card/labels/x", []string{"want string"}},
		{"reference kind", tool(`"refs": {"p": ` + js(s) + `}`), "/tools/0/refs/p", []string{"pattern"}},
		{"approvers", tool(`"approvers": ` + js(s+"!")), "/tools/0/approvers", []string{"pattern"}},
		{"tool name", doc("", `{"name": `+js(s+"!")+`, "class": "read"}`), "/tools/0/name", []string{"pattern"}},
		{"tool name too long", doc("", `{"name": `+js(strings.ReplaceAll(long(200), " ", "_"))+`, "class": "read"}`), "/tools/0/name", []string{"maxLength", "pattern"}},
		{"quorum a string", tool(`"quorum": ` + js(s)), "/tools/0/quorum", []string{"want integer"}},
		{"quorum too large", tool(`"quorum": ` + numericSecret), "/tools/0/quorum", []string{"maximum"}},
		{"args bytes too large", tool(`"max_args_bytes": ` + numericSecret), "/tools/0/max_args_bytes", []string{"maximum"}},
		{"args bytes not whole", tool(`"max_args_bytes": ` + numericSecret + `.5`), "/tools/0/max_args_bytes", []string{"want integer"}},
		{"length negative", tool(`"max_length": {"s": -` + numericSecret + `}`), "/tools/0/max_length/s", []string{"minimum"}},
		{"retries too many", tool(`"executor": {"url": "https://t.test/r", "retries": ` + numericSecret + `}`), "/tools/0/executor/retries", []string{"maximum"}},
		{"unattended a string", tool(`"unattended": ` + js(s)), "/tools/0/unattended", []string{"want boolean"}},
		{"trusted an empty name", tool(`"trusted": [""]`), "/tools/0/trusted/0", []string{"minLength"}},
		{"group name", doc(`{"name": `+js(s+"!")+`, "members": ["user:ann"]}`, `{"name": "a", "class": "read"}`), "/groups/0/name", []string{"pattern"}},
		{"member a number", doc(`{"name": "g", "members": [`+numericSecret+`]}`, `{"name": "a", "class": "read"}`), "/groups/0/members/0", []string{"want string"}},
	}
}

// TestSchemaRefusalsQuoteNoValue: whichever rule of the catalog schema a
// value breaks, on whichever field, the refusal names the file, line,
// column, pointer and rule, and never the value, with every spelling of
// secret.
func TestSchemaRefusalsQuoteNoValue(t *testing.T) {
	for _, sec := range secrets {
		for _, tc := range catalogLeaks(sec.value) {
			t.Run(sec.core+"/"+tc.name, func(t *testing.T) {
				_, err := catalog.Parse(strings.NewReader(tc.doc), &catalog.Options{File: "team.json"})
				assertPlacedWithoutValue(t, err, "team.json", tc, sec.core)
			})
		}
	}
}

// assertPlacedWithoutValue checks a refusal of tc names the file, line,
// column, pointer and rule, and none of secret or numericSecret.
func assertPlacedWithoutValue(t *testing.T, err error, file string, tc leakCase, secret string) {
	t.Helper()
	var ce *catalog.Error
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, catalog.ErrCatalog)
	msg := err.Error()
	assert.NotContains(t, msg, secret)
	assert.NotContains(t, msg, numericSecret)
	assert.Equal(t, file, ce.File)
	assert.Positive(t, ce.Line, msg)
	assert.Positive(t, ce.Column, msg)
	assert.Equal(t, tc.pointer, ce.Pointer, msg)
	named := false
	for _, r := range tc.rules {
		named = named || strings.Contains(ce.Problem, r)
	}
	assert.True(t, named, "%s names none of %q", msg, tc.rules)
	assert.True(t, strings.HasPrefix(msg, fmt.Sprintf("%s:%d:%d: %s: ", file, ce.Line, ce.Column, tc.pointer)), msg)
}

// keywordSchema has a field for each kind of rule a JSON Schema can set
// on a value, beyond what the catalog schema uses.
const keywordSchema = `{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "const": {"const": "fixed"},
    "enum": {"enum": ["a", "b", 3]},
    "enumObject": {"enum": [{"a": 1}, "b"]},
    "email": {"type": "string", "format": "email"},
    "uri": {"type": "string", "format": "uri"},
    "time": {"type": "string", "format": "date-time"},
    "ipv4": {"type": "string", "format": "ipv4"},
    "hostname": {"type": "string", "format": "hostname"},
    "base64": {"type": "string", "contentEncoding": "base64"},
    "json": {"type": "string", "contentMediaType": "application/json"},
    "minLength": {"type": "string", "minLength": 60},
    "maxLength": {"type": "string", "maxLength": 3},
    "pattern": {"type": "string", "pattern": "^x+$"},
    "not": {"not": {"type": "string"}},
    "anyOf": {"anyOf": [{"type": "integer"}, {"pattern": "^x"}]},
    "oneOf": {"oneOf": [{"type": "string"}, {"minLength": 1}]},
    "allOf": {"allOf": [{"type": "string"}, {"pattern": "^x"}]},
    "ifThen": {"if": {"type": "string"}, "then": {"pattern": "^x"}},
    "multipleOf": {"type": "number", "multipleOf": 7},
    "exclusiveMinimum": {"type": "number", "exclusiveMinimum": 987654322},
    "exclusiveMaximum": {"type": "number", "exclusiveMaximum": 5},
    "unique": {"type": "array", "uniqueItems": true},
    "contains": {"type": "array", "contains": {"const": "x"}},
    "minItems": {"type": "array", "minItems": 3},
    "maxItems": {"type": "array", "maxItems": 1},
    "minProperties": {"type": "object", "minProperties": 3},
    "maxProperties": {"type": "object", "maxProperties": 0},
    "dependentRequired": {"type": "object", "dependentRequired": {"a": ["b"]}},
    "never": false
  }
}`

// keywordLeaks breaks each rule of keywordSchema with secret s.
func keywordLeaks(s string) []leakCase {
	field := func(name, value string, rules ...string) leakCase {
		return leakCase{name, "{\n  " + js(name) + ": " + value + "\n}", "/" + name, rules}
	}
	return []leakCase{
		field("const", js(s), "value must be 'fixed'"),
		field("enum", js(s), "one of 'a', 'b', 3"),
		field("enumObject", js(s), "as the schema lists"),
		field("email", js(s+"@@"), "email"),
		field("uri", js("::"+s), "uri"),
		field("time", js(s), "date-time"),
		field("ipv4", js(s), "ipv4"),
		field("hostname", js(s+"!"), "hostname"),
		field("base64", js(s+"!"), "contentEncoding"),
		field("json", js("{"+s), "contentMediaType"),
		field("minLength", js(s), "minLength"),
		field("maxLength", js(s), "maxLength"),
		field("pattern", js(s), "pattern"),
		field("not", js(s), "not"),
		field("anyOf", js(s), "integer", "pattern", "anyOf"),
		field("oneOf", js(s), "oneOf"),
		field("allOf", js(s), "pattern", "allOf"),
		field("ifThen", js(s), "pattern"),
		field("multipleOf", numericSecret, "multipleOf"),
		field("exclusiveMinimum", numericSecret, "exclusiveMinimum"),
		field("exclusiveMaximum", numericSecret, "exclusiveMaximum"),
		field("unique", "["+js(s)+", "+js(s)+"]", "uniqueItems"),
		{"contains", "{\n  \"contains\": [" + js(s) + "]\n}", "/contains/0", []string{"value must be 'x'"}},
		field("minItems", "["+js(s)+"]", "minItems"),
		field("maxItems", "["+js(s)+", "+js(s)+"]", "maxItems"),
		field("minProperties", `{"a": `+js(s)+`}`, "minProperties"),
		field("maxProperties", `{"a": `+js(s)+`}`, "maxProperties"),
		field("dependentRequired", `{"a": `+js(s)+`}`, `"b"`),
		field("never", js(s), "not allowed"),
	}
}

// TestDecodeJSONRefusalsQuoteNoValue: the same for every kind of rule a
// program's own schema may set, through DecodeJSON.
func TestDecodeJSONRefusalsQuoteNoValue(t *testing.T) {
	for _, sec := range secrets {
		for _, tc := range keywordLeaks(sec.value) {
			t.Run(sec.core+"/"+tc.name, func(t *testing.T) {
				var v any
				err := catalog.DecodeJSON("conf.json", []byte(tc.doc), []byte(keywordSchema), &v, nil)
				assertPlacedWithoutValue(t, err, "conf.json", tc, sec.core)
				assert.Equal(t, 2, errLine(err), "%v", err)
			})
		}
	}
}

func errLine(err error) int {
	var ce *catalog.Error
	if errors.As(err, &ce) {
		return ce.Line
	}
	return 0
}

// TestValidatorQuotesValues is why the refusals above are written in
// words of ours: the validator's own message for the same violations
// quotes the value, secret and all (the catalog printed it once).
func TestValidatorQuotesValues(t *testing.T) {
	sec := secrets[0]
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(keywordSchema))
	require.NoError(t, err)
	require.NoError(t, c.AddResource("k.json", doc))
	sch, err := c.Compile("k.json")
	require.NoError(t, err)
	p := message.NewPrinter(language.English)
	for _, tc := range keywordLeaks(sec.value) {
		if tc.name != "pattern" && tc.name != "email" && tc.name != "time" {
			continue
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tc.doc)))
		require.NoError(t, err)
		var ve *jsonschema.ValidationError
		require.ErrorAs(t, sch.Validate(inst), &ve)
		for len(ve.Causes) > 0 {
			ve = ve.Causes[0]
		}
		assert.Contains(t, ve.ErrorKind.LocalizedString(p), sec.core, tc.name)
	}
}

// TestSyntaxErrorQuotesNoCharacter: a file that is not JSON is refused
// at the character at fault, which the refusal places but does not
// print.
func TestSyntaxErrorQuotesNoCharacter(t *testing.T) {
	for _, c := range []string{"Q", "Z", "é", "'", `\`, "!"} {
		body := "{\n\"tools\": [" + c + "]\n}"
		_, err := catalog.Parse(strings.NewReader(body), &catalog.Options{File: "c.json"})
		var ce *catalog.Error
		require.ErrorAs(t, err, &ce, c)
		assert.Equal(t, 2, ce.Line, "%v", err)
		assert.Contains(t, ce.Problem, "not JSON: invalid character", "%v", err)
		assert.NotContains(t, ce.Problem, "'"+c+"'", "%v", err)
	}
}

// TestFileAsAWholeRefusals: a byte order mark and an empty file are said
// so, not reported as bad JSON.
func TestFileAsAWholeRefusals(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"byte order mark", "\ufeff{\"tools\": []}", "byte order mark"},
		{"byte order mark alone", "\ufeff", "byte order mark"},
		{"empty", "", "empty"},
		{"white space", " \n\t\r\n", "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := catalog.Parse(strings.NewReader(tc.body), &catalog.Options{File: "c.json"})
			assert.ErrorIs(t, err, catalog.ErrCatalog)
			assert.ErrorContains(t, err, tc.want)
			var v any
			err = catalog.DecodeJSON("d.json", []byte(tc.body), []byte(`{"type": "object"}`), &v, nil)
			assert.ErrorIs(t, err, catalog.ErrCatalog)
			assert.ErrorContains(t, err, "d.json")
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
