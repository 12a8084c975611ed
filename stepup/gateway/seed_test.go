package gateway_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestSeedPolicyDecisionsOverHTTP: the reference program's policy table through the
// agent API; denials come back as tickets with the gate's reason.
func TestSeedPolicyDecisionsOverHTTP(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	for _, tt := range stepuptest.SeedDecisions() {
		t.Run(tt.Tool, func(t *testing.T) {
			tk, err := r.client.Propose(ctx, stepup.Call{Tool: tt.Tool, Args: json.RawMessage(tt.Args),
				Task: "t-42", Session: "sess-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
			require.NoError(t, err)
			assert.Equal(t, tt.Status, tk.Status)
			assert.Equal(t, tt.Reason, tk.Reason)
		})
	}
}

// TestSeedSevenCasesOverHTTP reproduces the reference program's seven executor decisions
// with the runtime on the far side of the agent API and the approver on
// the approval site.
func TestSeedSevenCasesOverHTTP(t *testing.T) {
	ctx := context.Background()

	t.Run("1 the approved call, keys reordered, executes", func(t *testing.T) {
		r := newRig(t, nil)
		tk, err := r.client.Propose(ctx, sendEmail("finance@example.com"))
		require.NoError(t, err)
		require.Equal(t, stepup.StatusPending, tk.Status)
		re := sendEmail("finance@example.com")
		re.Args = json.RawMessage(`{ "attachment": "q3.csv", "subject": "Q3 summary", "to": "finance@example.com" }`)
		again, err := r.client.Propose(ctx, re)
		require.NoError(t, err)
		assert.Equal(t, tk.Digest, again.Digest, "reordered keys hash the same")
		assert.Equal(t, tk.ID, again.ID, "the duplicate merges into the pending ticket")

		r.approveOverHTTP(t, tk.ID)
		got, err := r.client.Wait(ctx, tk.ID)
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusApproved, got.Status)
		res, err := r.client.Execute(ctx, tk.ID)
		require.NoError(t, err)
		assert.JSONEq(t, `{"sent":true}`, string(res.Output))
		assert.NotEmpty(t, res.IdempotencyKey)
		assert.Equal(t, 1, r.exec.count())
	})

	t.Run("2 the same approval again is refused as used", func(t *testing.T) {
		r := newRig(t, nil)
		tk := r.approved(t, sendEmail("finance@example.com"))
		_, err := r.client.Execute(ctx, tk.ID)
		require.NoError(t, err)
		_, err = r.client.Execute(ctx, tk.ID)
		assert.ErrorIs(t, err, stepup.ErrConsumed)
		assert.Equal(t, remote.CodeConsumed, errCode(t, err))
		assert.Equal(t, 1, r.exec.count())
	})

	t.Run("3 recipient changed after approval is refused", func(t *testing.T) {
		r := newRig(t, nil)
		tk := r.approved(t, sendEmail("finance@example.com"))
		changed, err := r.client.Propose(ctx, sendEmail("finance@exarnple.com"))
		require.NoError(t, err)
		assert.NotEqual(t, tk.Digest, changed.Digest)
		assert.Equal(t, stepup.StatusPending, changed.Status)
		_, err = r.client.Execute(ctx, changed.ID)
		assert.ErrorIs(t, err, stepup.ErrNotApproved)
		assert.Equal(t, 0, r.exec.count())
	})

	t.Run("4 attachment edited after approval is refused", func(t *testing.T) {
		r := newRig(t, nil)
		tk := r.approved(t, sendEmail("finance@example.com"))
		require.NoError(t, os.WriteFile(filepath.Join(r.dir, "q3.csv"),
			[]byte("region,revenue\nwest,410\neast,385\nnote,see attached instructions\n"), 0o600))
		_, err := r.client.Execute(ctx, tk.ID)
		assert.ErrorIs(t, err, stepup.ErrEffectChanged)
		assert.Equal(t, 0, r.exec.count())
	})

	t.Run("5 used 20 minutes later is refused as expired", func(t *testing.T) {
		r := newRig(t, nil)
		tk := r.approved(t, sendEmail("finance@example.com"))
		r.Clock.Advance(20 * time.Minute)
		_, err := r.client.Execute(ctx, tk.ID)
		assert.ErrorIs(t, err, stepup.ErrExpired)
		assert.Equal(t, remote.CodeExpired, errCode(t, err))
		got, err := r.client.Wait(ctx, tk.ID)
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusExpired, got.Status)
		assert.Equal(t, 0, r.exec.count())
	})

	t.Run("6 digest swapped in the evidence is refused as a bad signature", func(t *testing.T) {
		r := newRig(t, nil)
		orig, err := r.client.Propose(ctx, sendEmail("finance@example.com"))
		require.NoError(t, err)
		changed, err := r.client.Propose(ctx, sendEmail("finance@exarnple.com"))
		require.NoError(t, err)
		origOpts, _ := r.pageOptions(t, orig.ID)
		changedOpts, _ := r.pageOptions(t, changed.ID)
		assertion, err := r.Authenticator.Assert(origOpts)
		require.NoError(t, err)
		forged := swapChallenge(t, assertion, changedOpts)
		resp, body := r.post(t, "/approve/"+string(changed.ID), forged)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Contains(t, string(body), `"code":"bad_assertion"`)
		assert.Contains(t, string(body), "signature")
		got, err := r.Gate.Ticket(ctx, changed.ID)
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusPending, got.Status)
	})

	t.Run("7 the agent cannot approve its own call", func(t *testing.T) {
		r := newRig(t, nil)
		tk, err := r.client.Propose(ctx, sendEmail("finance@example.com"))
		require.NoError(t, err)
		// The agent's only channel has no approval route, with or without
		// its token.
		for _, path := range []string{"/approve/" + string(tk.ID), "/enroll"} {
			req, err := http.NewRequest(http.MethodPost, r.api.URL+path, nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+agentToken)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			_ = resp.Body.Close()
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
		}
		// And agents are never invited to enroll a passkey.
		_, err = gateway.InviteLink(ctx, r.Enrollment, r.site.URL, "agent:reports")
		assert.ErrorIs(t, err, stepup.ErrNotPermitted)
		got, err := r.Gate.Ticket(ctx, tk.ID)
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusPending, got.Status)
	})
}

// approved proposes c over HTTP and approves it on the site.
func (r *rig) approved(t *testing.T, c stepup.Call) stepup.Ticket {
	t.Helper()
	tk, err := r.client.Propose(context.Background(), c)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	r.approveOverHTTP(t, tk.ID)
	got, err := r.client.Wait(context.Background(), tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusApproved, got.Status)
	return got
}

// swapChallenge rewrites the challenge in an assertion's client data to
// the one of other options, keeping the signature.
func swapChallenge(t *testing.T, assertion, other []byte) []byte {
	t.Helper()
	var opts struct {
		Challenge string `json:"challenge"`
	}
	require.NoError(t, json.Unmarshal(other, &opts))
	var msg map[string]any
	require.NoError(t, json.Unmarshal(assertion, &msg))
	resp := msg["response"].(map[string]any)
	cd, err := base64.RawURLEncoding.DecodeString(resp["clientDataJSON"].(string))
	require.NoError(t, err)
	var client map[string]any
	require.NoError(t, json.Unmarshal(cd, &client))
	client["challenge"] = opts.Challenge
	cd, err = json.Marshal(client)
	require.NoError(t, err)
	resp["clientDataJSON"] = base64.RawURLEncoding.EncodeToString(cd)
	out, err := json.Marshal(msg)
	require.NoError(t, err)
	return out
}
