package catalog

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/plug"
)

// TestsSchema is the JSON Schema of a catalog's test file.
//
//go:embed tests.schema.json
var TestsSchema []byte

var testsSchema = sync.OnceValue(func() *jsonschema.Schema {
	return compileSchema("asu:catalog/tests.schema.json", TestsSchema)
})

// DefaultPrincipal is whom a test case's call runs as when neither the
// case nor the file names a principal.
var DefaultPrincipal = canon.Principal{User: "user:test", Agent: "agent:test"}

// Tests is a catalog's test file: calls, and the decision each must get.
// Policies live in version control with tests for what they must allow
// and what they must deny; [Catalog.Check] runs them.
type Tests struct {
	File  string
	Cases []Case
}

// Case is one call of a test file and the decision it must get.
type Case struct {
	Name      string           `json:"name"`
	Tool      string           `json:"tool"`
	Args      json.RawMessage  `json:"args"`
	Principal *canon.Principal `json:"principal,omitempty"`
	Taint     []string         `json:"taint,omitempty"`
	Want      Want             `json:"want"`
	// Line is where the case starts in its file.
	Line int `json:"-"`
}

// Want is the decision a case must get. Decision is "allow", "deny" or
// "needs_approval"; Reason, when set, must be part of the policy's
// reason; Approvers, when set, is who decides: the approver group's name,
// or the user the call runs for when the tool names no group; Quorum,
// when set, is how many must approve.
type Want struct {
	Decision  string `json:"decision"`
	Reason    string `json:"reason,omitempty"`
	Approvers string `json:"approvers,omitempty"`
	Quorum    int    `json:"quorum,omitempty"`
}

type testsJSON struct {
	Schema    string           `json:"$schema,omitempty"`
	Principal *canon.Principal `json:"principal,omitempty"`
	Cases     []Case           `json:"cases"`
}

// ParseTestsFile reads the test file at path.
func ParseTestsFile(path string) (*Tests, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Problem: "cannot open: " + openProblem(err)}
	}
	defer f.Close()
	return ParseTests(f, path)
}

// ParseTests reads a test file, validated with [TestsSchema]; name
// names it in errors. Each case's arguments must be canonicalizable and
// its principal well-formed.
func ParseTests(r io.Reader, name string) (*Tests, error) {
	data, err := readLimited(name, r, MaxBytes)
	if err != nil {
		return nil, err
	}
	src := source{name: name, data: data}
	if e := src.validate(testsSchema()); e != nil {
		return nil, e
	}
	var f testsJSON
	if e := src.decodeStrict(&f); e != nil {
		return nil, e
	}
	def := DefaultPrincipal
	if f.Principal != nil {
		if err := f.Principal.Check(); err != nil {
			return nil, src.at("/principal", "not a principal: "+err.Error())
		}
		def = *f.Principal
	}
	t := &Tests{File: name, Cases: f.Cases}
	for i := range t.Cases {
		c := &t.Cases[i]
		ptr := "/cases/" + strconv.Itoa(i)
		if off, ok := offsetOf(data, ptr); ok {
			c.Line, _ = src.position(off)
		}
		if c.Principal == nil {
			p := def
			c.Principal = &p
		} else if err := c.Principal.Check(); err != nil {
			return nil, src.at(ptr+"/principal", "not a principal: "+err.Error())
		}
		args, err := canon.Canonicalize(c.Args)
		if err != nil {
			return nil, src.at(ptr+"/args", "arguments the gate cannot hash: "+canonProblem(err))
		}
		c.Args = args
		if c.Want.Decision != string(plug.NeedsApproval) && (c.Want.Approvers != "" || c.Want.Quorum != 0) {
			return nil, src.at(ptr+"/want", "approvers and quorum are for needs_approval")
		}
	}
	return t, nil
}

// Outcome is the decision a case got.
type Outcome struct {
	Decision  string
	Reason    string
	Approvers string   // the group, or the user the call runs for
	Members   []string // the group's members, when the catalog defines it
	Quorum    int      // at least 1 when the call needs approval
}

// String is the outcome as a report shows it.
func (o Outcome) String() string {
	s := o.Decision
	if o.Decision == string(plug.NeedsApproval) {
		s += " by " + o.Approvers
		if len(o.Members) > 0 {
			s += " (" + strings.Join(o.Members, ", ") + ")"
		}
		s += " quorum " + strconv.Itoa(o.Quorum)
	}
	if o.Reason != "" {
		s += ": " + strconv.Quote(o.Reason)
	}
	return s
}

