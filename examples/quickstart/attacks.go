package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// agentIndependence prints P1: nothing the agent controls can produce the
// approval.
func (d *demo) agentIndependence(ctx context.Context) error {
	fmt.Fprintln(d.out, "\nP1 agent independence:")
	_, err := d.enrol.Invite(ctx, "agent:reports")
	d.line("agent enrolls its own passkey", outcome(err))

	planted, err := d.plant(ctx, "agent:reports")
	if err != nil {
		return err
	}
	err = d.attempt(ctx, planted)
	d.line("agent's passkey slipped into the store", outcome(err))

	stranger := stepuptest.NewAuthenticator(stepuptest.RP().ID, stepuptest.RP().Origin)
	if _, err := stranger.Register([]byte(`{"challenge":"AAAAAAAAAAAAAAAAAAAAAA","user":{"id":"AQ"}}`)); err != nil {
		return err
	}
	d.line("passkey created on the agent's host", outcome(d.attempt(ctx, stranger)))
	d.line("answer from the agent's origin", outcome(d.attempt(ctx, d.dana,
		stepuptest.WithOrigin("https://agent.internal"))))
	d.line("passkey scoped to the agent's host (RP ID)", outcome(d.attempt(ctx, d.dana,
		stepuptest.WithRPID("agent.internal"))))
	d.line("approval without user verification", outcome(d.attempt(ctx, d.dana,
		stepuptest.WithoutUserVerification())))
	return nil
}

// attempt proposes a fresh send_email and tries to approve it with a.
func (d *demo) attempt(ctx context.Context, a *stepuptest.Authenticator, tweaks ...stepuptest.Tweak) error {
	c := act("finance@example.com")
	c.Step = "step-" + store.NewID()[:8]
	tk, err := d.gate.Propose(ctx, c)
	if err != nil {
		return err
	}
	if tk.Status != stepup.StatusPending {
		return fmt.Errorf("attempt: %s: %s", tk.Status, tk.Reason)
	}
	// The attacker's authenticator signs with its own credential, whatever
	// the request allows.
	if ids := a.CredentialIDs(); len(ids) > 0 {
		tweaks = append([]stepuptest.Tweak{stepuptest.WithCredential(ids[0])}, tweaks...)
	}
	_, err = stepuptest.Approve(ctx, d.gate.Desk(), a, tk.ID, tweaks...)
	return err
}

// plant stores a credential for user straight in the database, as a
// compromised administrator might, and returns its authenticator.
func (d *demo) plant(ctx context.Context, user string) (*stepuptest.Authenticator, error) {
	a := stepuptest.NewAuthenticator(stepuptest.RP().ID, stepuptest.RP().Origin)
	h := sha256.Sum256([]byte("asu/v1/user\x00" + user)) // the gate's user handle
	opts := `{"challenge":"AAAAAAAAAAAAAAAAAAAAAA","user":{"id":"` + base64.RawURLEncoding.EncodeToString(h[:]) + `"}}`
	if _, err := a.Register([]byte(opts)); err != nil {
		return nil, err
	}
	id := a.CredentialIDs()[0]
	return a, d.st.PutCredential(ctx, store.Credential{ID: id, User: user, PublicKey: a.PublicKey(id), CreatedAt: d.clock.Now()})
}

// substitutions are the paper's post-approval substitution attacks: each
// rewrites the runtime's own state after the approver approved.
var substitutions = []struct {
	label  string
	attack func(c *stepup.Call)
}{
	{"resumer reloads an edited checkpoint", func(c *stepup.Call) {
		_ = json.Unmarshal([]byte(`{"Args":{"to":"finance@exarnple.com","subject":"Q3 summary","attachment":"q3.csv"}}`), c)
	}},
	{"hook rewrites the arguments", func(c *stepup.Call) {
		c.Args = json.RawMessage(`{"to":"attacker@example.net","subject":"Q3 summary","attachment":"q3.csv"}`)
	}},
	{"edited stored history", func(c *stepup.Call) {
		c.Args = json.RawMessage(`{"to":"finance@example.com","subject":"Q3 summary","attachment":"../../etc/passwd"}`)
	}},
}

// effectBinding prints P2: what runs is what was approved.
func (d *demo) effectBinding(ctx context.Context) error {
	fmt.Fprintln(d.out, "\nP2 effect binding (after approval; naive runtime vs the gate):")
	for _, s := range substitutions {
		// The naive runtime keeps a yes and runs whatever it holds now.
		naive := act("finance@example.com")
		s.attack(&naive)
		var held struct {
			To         string `json:"to"`
			Attachment string `json:"attachment"`
		}
		_ = json.Unmarshal(naive.Args, &held)

		// The gate's runtime keeps a ticket id; Execute runs the stored effect.
		c := act("finance@example.com")
		c.Step = "step-" + store.NewID()[:8]
		tk, err := d.approved(ctx, c)
		if err != nil {
			return err
		}
		s.attack(&c)
		before := d.mail.count()
		if _, err := d.gate.Execute(ctx, tk.ID); err != nil {
			return err
		}
		ran := d.mail.last()
		if d.mail.count() != before+1 || recipient(ran) != "finance@example.com" {
			return fmt.Errorf("substitution changed what ran")
		}
		d.line(s.label, fmt.Sprintf("naive: sends %s to %s; gate: sends q3.csv to %s",
			held.Attachment, held.To, recipient(ran)))
	}
	d.line("recipient changed, attachment edited", "see cases 3 and 4")
	d.line("evidence rewritten for another action", "see case 6")
	return nil
}

