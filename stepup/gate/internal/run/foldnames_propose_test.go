package run_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestProposeRefusesCaseFoldedNames: a call whose arguments hold, at
// any depth, two member names a case-ignoring decoder reads as one is
// refused at Propose as an invalid call, for a tool whose schema would
// take them and whatever the policy would decide: a denied ticket whose
// reason names the object and no value, an audit row, and nothing run.
// The same call without the look-alike, or with a name that only looks
// alike, is decided as usual.
func TestProposeRefusesCaseFoldedNames(t *testing.T) {
	rec := &stepuptest.Recorder{}
	var opts []gate.Option
	for _, tool := range stepuptest.SeedTools() {
		opts = append(opts, gate.WithExecutor(tool.Name, rec))
	}
	h := stepuptest.NewGate(t, nil, opts...)
	ctx := context.Background()
	call := func(step, args string) stepup.Call {
		return stepup.Call{Tool: "write_draft", Args: json.RawMessage(args), Task: "t-1", Step: step, Session: "sess-1",
			Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:reports"}}
	}
	for i, tc := range []struct {
		args, pointer string
	}{
		{`{"payeeId":"acme-supplies","payeeid":"attacker-llc"}`, ""},
		{`{"to":"a@example.com","TO":"mallory@evil.example"}`, ""},
		{`{"order":{"\u017fku":"A-1","sku":"B-2"}}`, `"/order"`},
		{`{"lines":[{"qty":1},{"qty":2,"\u212a":3,"k":4}]}`, `"/lines/1"`},
		{`{"a":{"b":[{"c":{"id":"x","\u0130d":"y"}}]}}`, `"/a/b/0/c"`},
	} {
		tk, err := h.Gate.Propose(ctx, call(string(rune('a'+i)), tc.args))
		require.NoError(t, err, tc.args)
		assert.Equal(t, stepup.StatusDenied, tk.Status, tc.args)
		assert.Contains(t, tk.Reason, "differ only in letter case", tc.args)
		if tc.pointer != "" {
			assert.Contains(t, tk.Reason, "JSON pointer "+tc.pointer, tc.args)
		}
		for _, value := range []string{"attacker", "mallory", "B-2", `"y"`} {
			assert.NotContains(t, tk.Reason, value)
		}
	}
	rows, err := h.Store.AuditByTask(ctx, "t-1")
	require.NoError(t, err)
	refused := 0
	for _, r := range rows {
		if strings.Contains(r.Reason, "differ only in letter case") {
			refused++
		}
	}
	assert.Equal(t, 5, refused, "each refusal has its audit row")

	for i, args := range []string{
		`{"payeeId":"acme-supplies"}`,
		`{"id":"x","\u0131d":"y"}`,
		`{"payee_id":"a","payeeId":"b"}`,
		`{"lines":[{"qty":1},{"qty":2}]}`,
	} {
		tk, err := h.Gate.Propose(ctx, call(string(rune('p'+i)), args))
		require.NoError(t, err, args)
		assert.NotContains(t, tk.Reason, "letter case", args)
		assert.True(t, tk.Status.Runnable(), "%s: %s %s", args, tk.Status, tk.Reason)
	}
	assert.Zero(t, rec.Count(), "Propose runs nothing")
}