// Result is one case run: what it got, and each way that differs from
// what it wants (none: it passed).
type Result struct {
	Case     Case
	Got      Outcome
	Mismatch []string
}

// Report is a test file run against a catalog.
type Report struct {
	Catalog, Version, Tests string
	Results                 []Result
}

// Failed is how many cases did not get the decision they want.
func (r *Report) Failed() int {
	n := 0
	for _, res := range r.Results {
		if len(res.Mismatch) > 0 {
			n++
		}
	}
	return n
}

// Check runs every case of tests through the catalog's policy, as the
// gate's policy decides the call at propose time, and reports each. It
// runs the policy alone: a grant that covers a call, or a flood limit
// that refuses it, is the gate's and the store's, not the catalog's.
func (c *Catalog) Check(ctx context.Context, tests *Tests) (*Report, error) {
	if c.policy == nil {
		return nil, fmt.Errorf("%w: a catalog comes from Parse", ErrCatalog)
	}
	groups := c.ApproverGroups()
	rep := &Report{Catalog: c.File, Version: c.Version, Tests: tests.File}
	for _, tc := range tests.Cases {
		p := DefaultPrincipal
		if tc.Principal != nil {
			p = *tc.Principal
		}
		d, err := c.policy.Decide(ctx, plug.Proposal{Tool: tc.Tool, Args: tc.Args, Principal: p,
			Taint: slices.Clone(tc.Taint), Session: "policy-test", Task: "policy-test"})
		if err != nil {
			return nil, fmt.Errorf("%w: case %q: %v", ErrCatalog, tc.Name, err)
		}
		got := Outcome{Decision: string(d.Verdict), Reason: d.Reason}
		if d.Verdict == plug.NeedsApproval {
			got.Approvers, got.Quorum = d.Approvers, max(d.Quorum, 1)
			if got.Approvers == "" {
				got.Approvers = p.User
			}
			// Who may decide, as the gate reckons it: never the
			// requester's agent or delegations, even as members.
			got.Members = slices.DeleteFunc(groups[d.Approvers], func(u string) bool {
				return u == p.Agent || slices.Contains(p.Delegations, u)
			})
		}
		rep.Results = append(rep.Results, Result{Case: tc, Got: got, Mismatch: mismatch(tc.Want, got)})
	}
	return rep, nil
}

func mismatch(w Want, got Outcome) []string {
	var out []string
	if w.Decision != got.Decision {
		out = append(out, "decision")
	}
	if w.Reason != "" && !strings.Contains(got.Reason, w.Reason) {
		out = append(out, "reason")
	}
	if w.Approvers != "" && w.Approvers != got.Approvers {
		out = append(out, "approvers")
	}
	if w.Quorum != 0 && w.Quorum != got.Quorum {
		out = append(out, "quorum")
	}
	return out
}

// String is the want as a report shows it.
func (w Want) String() string {
	s := w.Decision
	if w.Approvers != "" {
		s += " by " + w.Approvers
	}
	if w.Quorum != 0 {
		s += " quorum " + strconv.Itoa(w.Quorum)
	}
	if w.Reason != "" {
		s += ": reason containing " + strconv.Quote(w.Reason)
	}
	return s
}

// Write prints the report, diff-like: each failing case with its file
// and line, what it wants ("-") and what it got ("+"), then a summary
// line. With verbose, passing cases are listed too.
func (r *Report) Write(w io.Writer, verbose bool) error {
	var b strings.Builder
	for _, res := range r.Results {
		where := r.Tests + ":" + strconv.Itoa(res.Case.Line)
		if len(res.Mismatch) == 0 {
			if verbose {
				fmt.Fprintf(&b, "ok   %s: %s: %s\n", where, res.Case.Name, res.Got)
			}
			continue
		}
		fmt.Fprintf(&b, "FAIL %s: %s (%s differs)\n", where, res.Case.Name, strings.Join(res.Mismatch, ", "))
		fmt.Fprintf(&b, "  - want %s\n", res.Case.Want)
		fmt.Fprintf(&b, "  + got  %s\n", res.Got)
	}
	n := len(r.Results)
	if f := r.Failed(); f > 0 {
		fmt.Fprintf(&b, "FAIL %d of %d cases under policy %s (%s)\n", f, n, r.Version, or(r.Catalog, "catalog"))
	} else {
		fmt.Fprintf(&b, "ok   %d cases under policy %s (%s)\n", n, r.Version, or(r.Catalog, "catalog"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
