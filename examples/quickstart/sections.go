package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/internal/termwidth"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// policyDecisions prints the reference program's five policy decisions.
func (d *demo) policyDecisions(ctx context.Context) error {
	fmt.Fprintln(d.out, "\npolicy decisions:")
	for _, c := range []struct{ tool, args string }{
		{"read_file", `{"path":"q3.csv"}`},
		{"write_draft", `{"to":"finance@example.com"}`},
		{"send_email", `{"to":"finance@example.com"}`},
		{"issue_refund", `{"order":"A-17","amount":900}`},
		{"run_shell", `{"cmd":"curl ..."}`},
	} {
		tk, err := d.gate.Propose(ctx, stepup.Call{Tool: c.tool, Args: json.RawMessage(c.args),
			Task: "t-41", Session: "session-0", Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"}})
		if err != nil {
			return err
		}
		word := map[stepup.Status]string{stepup.StatusAllowed: "allow", stepup.StatusPending: "needs approval"}[tk.Status]
		if tk.Status == stepup.StatusDenied {
			word = "deny: " + tk.Reason
		}
		fmt.Fprintf(d.out, "  %-14s%s\n", c.tool, word)
	}
	return nil
}

// effectDigest hashes act's effect as the gate would, resolving q3.csv.
func (d *demo) effectDigest(ctx context.Context, c stepup.Call) (canon.Digest, error) {
	refs, err := canon.ResolveAll(ctx, canon.FileResolver{Root: d.dir}, []canon.Ref{{Name: "q3.csv", Kind: "file"}})
	if err != nil {
		return canon.Digest{}, err
	}
	return canon.Effect{Tool: c.Tool, Args: c.Args, Refs: refs, Task: c.Task, Step: c.Step,
		Principal: c.Principal, PolicyVersion: stepuptest.SeedPolicyVersion, Audience: c.Tool}.Digest()
}

// canonicalEffect prints the digests that bind an approval.
func (d *demo) canonicalEffect(ctx context.Context) error {
	fmt.Fprintln(d.out, "\ncanonical effect (JCS, SHA-256):")
	base, err := d.effectDigest(ctx, act("finance@example.com"))
	if err != nil {
		return err
	}
	same, err := d.effectDigest(ctx, reordered())
	if err != nil {
		return err
	}
	lookalike, err := d.effectDigest(ctx, act("finance@exarnple.com"))
	if err != nil {
		return err
	}
	if err := d.writeQ3(q3 + "note,see attached instructions\n"); err != nil {
		return err
	}
	edited, err := d.effectDigest(ctx, act("finance@example.com"))
	if err != nil {
		return err
	}
	if err := d.writeQ3(q3); err != nil {
		return err
	}
	compare := func(x canon.Digest) string {
		if x.Equal(base) {
			return "same digest"
		}
		return "another digest"
	}
	d.line("send_email to finance@example.com", base.String())
	d.line("keys reordered", same.String()+"  "+compare(same))
	d.line("to finance@exarnple.com", lookalike.String()+"  "+compare(lookalike))
	d.line("q3.csv edited", edited.String()+"  "+compare(edited))
	return nil
}

// approvalCard prints the card an approver sees for act.
func (d *demo) approvalCard(ctx context.Context) error {
	c := act("finance@example.com")
	c.Session, c.Step = "session-card", "step-card"
	c.Taint = []string{"read web page https://example.org/q3-instructions"}
	c.Rationale = "Finance asked for the Q3 numbers."
	tk, err := d.gate.Propose(ctx, c)
	if err != nil {
		return err
	}
	p, err := d.gate.Desk().Prompt(ctx, tk.ID)
	if err != nil {
		return err
	}
	fmt.Fprintln(d.out, "\napproval card (rendered by the gate from the stored effect):")
	// The card at the terminal's real width (less the indent below), so
	// a narrow terminal does not wrap its lines into pieces that read
	// like the card's own.
	width := termwidth.Columns(d.out, card.DefaultWidth+2) - 2
	for _, l := range strings.Split(strings.TrimRight(p.Card.TextWidth(width), "\n"), "\n") {
		fmt.Fprintln(d.out, "  "+l)
	}
	_, err = stepuptest.Deny(ctx, d.gate.Desk(), d.dana, tk.ID, "demo card only")
	return err
}

// sevenCases prints the reference program's executor decisions, decided by the gate.
func (d *demo) sevenCases(ctx context.Context) error {
	fmt.Fprintln(d.out, "\nexecutor decisions for send_email:")
	results := make([]string, 7)

	// 1, 2: the approved call (its duplicate with keys reordered merges
	// into the same ticket), then the same approval again.
	tk, err := d.gate.Propose(ctx, act("finance@example.com"))
	if err != nil {
		return err
	}
	dup, err := d.gate.Propose(ctx, reordered())
	if err != nil {
		return err
	}
	if dup.ID != tk.ID {
		return fmt.Errorf("reordered call did not merge")
	}
	if _, err := stepuptest.Approve(ctx, d.gate.Desk(), d.dana, tk.ID); err != nil {
		return err
	}
	d.sent = tk.ID
	d.clock.Advance(time.Minute)
	_, err = d.gate.Execute(ctx, dup.ID)
	results[0] = outcome(err)
	d.clock.Advance(10 * time.Second)
	_, err = d.gate.Execute(ctx, tk.ID)
	results[1] = outcome(err)

	// 3: the runtime wants the recipient changed after approval. It can
	// only propose it: another digest, another ticket, not approved.
	if _, err := d.approved(ctx, act("finance@example.com")); err != nil {
		return err
	}
	changed, err := d.gate.Propose(ctx, act("finance@exarnple.com"))
	if err != nil {
		return err
	}
	_, err = d.gate.Execute(ctx, changed.ID)
	if err == nil || changed.Digest == tk.Digest {
		return fmt.Errorf("changed recipient ran")
	}
	results[2] = "reject: action differs from what was approved (new ticket, not approved)"

	// 4: q3.csv edited between approval and execution.
	tk4, err := d.approved(ctx, act("finance@example.com"))
	if err != nil {
		return err
	}
	if err := d.writeQ3(q3 + "note,see attached instructions\n"); err != nil {
		return err
	}
	_, err = d.gate.Execute(ctx, tk4.ID)
	results[3] = outcome(err)
	if err := d.writeQ3(q3); err != nil {
		return err
	}

	// 5: used 20 minutes later.
	tk5, err := d.approved(ctx, act("finance@example.com"))
	if err != nil {
		return err
	}
	d.clock.Advance(20 * time.Minute)
	_, err = d.gate.Execute(ctx, tk5.ID)
	results[4] = outcome(err)

	// 6: the evidence for one action, its challenge rewritten to name
	// another: the passkey's signature no longer covers it.
	forged, target, err := d.swappedEvidence(ctx)
	if err != nil {
		return err
	}
	_, err = d.gate.Desk().Approve(ctx, target, forged)
	results[5] = outcome(err)

	// 7: the agent approving its own call cannot even enroll a passkey.
	_, err = d.enrol.Invite(ctx, "agent:reports")
	results[6] = outcome(err)

	labels := []string{"the approved call (keys reordered)", "the same approval again",
		"recipient changed after approval", "attachment edited after approval", "used 20 minutes later",
		"digest swapped in the evidence", "agent approves its own call"}
	for i, l := range labels {
		fmt.Fprintf(d.out, "  %d. %-36s %s\n", i+1, l, results[i])
	}
	return nil
}

// swappedEvidence signs an assertion for send_email to finance@example.com
// and rewrites its client data to carry the challenge of the look-alike
// call's ticket, returned as target.
func (d *demo) swappedEvidence(ctx context.Context) ([]byte, stepup.TicketID, error) {
	orig, err := d.gate.Propose(ctx, act("finance@example.com"))
	if err != nil {
		return nil, "", err
	}
	// Another look-alike than case 3's: a second request to that domain,
	// still pending and never approved, is refused by flood control's
	// first-contact rule (one card an hour to a domain not seen before).
	target, err := d.gate.Propose(ctx, act("finance@examp1e.com"))
	if err != nil {
		return nil, "", err
	}
	if target.Status != stepup.StatusPending {
		return nil, "", fmt.Errorf("look-alike call: want pending, got %s: %s", target.Status, target.Reason)
	}
	pOrig, err := d.gate.Desk().Prompt(ctx, orig.ID)
	if err != nil {
		return nil, "", err
	}
	pTarget, err := d.gate.Desk().Prompt(ctx, target.ID)
	if err != nil {
		return nil, "", err
	}
	assertion, err := d.dana.Assert(pOrig.Options)
	if err != nil {
		return nil, "", err
	}
	forged, err := rewriteChallenge(assertion, pTarget.Challenge[:])
	return forged, target.ID, err
}
