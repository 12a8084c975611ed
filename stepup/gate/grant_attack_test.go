package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// grantAttack is a gate whose refunds need a person, and a grant Dana
// issued with her passkey covering refunds of order A-17 up to 120.
type grantAttack struct {
	*stepuptest.Harness
	exec  *stepuptest.Recorder
	grant string
}

func newGrantAttack(t *testing.T) *grantAttack {
	t.Helper()
	cat, err := policy.NewCatalog("refunds-attack-1",
		policy.Tool{Name: "issue_refund", Title: "Issue a refund", Class: card.ClassIrreversible,
			Limits: []policy.Limit{policy.MaxAmount("amount", "5000")}, Audience: "payments"})
	require.NoError(t, err)
	w := &grantAttack{exec: &stepuptest.Recorder{}}
	w.Harness = stepuptest.NewGate(t, cat, gate.WithExecutor("issue_refund", w.exec))
	w.grant, err = w.Grant(gate.GrantSpec{Grant: grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "issue_refund", Audience: "payments", User: stepuptest.Approver,
		Args: []grant.Rule{grant.Pin("/order", "A-17"), grant.Range("/amount", "0", "120")}}},
		Uses: 50, ExpiresAt: w.Clock.Now().Add(8 * time.Hour)})
	require.NoError(t, err)
	return w
}

func (w *grantAttack) refund(step string, amount int) stepup.Call {
	return stepup.Call{Tool: "issue_refund", Args: json.RawMessage(fmt.Sprintf(`{"order":"A-17","amount":%d}`, amount)),
		Task: "t-grant", Step: step, Session: "s-grant", Grant: w.grant,
		Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:support"}}
}

// grantRevocations are the ways the grant's authority is withdrawn: the
// grant itself, or the passkey that signed it (Dana's phone was stolen).
var grantRevocations = map[string]func(ctx context.Context, w *grantAttack) error{
	"grant revoked": func(ctx context.Context, w *grantAttack) error {
		return w.Gate.Admin().RevokeGrant(ctx, w.grant, "user:ops", "no more refunds")
	},
	"signing passkey revoked": func(ctx context.Context, w *grantAttack) error {
		return w.Enrollment.RevokeCredential(ctx, w.Authenticator.CredentialIDs()[0], "user:ops", "phone stolen")
	},
}

// TestGrantApprovalRevokedBeforeItRuns: a call the grant approved at
// Propose, not yet run, whose authority is then revoked, must not run, as a
// passkey approval does not run once its passkey is revoked
// (Enrollment.RevokeCredential: "approvals it made that have not run yet no
// longer run"). Checking only the gate's MAC on the grant's approval, as
// Execute once did, runs it after either revocation.
func TestGrantApprovalRevokedBeforeItRuns(t *testing.T) {
	ctx := context.Background()
	for name, revoke := range grantRevocations {
		for _, delay := range []time.Duration{0, time.Millisecond, time.Minute} {
			t.Run(fmt.Sprintf("%s after %v", name, delay), func(t *testing.T) {
				w := newGrantAttack(t)
				tk, err := w.Gate.Propose(ctx, w.refund("s-1", 100))
				require.NoError(t, err)
				require.Equal(t, stepup.StatusApproved, tk.Status, "the grant covers it")
				w.Clock.Advance(delay)
				require.NoError(t, revoke(ctx, w))
				_, err = w.Gate.Execute(ctx, tk.ID)
				assert.Error(t, err, "an approval whose authority was revoked ran")
				assert.Zero(t, w.exec.Count(), "the refund ran after the revocation")
			})
		}
	}
}

// TestGrantOfARevokedPasskeyApprovesNothing: once the passkey that signed
// a grant is revoked, it "never approves again": a new call the grant
// would cover goes to a person, rather than the grant approving calls in
// the revoked passkey's name for as many uses as it has.
func TestGrantOfARevokedPasskeyApprovesNothing(t *testing.T) {
	ctx := context.Background()
	w := newGrantAttack(t)
	require.NoError(t, grantRevocations["signing passkey revoked"](ctx, w))
	w.Clock.Advance(time.Second)
	ran := 0
	for i, amount := range []int{1, 50, 99, 120} {
		tk, err := w.Gate.Propose(ctx, w.refund(fmt.Sprintf("after-%d", i), amount))
		require.NoError(t, err)
		if tk.Status != stepup.StatusApproved {
			continue
		}
		if _, err := w.Gate.Execute(ctx, tk.ID); err == nil {
			ran++
		}
	}
	assert.Zero(t, ran, "refunds ran on the grant of a revoked passkey")
	assert.Zero(t, w.exec.Count())
}

// TestGrantRevokedCoversNoNewCall: the control, which bites: after
// RevokeGrant no new call is approved by it.
func TestGrantRevokedCoversNoNewCall(t *testing.T) {
	ctx := context.Background()
	w := newGrantAttack(t)
	tk, err := w.Gate.Propose(ctx, w.refund("before", 10))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusApproved, tk.Status, "a live grant covers the call: the check below can fail")
	require.NoError(t, grantRevocations["grant revoked"](ctx, w))
	for i := range 5 {
		tk, err := w.Gate.Propose(ctx, w.refund(fmt.Sprintf("after-%d", i), 10+i))
		require.NoError(t, err)
		assert.Equal(t, stepup.StatusPending, tk.Status)
	}
}

