package stepuptest

import (
	"encoding/json"
	"time"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
)

// SeedPolicyVersion is the policy version of the reference approval program.
const SeedPolicyVersion = "2026-10-30.1"

// SeedTools returns the tools of the reference approval program: read_file
// and search_tickets read, write_draft reversible, send_email external (its
// attachment is a file reference whose content is hashed into the digest,
// example.com is trusted so the card flags look-alikes of it, and its safe
// alternative on timeout is write_draft), issue_refund irreversible with a
// per-call limit of 500. Each call returns fresh values.
func SeedTools() []policy.Tool {
	obj := func(s string) json.RawMessage { return json.RawMessage(s) }
	return []policy.Tool{
		{Name: "read_file", Title: "Read a file", Class: card.ClassRead,
			Schema: obj(`{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}}`)},
		{Name: "search_tickets", Title: "Search tickets", Class: card.ClassRead},
		{Name: "write_draft", Title: "Write an e-mail draft", Class: card.ClassReversible},
		{Name: "send_email", Title: "Send e-mail", Class: card.ClassExternal,
			Schema: obj(`{"type":"object","required":["to"],"properties":{` +
				`"to":{"type":"string","format":"email"},"subject":{"type":"string"},` +
				`"body":{"type":"string"},"attachment":{"type":"string"}},"additionalProperties":false}`),
			Refs:    map[string]string{"attachment": "file"},
			Hints:   card.Hints{Recipient: "to", Order: []string{"to", "subject", "attachment"}},
			Trusted: []string{"example.com"},
			Timeout: plug.Timeout{After: 15 * time.Minute, Outcome: plug.OutcomeAlternative, Alternative: "write_draft"}},
		{Name: "issue_refund", Title: "Issue a refund", Class: card.ClassIrreversible,
			Schema: obj(`{"type":"object","required":["order","amount"],"properties":{` +
				`"order":{"type":"string"},"amount":{"type":"number","exclusiveMinimum":0}}}`),
			Limits: []policy.Limit{policy.MaxAmount("amount", "500")},
			Hints:  card.Hints{Amount: "amount", FixedCurrency: "EUR"}},
	}
}

// SeedCatalog returns the catalog of [SeedTools] at [SeedPolicyVersion].
// Any other tool is denied.
func SeedCatalog() *policy.Catalog {
	c, err := policy.NewCatalog(SeedPolicyVersion, SeedTools()...)
	if err != nil {
		panic("stepuptest: seed catalog: " + err.Error()) // a bug in this file, not an input error
	}
	return c
}

// SeedDecision is one row of the reference program's policy table: what
// [SeedCatalog] decides for a call of Tool with Args, and the reason the
// ticket carries.
type SeedDecision struct {
	Tool, Args string
	Status     stepup.Status
	Reason     string
}

// SeedDecisions returns the reference program's policy table under
// [SeedCatalog]: reads and drafts allowed, mail pending a person, a refund
// over the limit and an unknown tool denied. Run it through any
// [stepup.Runtime] to check that the runtime decides as the gate does.
func SeedDecisions() []SeedDecision {
	return []SeedDecision{
		{"read_file", `{"path":"q3.csv"}`, stepup.StatusAllowed, "read effect"},
		{"write_draft", `{"to":"finance@example.com"}`, stepup.StatusAllowed, "reversible effect"},
		{"send_email", `{"to":"finance@example.com"}`, stepup.StatusPending, "external effect"},
		{"issue_refund", `{"order":"A-17","amount":900}`, stepup.StatusDenied, "over the per-call limit"},
		{"run_shell", `{"cmd":"curl ..."}`, stepup.StatusDenied, "unknown tool"},
	}
}
