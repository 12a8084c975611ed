package main

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/agentstepup/asu/stepup/catalog"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// seedCatalog is the catalog of the reference approval program
// (stepuptest.SeedTools): read_file and search_tickets read, write_draft
// reversible, send_email external, issue_refund irreversible up to 500 per
// call. Anything else is denied.
func seedCatalog() (*policy.Catalog, error) {
	return policy.NewCatalog(stepuptest.SeedPolicyVersion, stepuptest.SeedTools()...)
}

// decider is the policy the gateway decides with and what comes with it:
// its tools, the gate options of its approver groups, and the HTTP tools
// of its executor blocks.
type decider struct {
	policy *policy.Catalog
	names  []string
	opts   []gate.Option
	http   []HTTPTool
}

// loadCatalog reads -catalog FILE, or takes tools (a test's) or the seed
// catalog without it, and prints the policy version it decides under.
func loadCatalog(path string, tools []policy.Tool, out io.Writer) (decider, error) {
	if path == "" {
		pol, names, err := catalogOf(tools)
		if err != nil {
			return decider{}, err
		}
		fmt.Fprintf(out, "policy:        %s (the reference program's catalog; -catalog FILE decides with yours)\n", pol.Version())
		return decider{policy: pol, names: names}, nil
	}
	c, err := catalog.ParseFile(path, nil)
	if err != nil {
		return decider{}, err
	}
	d := decider{policy: c.Policy()}
	for _, t := range c.Tools {
		d.names = append(d.names, t.Name)
	}
	groups := c.ApproverGroups()
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		d.opts = append(d.opts, gate.WithApproverGroup(name, groups[name]...))
	}
	d.http = executorsFromCatalog(c.Executors())
	own := "its own version"
	if !c.Declared {
		own = "its content hash: the file gives no version"
	}
	fmt.Fprintf(out, "policy:        %s (%s; %s, %d tools, %d approver groups)\n", c.Version, own, path, len(c.Tools), len(groups))
	var demo []string
	for _, name := range d.names {
		if _, ok := c.Executors()[name]; !ok {
			demo = append(demo, name)
		}
	}
	if len(demo) > 0 {
		fmt.Fprintf(out, "               tools without an executor block run on the demo executor, which prints and runs nothing: %v\n", demo)
	}
	return d, nil
}

// executorsFromCatalog turns the catalog's executor blocks (specs, by
// tool name) into the HTTP tools the gateway POSTs approved calls to,
// signed with -tool-secret-file's secret, each attempt within its
// timeout, retried under the same idempotency key.
func executorsFromCatalog(specs map[string]catalog.Executor) []HTTPTool {
	out := make([]HTTPTool, 0, len(specs))
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		s := specs[name]
		out = append(out, HTTPTool{Tool: name, URL: s.URL, Timeout: s.Timeout, Retries: s.Retries})
	}
	return out
}