// TestGrantOfAnotherUserCoversNothing: Erin cannot delegate approval of
// Dana's calls. A template naming Dana is refused when Erin asks for it; an
// exact grant of the digest of Dana's very call, signed by Erin, leaves the
// call to a person. The same exact grant signed by Dana covers it (the
// control: the digest is right, so the test can fail).
func TestGrantOfAnotherUserCoversNothing(t *testing.T) {
	ctx := context.Background()
	w := newGrantAttack(t)
	erin := w.Enroll(t, "user:erin")
	expires := w.Clock.Now().Add(time.Hour)
	_, err := w.Gate.Desk().Grant(ctx, "user:erin", gate.GrantSpec{Grant: grant.Grant{Kind: grant.KindTemplate,
		Template: &grant.Template{Tool: "issue_refund", Audience: "payments", User: stepuptest.Approver,
			Args: []grant.Rule{grant.Pin("/order", "A-17"), grant.Range("/amount", "0", "120")}}},
		Uses: 3, ExpiresAt: expires})
	assert.Error(t, err, "Erin asked for a template over Dana's calls")

	for i, signer := range []string{"user:erin", stepuptest.Approver} {
		call := w.refund(fmt.Sprintf("exact-%d", i), 100)
		sealed, err := canon.Seal(canon.Effect{Tool: call.Tool, Args: call.Args, Task: call.Task, Step: call.Step,
			Principal: call.Principal, PolicyVersion: "refunds-attack-1", Audience: "payments"})
		require.NoError(t, err)
		tk, err := w.Gate.Desk().Grant(ctx, signer, gate.GrantSpec{Grant: grant.Exact(sealed.Digest()), Uses: 1,
			ExpiresAt: expires})
		require.NoError(t, err)
		auth := w.Authenticator
		if signer == "user:erin" {
			auth = erin
		}
		_, err = stepuptest.Approve(ctx, w.Gate.Desk(), auth, tk.ID)
		require.NoError(t, err)
		call.Grant = string(tk.ID)
		got, err := w.Gate.Propose(ctx, call)
		require.NoError(t, err)
		if signer == "user:erin" {
			assert.Equal(t, stepup.StatusPending, got.Status, "Erin's grant approved Dana's call")
		} else {
			assert.Equal(t, stepup.StatusApproved, got.Status, "Dana's own exact grant covers her call")
		}
	}
}
