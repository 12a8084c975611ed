package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// rpPolicy is what a third party knows of the harness's relying party.
var rpPolicy = receipt.Policy{RPID: stepuptest.RP().ID, Origins: []string{stepuptest.RP().Origin}}

// trustedKeyOf returns the public key of a's only credential, taken from
// the authenticator itself, never from a receipt: the out-of-band key.
func trustedKeyOf(t *testing.T, a *stepuptest.Authenticator) *receipt.TrustedKey {
	t.Helper()
	ids := a.CredentialIDs()
	require.Len(t, ids, 1)
	k, err := receipt.ParseCOSEKey(a.PublicKey(ids[0]))
	require.NoError(t, err)
	return k
}

// TestReceiptsOfTheSeedFlowVerify follows the reference program's approved send_email
// call through its life: the receipt verifies with only the approver's
// public key when approved, after it ran, after its window closed, and
// after a round trip through its JSON form.
func TestReceiptsOfTheSeedFlowVerify(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	key := trustedKeyOf(t, w.Authenticator)
	tk := approved(t, w, sendEmail("finance@example.com"))
	desk := w.Gate.Desk()

	verify := func(t *testing.T) *receipt.Result {
		t.Helper()
		r, err := desk.Receipt(ctx, tk.ID)
		require.NoError(t, err)
		res, err := receipt.Verify(r, key, rpPolicy)
		require.NoError(t, err)
		assert.True(t, res.Valid)
		assert.Equal(t, tk.Digest, res.Digest)
		assert.Equal(t, stepuptest.Approver, res.Approver)
		require.NotNil(t, res.Effect)
		assert.Equal(t, "send_email", res.Effect.Tool)

		raw, err := r.Marshal()
		require.NoError(t, err)
		back, err := receipt.Parse(raw)
		require.NoError(t, err)
		_, err = receipt.Verify(back, key, rpPolicy)
		require.NoError(t, err, "the JSON form verifies too")
		return res
	}

	t.Run("approved", func(t *testing.T) {
		res := verify(t)
		assert.Equal(t, stepuptest.Start().Unix(), res.ApprovedAt.Unix())
		assert.False(t, res.Expired(w.Clock.Now()))
	})
	t.Run("executed", func(t *testing.T) {
		_, err := w.Gate.Execute(ctx, tk.ID)
		require.NoError(t, err)
		verify(t)
	})
	t.Run("window closed", func(t *testing.T) {
		w.Clock.Advance(time.Hour)
		res := verify(t)
		assert.True(t, res.Expired(w.Clock.Now()), "expiry is reported, not judged")
	})
}

// TestReceiptsForEachAlgorithm verifies receipts signed by ES256 and
// Ed25519 passkeys, each with its own key only.
func TestReceiptsForEachAlgorithm(t *testing.T) {
	tests := []struct {
		alg  stepuptest.Algorithm
		name string
	}{
		{stepuptest.ES256, "ES256"},
		{stepuptest.EdDSA, "EdDSA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			w := newWorld(t)
			a := w.Enroll(t, "user:erin", stepuptest.WithAlgorithm(tt.alg))
			call := sendEmail("finance@example.com")
			call.Principal.User = "user:erin"
			tk, err := w.Gate.Propose(ctx, call)
			require.NoError(t, err)
			_, err = stepuptest.Approve(ctx, w.Gate.Desk(), a, tk.ID)
			require.NoError(t, err)

			r, err := w.Gate.Desk().Receipt(ctx, tk.ID)
			require.NoError(t, err)
			assert.Equal(t, "user:erin", r.Approver.User)
			res, err := receipt.Verify(r, trustedKeyOf(t, a), rpPolicy)
			require.NoError(t, err)
			assert.Equal(t, tt.name, res.Algorithm)

			_, err = receipt.Verify(r, trustedKeyOf(t, w.Authenticator), rpPolicy)
			assert.ErrorIs(t, err, receipt.ErrKeyMismatch, "another approver's key does not verify it")
		})
	}
}

// TestReceiptOfOneTicketIsNotAnother swaps parts of ticket B's receipt
// into ticket A's: every swap is refused, naming the check that failed.
func TestReceiptOfOneTicketIsNotAnother(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	key := trustedKeyOf(t, w.Authenticator)
	a := approved(t, w, sendEmail("finance@example.com"))
	b := approved(t, w, sendEmail("finance@exarnple.com"))
	ra, err := w.Gate.Desk().Receipt(ctx, a.ID)
	require.NoError(t, err)
	rb, err := w.Gate.Desk().Receipt(ctx, b.ID)
	require.NoError(t, err)
	_, err = receipt.Verify(rb, key, rpPolicy)
	require.NoError(t, err, "B's own receipt verifies")

	tests := []struct {
		name string
		swap func(r *receipt.Receipt)
		want error
	}{
		{"effect only", func(r *receipt.Receipt) { r.Effect = rb.Effect }, receipt.ErrDigest},
		{"effect and digest", func(r *receipt.Receipt) { r.Effect, r.Digest = rb.Effect, rb.Digest }, receipt.ErrChallenge},
		{"effect, digest, card, nonce", func(r *receipt.Receipt) {
			r.Effect, r.Digest, r.Card, r.CardHash, r.Nonce = rb.Effect, rb.Digest, rb.Card, rb.CardHash, rb.Nonce
		}, receipt.ErrChallenge},
		{"assertion", func(r *receipt.Receipt) { r.Assertion = rb.Assertion }, receipt.ErrChallenge},
		{"signature", func(r *receipt.Receipt) { r.Assertion.Signature = rb.Assertion.Signature }, receipt.ErrSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cloneReceipt(t, ra)
			tt.swap(r)
			res, err := receipt.Verify(r, key, rpPolicy)
			assert.ErrorIs(t, err, tt.want)
			require.NotNil(t, res)
			assert.False(t, res.Valid)
		})
	}
}

