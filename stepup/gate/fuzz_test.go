package gate_test

import (
	"context"
	"testing"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// FuzzApprove feeds arbitrary answers to Approve: it never panics and never
// approves a ticket without a valid assertion for it. The seeds include a
// valid assertion for another ticket, which mutations start from.
func FuzzApprove(f *testing.F) {
	ctx := context.Background()
	h := stepuptest.NewGate(f, nil)
	target, err := h.Gate.Propose(ctx, sendEmail("finance@example.com"))
	if err != nil {
		f.Fatal(err)
	}
	other, err := h.Gate.Propose(ctx, sendEmail("finance@example.org"))
	if err != nil {
		f.Fatal(err)
	}
	p, err := h.Gate.Desk().Prompt(ctx, other.ID)
	if err != nil {
		f.Fatal(err)
	}
	valid, err := h.Authenticator.Assert(p.Options)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"id":"AQ","rawId":"AQ","type":"public-key","response":{}}`))
	f.Fuzz(func(t *testing.T, answer []byte) {
		if _, err := h.Gate.Desk().Approve(ctx, target.ID, answer); err == nil {
			t.Fatal("approved without a valid assertion for the ticket")
		}
		tk, err := h.Gate.Ticket(ctx, target.ID)
		if err != nil || tk.Status != stepup.StatusPending {
			t.Fatalf("ticket left pending: %v %v", tk.Status, err)
		}
	})
}

// FuzzEnrollToken feeds arbitrary invite tokens to enrollment: it never
// panics and never enrolls without a minted invite.
func FuzzEnrollToken(f *testing.F) {
	ctx := context.Background()
	h := stepuptest.NewGate(f, nil)
	token, err := h.Enrollment.Invite(ctx, "user:erin")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(token[:len(token)-1] + "x")
	f.Add("")
	f.Add(".")
	f.Fuzz(func(t *testing.T, tok string) {
		if tok == token {
			return
		}
		opts, err := h.Enrollment.BeginEnroll(ctx, tok)
		if err != nil {
			return
		}
		resp, err := stepuptest.NewAuthenticator(stepuptest.RP().ID, stepuptest.RP().Origin).Register(opts)
		if err != nil {
			return
		}
		if _, err := h.Enrollment.FinishEnroll(ctx, tok, resp); err == nil {
			t.Fatal("enrolled with a token that was never minted")
		}
	})
}
