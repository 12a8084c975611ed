package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"

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

// decider is the policy the gateway decides with and the gate options
// that come with it: the approver groups and each tool's executor.
type decider struct {
	policy *policy.Catalog
	opts   []gate.Option
}

// loadCatalog reads -catalog FILE, or takes the seed catalog without it,
// and prints the policy version it decides under. demo runs the tools
// that name no executor block.
func loadCatalog(path string, demo gate.Executor, out io.Writer) (decider, error) {
	if path == "" {
		pol, err := seedCatalog()
		if err != nil {
			return decider{}, err
		}
		fmt.Fprintf(out, "policy:        %s (the reference program's catalog; -catalog FILE decides with yours)\n", pol.Version())
		var opts []gate.Option
		for _, tool := range tools {
			opts = append(opts, gate.WithExecutor(tool, demo))
		}
		return decider{policy: pol, opts: opts}, nil
	}
	c, err := catalog.ParseFile(path, nil)
	if err != nil {
		return decider{}, err
	}
	execs, err := executorsFromCatalog(c.Executors(), demo)
	if err != nil {
		return decider{}, fmt.Errorf("%s: %w", path, err)
	}
	var opts []gate.Option
	var demoRun []string
	for _, t := range c.Tools {
		e, ok := execs[t.Name]
		if !ok {
			e = demo
			demoRun = append(demoRun, t.Name)
		}
		opts = append(opts, gate.WithExecutor(t.Name, e))
	}
	groups := c.ApproverGroups()
	names := make([]string, 0, len(groups))
	for name := range groups {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		opts = append(opts, gate.WithApproverGroup(name, groups[name]...))
	}
	own := "its own version"
	if !c.Declared {
		own = "its content hash: the file gives no version"
	}
	fmt.Fprintf(out, "policy:        %s (%s; %s, %d tools, %d approver groups)\n", c.Version, own, path, len(c.Tools), len(groups))
	if blocks := slices.Sorted(maps.Keys(execs)); len(blocks) > 0 {
		fmt.Fprintf(out, "               executor blocks not served yet (these seed tools run on the demo executor): %v\n", blocks)
	}
	if len(demoRun) > 0 {
		fmt.Fprintf(out, "               tools without an executor block run on the demo executor, which prints and runs nothing: %v\n", demoRun)
	}
	return decider{policy: c.Policy(), opts: opts}, nil
}

// executorsFromCatalog returns the executor of every tool the catalog
// gives an executor block (specs, by tool name). This is where the HTTP
// executor plugs in: it will build one executor per spec, POSTing the
// stored effect to spec.URL within spec.Timeout, with spec.Retries
// retries under the same idempotency key. Until then a seed tool with a
// block runs on demo, and any other tool with one is refused: starting
// would leave its approved calls with nothing to run them.
func executorsFromCatalog(specs map[string]catalog.Executor, demo gate.Executor) (map[string]gate.Executor, error) {
	out := make(map[string]gate.Executor, len(specs))
	names := make([]string, 0, len(specs))
	for name := range specs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !slices.Contains(tools, name) {
			return nil, fmt.Errorf("tool %q has an executor block (%s), and this gateway has no HTTP executor to run it: remove the block to run it on the demo executor", name, specs[name].URL)
		}
		out[name] = demo
	}
	return out, nil
}
