package canon_test

import (
	"encoding/json"

	"github.com/agentstepup/asu/canon"
)

// sampleEffect is the seed's send_email action with every field set.
func sampleEffect() canon.Effect {
	return canon.Effect{
		Tool: "send_email",
		Args: json.RawMessage(`{"to":"finance@example.com","subject":"Q3 numbers","attachment":"q3.csv"}`),
		Refs: []canon.Ref{{Name: "q3.csv", Kind: "file", SHA256: canon.Sum([]byte("region,revenue\n")), Size: 15}},
		Task: "task-7",
		Step: "3",
		Principal: canon.Principal{
			User:        "alice@example.com",
			Agent:       "report-bot",
			Delegations: []string{"ops-team"},
		},
		PolicyVersion: "2026-11-01",
		Audience:      "mail-executor",
	}
}