// TestReceiptRefusals: only a passkey approval has a receipt.
func TestReceiptRefusals(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	desk := w.Gate.Desk()

	pending, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	denied, err := w.Gate.Propose(ctx, sendEmail("ops@example.com"))
	require.NoError(t, err)
	_, err = stepuptest.Deny(ctx, desk, w.Authenticator, denied.ID, "not today")
	require.NoError(t, err)
	allowed, err := w.Gate.Propose(ctx, stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`),
		Task: "t-42", Session: "sess-1", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusAllowed, allowed.Status)
	refused, err := w.Gate.Propose(ctx, stepup.Call{Tool: "run_shell", Args: json.RawMessage(`{}`),
		Task: "t-42", Session: "sess-1", Principal: agentFor("user:dana")})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusDenied, refused.Status)

	tests := []struct {
		name string
		id   stepup.TicketID
		want error
	}{
		{"pending", pending.ID, plug.ErrNoReceipt},
		{"denied by the approver", denied.ID, plug.ErrNoReceipt},
		{"allowed by the policy", allowed.ID, plug.ErrNoReceipt},
		{"denied by the policy (never stored)", refused.ID, stepup.ErrNotFound},
		{"unknown", "no-such-ticket", stepup.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := desk.Receipt(ctx, tt.id)
			assert.ErrorIs(t, err, tt.want)
			assert.Nil(t, r)
		})
	}

	t.Run("timed out", func(t *testing.T) {
		w.Clock.Advance(time.Hour)
		_, err := w.Gate.Sweep(ctx)
		require.NoError(t, err)
		_, err = desk.Receipt(ctx, pending.ID)
		assert.ErrorIs(t, err, plug.ErrNoReceipt)
	})
}

// TestReceiptRefusesAnApproverWithoutWebAuthn: an approval whose evidence
// is not a WebAuthn assertion has nothing a third party can check.
func TestReceiptRefusesAnApproverWithoutWebAuthn(t *testing.T) {
	ctx := context.Background()
	w := stepuptest.NewWorldWith(t, modelApprover{})
	tk, err := w.Gate.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	_, err = w.Gate.Desk().Approve(ctx, tk.ID, []byte(`yes`))
	require.NoError(t, err)
	_, err = w.Gate.Desk().Receipt(ctx, tk.ID)
	assert.ErrorIs(t, err, plug.ErrNoReceipt)
}

// modelApprover approves anything and keeps a verdict, not an assertion.
type modelApprover struct{}

func (modelApprover) Options(context.Context, plug.Request) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}

func (modelApprover) Verify(_ context.Context, _ plug.Request, _ []byte) (plug.Verified, error) {
	return plug.Verified{User: "user:dana", Evidence: []byte(`{"verdict":"approve"}`)}, nil
}

func (modelApprover) Recheck(context.Context, plug.Answer) error { return nil }

func cloneReceipt(t *testing.T, r *receipt.Receipt) *receipt.Receipt {
	t.Helper()
	raw, err := r.Marshal()
	require.NoError(t, err)
	c, err := receipt.Parse(raw)
	require.NoError(t, err)
	return c
}

func ExampleDesk_Receipt() {
	g, approver, _ := exampleGate()
	ctx := context.Background()
	tk, _ := g.Propose(ctx, stepup.Call{Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com"}`),
		Session: "s-1", Principal: agentFor("user:dana")})
	if _, err := stepuptest.Approve(ctx, g.Desk(), approver, tk.ID); err != nil {
		panic(err)
	}
	r, err := g.Desk().Receipt(ctx, tk.ID)
	if err != nil {
		panic(err)
	}
	doc, _ := r.Marshal() // the JSON document to hand to an auditor

	// The auditor holds the approver's public key, obtained out of band,
	// and the receipt; nothing else.
	key, _ := receipt.ParseCOSEKey(approver.PublicKey(approver.CredentialIDs()[0]))
	got, _ := receipt.Parse(doc)
	res, err := receipt.Verify(got, key, receipt.Policy{RPID: "approve.example.com",
		Origins: []string{"https://approve.example.com"}})
	fmt.Println(res.Valid, res.Approver, res.Algorithm, res.Effect.Tool, err)
	// Output: true user:dana ES256 send_email <nil>
}