// freshness prints P3: each approval is fresh and runs at most once.
func (d *demo) freshness(ctx context.Context) error {
	fmt.Fprintln(d.out, "\nP3 freshness and single use:")
	d.line("same approval again, used late", "see cases 2 and 5")

	c := act("finance@example.com")
	c.Step = "step-replay"
	tk, err := d.gate.Propose(ctx, c)
	if err != nil {
		return err
	}
	p, err := d.gate.Desk().Prompt(ctx, tk.ID)
	if err != nil {
		return err
	}
	answer, err := d.dana.Assert(p.Options)
	if err != nil {
		return err
	}
	if _, err := d.gate.Desk().Approve(ctx, tk.ID, answer); err != nil {
		return err
	}
	_, err = d.gate.Desk().Approve(ctx, tk.ID, answer)
	d.line("assertion replayed on its ticket", outcome(err))
	c.Step = "step-replay-2"
	other, err := d.gate.Propose(ctx, c)
	if err != nil {
		return err
	}
	_, err = d.gate.Desk().Approve(ctx, other.ID, answer)
	d.line("assertion replayed on another ticket", outcome(err))
	// The passkey signs with counter 500; a clone of it, still at 500, tries next.
	if err := d.attempt(ctx, d.dana, stepuptest.WithSignCount(500)); err != nil {
		return err
	}
	d.line("cloned passkey (counter did not advance)", outcome(d.attempt(ctx, d.dana, stepuptest.WithSignCount(500))))

	ran, refused, err := d.concurrent(ctx, tk.ID, 64)
	if err != nil {
		return err
	}
	d.line("64 concurrent Executes of one approval", fmt.Sprintf("%d ran, %d refused as used", ran, refused))

	first, again, err := d.crash(ctx)
	if err != nil {
		return err
	}
	same := "a new"
	if first == again {
		same = "the same"
	}
	d.line("crash after consume, restart, Recover", "ran once, with "+same+" idempotency key")
	return nil
}

// concurrent runs n Executes of ticket id at once.
func (d *demo) concurrent(ctx context.Context, id stepup.TicketID, n int) (ran, refused int, err error) {
	before := d.mail.count()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = d.gate.Execute(ctx, id)
		}()
	}
	wg.Wait()
	for _, e := range errs {
		switch {
		case e == nil:
		case errors.Is(e, stepup.ErrConsumed):
			refused++
		default:
			return 0, 0, e
		}
	}
	return d.mail.count() - before, refused, nil
}

// crash kills the executor after the consume, reopens the database as a
// restarted process would, and recovers. It returns the idempotency keys
// of the interrupted run and of the recovery.
func (d *demo) crash(ctx context.Context) (string, string, error) {
	c := act("finance@example.com")
	c.Step = "step-crash"
	tk, err := d.approved(ctx, c)
	if err != nil {
		return "", "", err
	}
	if err := d.st.Close(); err != nil {
		return "", "", err
	}
	dying := &crasher{}
	if err := d.open(dying); err != nil {
		return "", "", err
	}
	dying.die = func() { _ = d.st.Close() } // the process, and its connection, are gone
	if _, err := d.gate.Execute(ctx, tk.ID); !errors.Is(err, stepup.ErrOutcomeUnknown) {
		return "", "", fmt.Errorf("the crashed run's outcome was recorded: %v", err)
	}
	if err := d.st.Close(); err != nil {
		return "", "", err
	}
	if err := d.open(d.mail); err != nil {
		return "", "", err
	}
	before := d.mail.count()
	if results, err := d.gate.Recover(ctx); err != nil || len(results) != 0 {
		return "", "", fmt.Errorf("recovery took a live lease: %v", err)
	}
	d.clock.Advance(gate.DefaultLease) // the crashed owner's lease runs out
	// Recovery takes a run over only after watching its lease go
	// unrenewed for a whole lease of its own clock.
	if results, err := d.gate.Recover(ctx); err != nil || len(results) != 0 {
		return "", "", fmt.Errorf("recovery took a lease it had not watched: %v", err)
	}
	d.clock.Advance(gate.DefaultLease)
	results, err := d.gate.Recover(ctx)
	if err != nil {
		return "", "", err
	}
	if len(results) != 1 || d.mail.count() != before+1 {
		return "", "", fmt.Errorf("recovery ran %d times", d.mail.count()-before)
	}
	return dying.key, results[0].IdempotencyKey, nil
}

// crasher dies inside the tool, after the gate consumed the approval:
// the gate's process is killed with it, so nothing after the consume is
// recorded.
type crasher struct {
	key string
	die func()
}

func (c *crasher) Execute(_ context.Context, _ canon.Effect, key string) ([]byte, error) {
	c.key = key
	c.die()
	return nil, errors.New("process killed")
}

// rewriteChallenge replaces the challenge in an assertion's client data,
// leaving the signature as it was.
func rewriteChallenge(assertion, challenge []byte) ([]byte, error) {
	var msg map[string]any
	if err := json.Unmarshal(assertion, &msg); err != nil {
		return nil, err
	}
	resp, _ := msg["response"].(map[string]any)
	raw, _ := resp["clientDataJSON"].(string)
	cd, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return nil, err
	}
	var client map[string]any
	if err := json.Unmarshal(cd, &client); err != nil {
		return nil, err
	}
	client["challenge"] = base64.RawURLEncoding.EncodeToString(challenge)
	if cd, err = json.Marshal(client); err != nil {
		return nil, err
	}
	resp["clientDataJSON"] = base64.RawURLEncoding.EncodeToString(cd)
	return json.Marshal(msg)
}
