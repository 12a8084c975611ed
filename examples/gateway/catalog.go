package main

import (
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
