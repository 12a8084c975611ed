package main

import (
	"encoding/json"
	"time"

	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup"
)

// seedCatalog is the catalog of the reference approval program: read_file and
// search_tickets read, write_draft reversible, send_email external (its
// attachment's content is hashed into the digest; on timeout it becomes a
// draft), issue_refund irreversible up to 500 per call. Anything else is
// denied.
func seedCatalog() (*stepup.Catalog, error) {
	obj := func(s string) json.RawMessage { return json.RawMessage(s) }
	return stepup.NewCatalog("2026-10-30.1",
		stepup.Tool{Name: "read_file", Title: "Read a file", Class: card.ClassRead,
			Schema: obj(`{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}}`)},
		stepup.Tool{Name: "search_tickets", Title: "Search tickets", Class: card.ClassRead},
		stepup.Tool{Name: "write_draft", Title: "Write an e-mail draft", Class: card.ClassReversible},
		stepup.Tool{Name: "send_email", Title: "Send e-mail", Class: card.ClassExternal,
			Schema: obj(`{"type":"object","required":["to"],"properties":{` +
				`"to":{"type":"string","format":"email"},"subject":{"type":"string"},` +
				`"body":{"type":"string"},"attachment":{"type":"string"}},"additionalProperties":false}`),
			Refs:    map[string]string{"attachment": "file"},
			Hints:   card.Hints{Recipient: "to", Order: []string{"to", "subject", "attachment"}},
			Timeout: stepup.Timeout{After: 15 * time.Minute, Outcome: stepup.OutcomeAlternative, Alternative: "write_draft"}},
		stepup.Tool{Name: "issue_refund", Title: "Issue a refund", Class: card.ClassIrreversible,
			Schema: obj(`{"type":"object","required":["order","amount"],"properties":{` +
				`"order":{"type":"string"},"amount":{"type":"number","exclusiveMinimum":0}}}`),
			Limits: []stepup.Limit{stepup.MaxAmount("amount", 500)},
			Hints:  card.Hints{Amount: "amount", FixedCurrency: "EUR"}},
	)
}
