package openaijudge_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	"github.com/agentstepup/asu/adapters/openaijudge"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/modelapprove"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestModelApproverInTheGate puts the judge behind a gate as its model
// approver and runs a call through tooluse: the gate records the
// decision as model:<the configured name>, the same for every port the
// model is served on, and what the runtime's model reads is one sentence
// with the reason and without the audit record's hashes.
func TestModelApproverInTheGate(t *testing.T) {
	for _, answer := range []string{
		`{"decision":"deny","reason":"sends the figures outside the company"}`,
		`not json at all`,
	} {
		e := newEndpoint(t, says(answer))
		m, err := openaijudge.New("gpt-test", &openaijudge.Options{BaseURL: e.srv.URL + "/v1", Name: "screener"})
		require.NoError(t, err)
		j, err := modelapprove.NewJudge(m, nil)
		require.NoError(t, err)
		rec := &stepuptest.Recorder{}
		h := stepuptest.NewGate(t, nil, gate.WithModelJudge(j, card.ClassExternal), gate.WithExecutor("send_email", rec))
		g := tooluse.New(h.Gate, &tooluse.Options{Wait: adaptertest.Wait})
		o := g.Run(context.Background(), adaptertest.Scope(), tooluse.Request{ID: "call_1", Name: "send_email",
			Args: json.RawMessage(`{"to":"finance@example.com","subject":"Q3"}`)})
		require.Equal(t, tooluse.Denied, o.State, o.Text())
		text := o.Text()
		assert.Contains(t, text, "Not run: denied by model:screener")
		assert.NotContains(t, text, "sha256")
		assert.NotContains(t, text, "denied: denied")
		assert.NotContains(t, text, "modelapprove:")
		assert.NotContains(t, text, e.srv.URL[len("http://"):], "no host or port")
		assert.Zero(t, rec.Count())

		rows, err := h.Store.AuditByTask(context.Background(), "t-42")
		require.NoError(t, err)
		require.NotEmpty(t, rows)
		last := rows[len(rows)-1]
		assert.Contains(t, last.Reason, "model:screener")
		assert.Contains(t, last.Reason, "sha256", "the record keeps the hashes")
	}
}
