package catalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/catalog"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

const teamCatalog = `{
  "version": "2026-12-02.1",
  "groups": [{"name": "admins", "members": ["user:ann", "user:bob"]}],
  "tools": [
    {"name": "lookup_order", "class": "read"},
    {"name": "delete_customer", "class": "irreversible", "approvers": "admins", "quorum": 2,
     "executor": {"url": "https://tools.internal/delete", "timeout": "10s", "retries": 2}}
  ]
}`

// A catalog file gives the gate its policy and approver groups; the
// executor blocks say where the service runs each tool.
func ExampleParse() {
	c, err := catalog.Parse(strings.NewReader(teamCatalog), &catalog.Options{File: "team.json"})
	if err != nil {
		panic(err)
	}
	opts := []gate.Option{gate.WithExecutor("lookup_order", plug.ExecutorFunc(
		func(context.Context, canon.Effect, string) ([]byte, error) { return []byte(`{}`), nil }))}
	for name, members := range c.ApproverGroups() {
		opts = append(opts, gate.WithApproverGroup(name, members...))
	}
	st := stepuptest.Memory(stepuptest.NewClock(stepuptest.Start()))
	g, err := gate.New(st, c.Policy(), stepuptest.Passkeys(st), opts...)
	if err != nil {
		panic(err)
	}
	tk, err := g.Propose(context.Background(), stepup.Call{Tool: "delete_customer", Args: json.RawMessage(`{"customer":"c-1"}`),
		Session: "s-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:support"}})
	fmt.Println(c.Version, tk.Status, err)
	fmt.Printf("%+v\n", c.Executors()["delete_customer"])
	// Output:
	// 2026-12-02.1 pending <nil>
	// {URL:https://tools.internal/delete Timeout:10s Retries:2}
}

// A refusal names the file, line, column and field.
func ExampleParse_refusal() {
	_, err := catalog.Parse(strings.NewReader(`{
  "tools": [
    {"name": "delete_customer", "class": "irreversible", "approvers": "admins", "quorum": 2}
  ]
}`), &catalog.Options{File: "team.json"})
	fmt.Println(err)
	// Output:
	// team.json:3:71: /tools/0/approvers: names group "admins", which groups does not define
}

// A test file pins the decisions a catalog must make; Check reports each
// case that differs, with its line.
func ExampleCatalog_Check() {
	c, _ := catalog.Parse(strings.NewReader(teamCatalog), &catalog.Options{File: "team.json"})
	tests, err := catalog.ParseTests(strings.NewReader(`{"cases": [
  {"name": "lookups run", "tool": "lookup_order", "args": {"order": "A-17"}, "want": {"decision": "allow"}},
  {"name": "deleting needs two admins", "tool": "delete_customer", "args": {"customer": "c-1"},
   "want": {"decision": "needs_approval", "approvers": "admins", "quorum": 2}},
  {"name": "deleting is never unattended", "tool": "delete_customer", "args": {"customer": "c-1"},
   "want": {"decision": "allow"}}
]}`), "team.test.json")
	if err != nil {
		panic(err)
	}
	rep, err := c.Check(context.Background(), tests)
	if err != nil {
		panic(err)
	}
	_ = rep.Write(os.Stdout, false)
	// Output:
	// FAIL team.test.json:5: deleting is never unattended (decision differs)
	//   - want allow
	//   + got  needs_approval by admins (user:ann, user:bob) quorum 2: "irreversible effect"
	// FAIL 1 of 3 cases under policy 2026-12-02.1 (team.json)
}

// Compare lists what changes between two versions of a catalog.
func ExampleCompare() {
	old, _ := catalog.Parse(strings.NewReader(teamCatalog), nil)
	new, _ := catalog.Parse(strings.NewReader(strings.NewReplacer(`2026-12-02.1`, `2026-12-03.1`,
		`"quorum": 2,`, ``).Replace(teamCatalog)), nil)
	_ = catalog.Compare(old, new).Write(os.Stdout)
	// Output:
	// policy version: 2026-12-02.1 -> 2026-12-03.1
	//   once 2026-12-03.1 serves, approvals made under 2026-12-02.1 and not yet executed are void: Execute refuses them, and their calls must be proposed again
	// ~ tool delete_customer: /quorum: 2 -> (none)
}

