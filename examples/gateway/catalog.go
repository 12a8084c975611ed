package main

import (
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// catalogOf is the catalog of tools and its tools' names. Without tools,
// it is the catalog of the reference approval program
// (stepuptest.SeedTools): read_file and search_tickets read, write_draft
// reversible, send_email external, issue_refund irreversible up to 500 per
// call. Anything else is denied.
func catalogOf(tools []policy.Tool) (*policy.Catalog, []string, error) {
	if tools == nil {
		tools = stepuptest.SeedTools()
	}
	cat, err := policy.NewCatalog(stepuptest.SeedPolicyVersion, tools...)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name)
	}
	return cat, names, nil
}
