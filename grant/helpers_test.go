package grant_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/store/memory"
)

var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// effect returns a call of tool for user:dana by agent:support with args.
func effect(tool, args string) canon.Effect {
	return canon.Effect{
		Tool: tool, Args: json.RawMessage(args), Task: "t-42", Step: "s1",
		Principal:     canon.Principal{User: "user:dana", Agent: "agent:support"},
		PolicyVersion: "2026-10-30.1", Audience: "payments",
	}
}

func refund(args string) canon.Effect { return effect("issue_refund", args) }

// refundTemplate: refunds of order A-17, in EUR, up to 120.
func refundTemplate() grant.Grant {
	return grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "issue_refund", Audience: "payments", User: "user:dana",
		Args: []grant.Rule{
			grant.Pin("/order", "A-17"),
			grant.Range("/amount", "0", "120"),
			grant.Pin("/currency", "EUR"),
		},
	}}
}

func mailTemplate() grant.Grant {
	return grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "send_email", Audience: "payments", User: "user:dana",
		Args: []grant.Rule{
			grant.InDomains("/to", "example.com", "example.org"),
			grant.Text("/subject", 40),
		},
	}}
}

func digest(t testing.TB, e canon.Effect) canon.Digest {
	t.Helper()
	d, err := e.Digest()
	require.NoError(t, err)
	return d
}

func with(e canon.Effect, f func(*canon.Effect)) canon.Effect {
	f(&e)
	return e
}

// storeAt returns a memory store whose clock reads *now: the store judges
// deciding times against its own clock.
func storeAt(now *time.Time) *memory.Store {
	return memory.New(&memory.Options{Clock: func() time.Time { return *now }})
}
