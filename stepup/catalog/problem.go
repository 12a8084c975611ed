package catalog

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// schemaProblem says which rule of the schema a value breaks, in words of
// ours. The validator's own messages quote the value at fault (a pattern
// failure prints the string, a format failure the value and its parser's
// complaint), and a value in a config file may be a secret: an executor
// URL with a password or a token in its query. So this is a list of what
// may be said, not of what may not: each kind names its keyword and what
// the schema wants, never what the file holds; a kind this list does not
// know is named by its keyword alone. Member names are not values: they
// are the file's structure, and its pointers name them anyway.
func schemaProblem(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return "wrong type: got " + k.Got + ", want " + strings.Join(k.Want, " or ")
	case *kind.Enum:
		return "value must be " + oneOf(k.Want)
	case *kind.Const:
		return "value must be " + oneOf([]any{k.Want})
	case *kind.Pattern:
		return "does not match pattern " + schemaQuote(k.Want)
	case *kind.Format:
		return "not a valid " + k.Want + " (format)"
	case *kind.MinLength:
		return fmt.Sprintf("minLength: want at least %d", k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("maxLength: want at most %d", k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("minItems: want at least %d", k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("maxItems: want at most %d", k.Want)
	case *kind.MinProperties:
		return fmt.Sprintf("minProperties: want at least %d", k.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("maxProperties: want at most %d", k.Want)
	case *kind.Minimum:
		return "minimum: want at least " + ratString(k.Want)
	case *kind.Maximum:
		return "maximum: want at most " + ratString(k.Want)
	case *kind.ExclusiveMinimum:
		return "exclusiveMinimum: want more than " + ratString(k.Want)
	case *kind.ExclusiveMaximum:
		return "exclusiveMaximum: want less than " + ratString(k.Want)
	case *kind.MultipleOf:
		return "multipleOf: want a multiple of " + ratString(k.Want)
	case *kind.UniqueItems:
		return fmt.Sprintf("uniqueItems: items %d and %d are equal", k.Duplicates[0], k.Duplicates[1])
	case *kind.Required:
		if len(k.Missing) > 0 {
			return "missing field " + strconv.Quote(k.Missing[0])
		}
	case *kind.AdditionalProperties:
		if len(k.Properties) > 0 {
			return "unknown field " + strconv.Quote(k.Properties[0])
		}
	case *kind.DependentRequired:
		return "dependentRequired: with " + strconv.Quote(k.Prop) + " give " + quoteAll(k.Missing)
	case *kind.Dependency:
		return "dependencies: with " + strconv.Quote(k.Prop) + " give " + quoteAll(k.Missing)
	case *kind.PropertyNames:
		return "a member name the schema does not allow here (propertyNames)"
	case *kind.FalseSchema:
		return "not allowed here"
	}
	if kw := k.KeywordPath(); len(kw) > 0 {
		return "fails the schema's " + strings.Join(kw, "/") + " rule"
	}
	return "does not match the schema"
}

// oneOf is "one of 'a', 'b'" for values the schema lists (they are the
// schema's, not the file's), or "as the schema lists" when one is not a
// plain value.
func oneOf(want []any) string {
	var shown []string
	for _, v := range want {
		switch v := v.(type) {
		case string:
			shown = append(shown, schemaQuote(v))
		case []any, map[string]any:
			return "as the schema lists"
		default:
			shown = append(shown, fmt.Sprint(v))
		}
	}
	if len(shown) == 1 {
		return shown[0]
	}
	return "one of " + strings.Join(shown, ", ")
}

// quoteAll is member names, quoted, with commas.
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// schemaQuote quotes text of the schema as the validator does, in single
// quotes.
func schemaQuote(s string) string {
	q := fmt.Sprintf("%q", s)
	q = strings.ReplaceAll(q, `\"`, `"`)
	q = strings.ReplaceAll(q, `'`, `\'`)
	return "'" + q[1:len(q)-1] + "'"
}

// ratString is a bound of the schema as a decimal.
func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return fmt.Sprint(f)
}
