package card_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// The examples of the seed program: send_email with its attachment
// resolved, and issue_refund.

func sendEmailEffect(t testing.TB, to string) canon.Effect {
	t.Helper()
	refs, err := canon.ResolveAll(context.Background(), canon.FileResolver{Root: "testdata"},
		[]canon.Ref{{Name: "q3.csv", Kind: "file"}})
	require.NoError(t, err)
	args, err := json.Marshal(map[string]string{"to": to, "subject": "Q3 summary", "attachment": "q3.csv"})
	require.NoError(t, err)
	return canon.Effect{
		Tool:          "send_email",
		Args:          args,
		Refs:          refs,
		Task:          "t-42",
		Step:          "3",
		Principal:     canon.Principal{User: "user:dana", Agent: "agent:reports"},
		PolicyVersion: "2026-10-30.1",
		Audience:      "mail-executor",
	}
}

func sendEmailContext() card.Context {
	return card.Context{
		Title:         "Send e-mail",
		Class:         card.ClassExternal,
		PolicyVersion: "2026-10-30.1",
		Reasons:       []string{"send_email has an external effect: every call needs approval"},
		Approvers:     []string{"user:dana, the user it runs on behalf of"},
		Provenance:    []string{"read file q3.csv", "read ticket #118 from the support queue"},
		Hints: card.Hints{
			Recipient: "to",
			Labels:    map[string]string{"to": "To", "subject": "Subject", "attachment": "Attachment"},
			Order:     []string{"to", "subject", "attachment"},
		},
		Trusted:         []string{"example.com"},
		Rationale:       "Finance asked for the Q3 numbers in ticket #118; sending the summary with q3.csv attached.",
		ToolDescription: "Sends an e-mail from the reports mailbox.",
	}
}

func refundEffect() canon.Effect {
	return canon.Effect{
		Tool:          "issue_refund",
		Args:          json.RawMessage(`{"order":"A-17","amount":120,"currency":"EUR","reason":"damaged in transit"}`),
		Task:          "t-77",
		Step:          "2",
		Principal:     canon.Principal{User: "user:lee", Agent: "agent:support", Delegations: []string{"team:refunds"}},
		PolicyVersion: "2026-10-30.1",
		Audience:      "payments",
	}
}

func refundContext() card.Context {
	return card.Context{
		Title:         "Issue refund",
		Class:         card.ClassIrreversible,
		PolicyVersion: "2026-10-30.1",
		Reasons:       []string{"issue_refund is irreversible: every call needs approval", "amount is within the per-call limit of 500"},
		Approvers:     []string{"a member of approver group \"finance\"", "2 different people"},
		Provenance:    []string{"read customer e-mail from an external sender"},
		Hints: card.Hints{
			Amount:   "amount",
			Currency: "currency",
			Labels:   map[string]string{"order": "Order", "amount": "Amount", "currency": "Currency", "reason": "Reason"},
			Order:    []string{"amount", "order"},
		},
		Rationale: "The customer sent photos of the damaged parcel. Refunding the full order.",
	}
}

func mustRender(t testing.TB, e canon.Effect, ctx card.Context) *card.Card {
	t.Helper()
	c, err := card.Render(e, ctx)
	require.NoError(t, err)
	return c
}
