package policy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/internal/cputime"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/catalog"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
)

// chain is a schema whose $defs d0 … d(n-1) each apply the next through
// step (with %[1]s the next one's $ref), d(n-1) being leaf, and whose root
// applies d0.
func chain(n int, step, leaf string) string {
	return chainUnder(`{"$ref":"#/$defs/d0",`, n, step, leaf)
}

// chainUnder is chain with the root's other keywords opening root.
func chainUnder(root string, n int, step, leaf string) string {
	return root + `"$defs":{` + chainDefs(n, step, leaf) + `}}`
}

// chainDefs are the members of chain's $defs.
func chainDefs(n int, step, leaf string) string {
	var defs []string
	for i := range n - 1 {
		ref := fmt.Sprintf(`{"$ref":"#/$defs/d%d"}`, i+1)
		defs = append(defs, fmt.Sprintf(`"d%d":%s`, i, fmt.Sprintf(step, ref)))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":%s`, n-1, leaf))
	return strings.Join(defs, ",")
}

// nest is n objects, each the member key of the next, around 1.
func nest(key string, n int) string {
	return strings.Repeat(`{"`+key+`":`, n) + "1" + strings.Repeat("}", n)
}

// nestArrays is n arrays, each the one element of the next, around 1,
// inside an object's member a.
func nestArrays(n int) string {
	return `{"a":` + strings.Repeat("[", n-1) + "1" + strings.Repeat("]", n-1) + "}"
}

// recursive is a schema whose $defs s is body, with %[1]s standing for a
// subschema that applies s twice, and whose root applies s.
func recursive(body string) string {
	twice := `{"allOf":[{"$ref":"#/$defs/s"},{"$ref":"#/$defs/s"}]}`
	return `{"$ref":"#/$defs/s","$defs":{"s":` + fmt.Sprintf(body, twice) + `}}`
}

const args = `{"content":"x","path":"a.txt"}`

// hostile are schemas and the arguments that make them cost the most,
// whose cost grows with n: exponentially for most, if nothing refuses them.
var hostile = map[string]func(n int) (schema, args string){
	"allOf chain": func(n int) (string, string) {
		return chain(n, `{"allOf":[%[1]s,%[1]s]}`, `{"type":"object"}`), args
	},
	"anyOf chain": func(n int) (string, string) {
		return chain(n, `{"anyOf":[%[1]s,%[1]s]}`, `{"type":"string"}`), args
	},
	"oneOf chain": func(n int) (string, string) {
		return chain(n, `{"oneOf":[%[1]s,%[1]s]}`, `{"type":"string"}`), args
	},
	"not chain": func(n int) (string, string) {
		return chain(n, `{"allOf":[{"not":%[1]s},%[1]s]}`, `{"type":"object"}`), args
	},
	"if then else chain": func(n int) (string, string) {
		return chain(n, `{"if":%[1]s,"then":%[1]s,"else":%[1]s}`, `{"type":"object"}`), args
	},
	"dependentSchemas chain": func(n int) (string, string) {
		return chain(n, `{"dependentSchemas":{"content":%[1]s,"path":%[1]s}}`, `{"type":"object"}`), args
	},
	"wide fan-out": func(n int) (string, string) {
		refs := strings.TrimSuffix(strings.Repeat(`%[1]s,`, n), ",")
		return chain(3, `{"allOf":[`+refs+`]}`, `{"type":"object"}`), args
	},
	"long ref chain": func(n int) (string, string) {
		return chain(n, `%[1]s`, `{"type":"object"}`), args
	},
	"same-value ref cycle": func(n int) (string, string) {
		return chain(n, `{"allOf":[%[1]s,{"$ref":"#/$defs/d0"}]}`, `{"$ref":"#/$defs/d0"}`), args
	},
	"properties cycle": func(n int) (string, string) {
		return recursive(`{"type":"object","properties":{"a":%[1]s}}`), nest("a", n)
	},
	"additionalProperties cycle": func(n int) (string, string) {
		return recursive(`{"type":"object","additionalProperties":%[1]s}`), nest("a", n)
	},
	"patternProperties cycle": func(n int) (string, string) {
		return recursive(`{"type":"object","patternProperties":{"^a$":%[1]s}}`), nest("a", n)
	},
	"unevaluatedProperties cycle": func(n int) (string, string) {
		return recursive(`{"type":"object","unevaluatedProperties":%[1]s}`), nest("a", n)
	},
	"items cycle": func(n int) (string, string) {
		return `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":` +
			`{"type":"array","items":{"allOf":[{"$ref":"#/$defs/s"},{"$ref":"#/$defs/s"}]}}}}`, nestArrays(n)
	},
	"prefixItems cycle": func(n int) (string, string) {
		return `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":` +
			`{"type":"array","prefixItems":[{"allOf":[{"$ref":"#/$defs/s"},{"$ref":"#/$defs/s"}]}]}}}`, nestArrays(n)
	},
	"contains cycle": func(n int) (string, string) {
		return `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":` +
			`{"type":"array","contains":{"allOf":[{"$ref":"#/$defs/s"},{"$ref":"#/$defs/s"}]}}}}`, nestArrays(n)
	},
	"propertyNames chain": func(n int) (string, string) {
		return chainUnder(`{"type":"object","propertyNames":{"$ref":"#/$defs/d0"},`, n,
			`{"allOf":[%[1]s,%[1]s]}`, `{"type":"string"}`), args
	},
	"dynamicRef cycle": func(n int) (string, string) {
		return `{"$dynamicAnchor":"node","type":"object","properties":{"a":` +
			`{"allOf":[{"$dynamicRef":"#node"},{"$dynamicRef":"#node"}]}}}`, nest("a", n)
	},
	"dynamicRef to an anchor no keyword reaches": func(n int) (string, string) {
		return `{"type":"object","properties":{"tags":{"$ref":"https://example.com/strings"}},"$defs":{"list":` +
			`{"$id":"https://example.com/list","type":"array","items":{"$dynamicRef":"#item"},"$defs":{"item":` +
			`{"$dynamicAnchor":"item"}}},"strings":{"$id":"https://example.com/strings","$ref":"list","$defs":` +
			`{"item":{"$dynamicAnchor":"item","$ref":"asu:catalog/t.json#/$defs/d0"}}},` +
			chainDefs(n, `{"allOf":[%[1]s,%[1]s]}`, `{"type":"string"}`) + `}}`, `{"tags":["x"]}`
	},
	"recursiveRef cycle": func(n int) (string, string) {
		return `{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"type":"object",` +
			`"properties":{"a":{"allOf":[{"$recursiveRef":"#"},{"$recursiveRef":"#"}]}}}`, nest("a", n)
	},
	"binary tree": func(n int) (string, string) {
		return `{"type":"object","properties":{"left":{"$ref":"#"},"right":{"$ref":"#"}}}`, nest("left", n)
	},
	"items fan-out over a long array": func(n int) (string, string) {
		return chainUnder(`{"type":"object","properties":{"a":{"type":"array","items":{"$ref":"#/$defs/d0"}}},`, 4,
				`{"allOf":[%[1]s,%[1]s]}`, `{"type":"integer"}`),
			`{"a":[` + strings.TrimSuffix(strings.Repeat("1,", 64*n), ",") + `]}`
	},
}

// checkCost is the CPU time one Decide of args costs under cat, measured
// over enough calls to outlast the clock's granularity.
func checkCost(t *testing.T, cat *policy.Catalog, args string) time.Duration {
	p := plug.Proposal{Tool: "t", Args: json.RawMessage(args)}
	start, calls := cputime.Process(), 0
	for cputime.Process()-start < 20*time.Millisecond && calls < 10000 {
		_, err := cat.Decide(context.Background(), p)
		require.NoError(t, err)
		calls++
	}
	return (cputime.Process() - start) / time.Duration(calls)
}

// TestSchemaWorkIsBounded checks that a schema whose check costs time
// exponential in its size or in the arguments' depth is refused: every
// hostile schema is refused with stepup.ErrConfig, or doubling its
// parameter at most multiplies the cost of a call by growth.
func TestSchemaWorkIsBounded(t *testing.T) {
	const growth = 8
	for name, gen := range hostile {
		t.Run(name, func(t *testing.T) {
			var last time.Duration
			for _, n := range []int{8, 16, 32, 64} {
				schema, args := gen(n)
				cat, err := policy.NewCatalog("v1", policy.Tool{Name: "t", Class: card.ClassRead,
					Schema: json.RawMessage(schema)})
				if err != nil {
					require.ErrorIs(t, err, stepup.ErrConfig, "n=%d", n)
					assert.Contains(t, err.Error(), "simplify it")
					t.Logf("%s, n=%d: refused", name, n)
					last = -1
					continue
				}
				require.NotEqual(t, time.Duration(-1), last, "n=%d is accepted after a smaller n was refused", n)
				cost := checkCost(t, cat, args)
				t.Logf("%s, n=%d: %v a call", name, n, cost)
				if last > 0 && !assert.LessOrEqual(t, cost, growth*last, "n=%d costs %v, n=%d cost %v", n, cost, n/2, last) {
					return
				}
				last = cost
			}
		})
	}
}

// ordinary are schemas of the shapes tool servers publish: generated
// models with $defs and $ref, recursive trees, zod's output, generic types
// through $dynamicRef, and draft-07 definitions.
var ordinary = map[string]string{
	"pydantic": `{"$defs":{"Address":{"properties":{"street":{"type":"string"},"city":{"type":"string"},` +
		`"country":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null}},"required":["street","city"],` +
		`"title":"Address","type":"object"},"Money":{"properties":{"amount":{"type":"string"},"currency":` +
		`{"enum":["EUR","USD"],"type":"string"}},"required":["amount","currency"],"type":"object"},` +
		`"Line":{"properties":{"sku":{"type":"string"},"price":{"$ref":"#/$defs/Money"},"qty":{"type":"integer"}},` +
		`"type":"object"}},"properties":{"billing":{"$ref":"#/$defs/Address"},"shipping":{"anyOf":` +
		`[{"$ref":"#/$defs/Address"},{"type":"null"}]},"lines":{"items":{"$ref":"#/$defs/Line"},"type":"array"},` +
		`"total":{"$ref":"#/$defs/Money"},"discount":{"anyOf":[{"$ref":"#/$defs/Money"},{"type":"null"}]}},` +
		`"required":["billing","lines","total"],"title":"Order","type":"object"}`,
	"tree": `{"$ref":"#/$defs/Node","$defs":{"Node":{"type":"object","properties":{"name":{"type":"string"},` +
		`"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}},"required":["name"]}}}`,
	"zod": `{"type":"object","properties":{"query":{"type":"string","minLength":1},"filters":{"type":"array",` +
		`"items":{"anyOf":[{"type":"object","properties":{"kind":{"type":"string","const":"tag"},"tag":{"type":"string"}},` +
		`"required":["kind","tag"],"additionalProperties":false},{"type":"object","properties":{"kind":{"type":"string",` +
		`"const":"range"},"from":{"type":"number"},"to":{"type":"number"}},"required":["kind","from","to"],` +
		`"additionalProperties":false}]}},"limit":{"type":"integer","exclusiveMinimum":0,"maximum":100}},` +
		`"required":["query"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`,
	"binary tree": `{"type":"object","properties":{"value":{"type":"integer"},"left":{"$ref":"#"},"right":{"$ref":"#"}}}`,
	"generic list": `{"type":"object","properties":{"tags":{"$ref":"https://example.com/strings"}},"$defs":{"list":` +
		`{"$id":"https://example.com/list","type":"array","items":{"$dynamicRef":"#item"},"$defs":{"item":` +
		`{"$dynamicAnchor":"item"}}},"strings":{"$id":"https://example.com/strings","$ref":"list","$defs":` +
		`{"item":{"$dynamicAnchor":"item","type":"string"}}}}}`,
	"draft-07 definitions": `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"file":` +
		`{"type":"object","properties":{"path":{"type":"string"},"mode":{"enum":["r","w"]}}}},"type":"object",` +
		`"properties":{"from":{"$ref":"#/definitions/file"},"to":{"$ref":"#/definitions/file"}}}`,
	"catalog file":       string(catalog.Schema),
	"catalog tests file": string(catalog.TestsSchema),
}

// TestOrdinarySchemasAreAccepted checks that the bound on a schema's work
// refuses no schema of an ordinary shape, nor any catalog of this
// repository.
func TestOrdinarySchemasAreAccepted(t *testing.T) {
	for name, schema := range ordinary {
		_, err := policy.NewCatalog("v1", policy.Tool{Name: "t", Class: card.ClassRead, Schema: json.RawMessage(schema)})
		assert.NoError(t, err, name)
	}
	for _, f := range []string{"../../examples/service/catalog.json", "../../examples/mcp/catalog.json",
		"../catalog/testdata/full.json"} {
		_, err := catalog.ParseFile(f, &catalog.Options{RefKinds: []string{"path", "file", "url"}})
		assert.NoError(t, err, f)
	}
}

// TestSchemaIsCheckedOnlyWithinCanonsDepth checks that arguments nested
// past canon's limit are denied without the schema being checked: the
// bound on its work holds only to that depth.
func TestSchemaIsCheckedOnlyWithinCanonsDepth(t *testing.T) {
	cat, err := policy.NewCatalog("v1", policy.Tool{Name: "t", Class: card.ClassRead,
		Schema: json.RawMessage(`{"type":"object"}`)})
	require.NoError(t, err)
	for args, reason := range map[string]string{
		nest("a", 64):   "read effect",
		nest("a", 65):   "arguments must be a canonical JSON object",
		nest("a", 1000): "arguments must be a canonical JSON object",
		`{"a":`:         "arguments are not JSON",
	} {
		d, err := cat.Decide(context.Background(), plug.Proposal{Tool: "t", Args: json.RawMessage(args)})
		require.NoError(t, err)
		assert.Equal(t, reason, d.Reason, "%.20s", args)
	}
}