// ParseFile names the file in its errors; an accepted file gives its
// groups and executor specs.
func ExampleParseFile() {
	c, err := catalog.ParseFile("testdata/full.json", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Version, len(c.Tools), c.ApproverGroups()["finance"])
	_, err = catalog.ParseFile("testdata/missing.json", nil)
	fmt.Println(err)
	// Output:
	// 2026-12-02.1 4 [user:ann user:bob]
	// testdata/missing.json: cannot open: no such file or directory
}

// A test file that is itself wrong is refused like a catalog, on its
// line.
func ExampleParseTests() {
	_, err := catalog.ParseTests(strings.NewReader(`{"cases": [
  {"name": "refunds wait", "tool": "issue_refund", "args": {"amount": 50},
   "want": {"decision": "pending"}}
]}`), "team.test.json")
	fmt.Println(err)
	// Output:
	// team.test.json:3:25: /cases/0/want/decision: value must be one of 'allow', 'deny', 'needs_approval'
}

// Build lets a program add what only it knows to each tool's policy
// entry, here a description from the tool's server, which the card shows
// only as untrusted text.
func ExampleCatalog_Build() {
	c, _ := catalog.Parse(strings.NewReader(teamCatalog), nil)
	pol, err := c.Build(func(t catalog.Tool, pt *policy.Tool) error {
		pt.Description = "served by the support tool server"
		return nil
	})
	if err != nil {
		panic(err)
	}
	d, _ := pol.Decide(context.Background(), plug.Proposal{Tool: "lookup_order", Args: []byte(`{}`)})
	fmt.Println(d.Verdict, d.Description)
	// Output:
	// allow served by the support tool server
}

// Marshal writes a catalog file that Parse reads back; without a version
// the content hash stands.
func ExampleMarshal() {
	raw, err := catalog.Marshal("", []catalog.Tool{{Name: "lookup_order", Class: "read"}}, nil)
	if err != nil {
		panic(err)
	}
	c, err := catalog.Parse(bytes.NewReader(raw), nil)
	fmt.Println(c.Declared, c.Version[:7], err)
	fmt.Println(catalog.DefaultTests("team/catalog.json"))
	// Output:
	// false sha256: <nil>
	// team/catalog.test.json
}

// DecodeJSON reads a program's own config file as strictly as a
// catalog: against the program's schema, then with check for what the
// schema cannot say, every refusal on its line and field.
func ExampleDecodeJSON() {
	schema := []byte(`{
  "type": "object", "required": ["mirrors"], "additionalProperties": false,
  "properties": {"mirrors": {"type": "array", "items": {"type": "string", "pattern": "^https://"}}}
}`)
	var conf struct {
		Mirrors []string `json:"mirrors"`
	}
	read := func(data string) error {
		return catalog.DecodeJSON("mirrors.json", []byte(data), schema, &conf, func() *catalog.Error {
			for i, m := range conf.Mirrors {
				if slices.Index(conf.Mirrors, m) < i {
					return &catalog.Error{Pointer: fmt.Sprintf("/mirrors/%d", i), Problem: "a mirror given twice"}
				}
			}
			return nil
		})
	}
	fmt.Println(read(`{"mirrors": ["https://a.test", "https://b.test"]}`), conf.Mirrors)
	fmt.Println(read("{\n  \"mirrors\": [\"https://a.test\", \"http://user:pass@b.test\"]\n}"))
	fmt.Println(read("{\n  \"mirrors\": [\"https://a.test\"],\n  \"Mirrors\": []\n}"))
	fmt.Println(read("{\n  \"mirrors\": [\"https://a.test\",\n    \"https://a.test\"]\n}"))
	// Output:
	// <nil> [https://a.test https://b.test]
	// mirrors.json:2:33: /mirrors/1: does not match pattern '^https://'
	// mirrors.json:3:14: /Mirrors: unknown field "Mirrors"
	// mirrors.json:3:5: /mirrors/1: a mirror given twice
}
