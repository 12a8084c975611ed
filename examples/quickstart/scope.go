package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// refund is issue_refund for Dana's support agent, in a task of its own.
func refund(step, args string) stepup.Call {
	return stepup.Call{Tool: "issue_refund", Args: json.RawMessage(args), Task: "t-77", Step: step,
		Session: "session-refunds", Principal: canon.Principal{User: "user:dana", Agent: "agent:support"}}
}

// scopeIntegrity prints P6: a grant covers exactly what it names.
func (d *demo) scopeIntegrity(ctx context.Context) error {
	fmt.Fprintln(d.out, "\nP6 scope integrity (grant: refunds of order A-17 up to 120, twice):")
	desk := d.gate.Desk()
	tmpl := grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "issue_refund", Audience: "issue_refund", User: "user:dana",
		Args: []grant.Rule{grant.Pin("/order", "A-17"), grant.Range("/amount", "0", "120")}}}
	req, err := desk.Grant(ctx, "user:dana", gate.GrantSpec{Grant: tmpl, Uses: 2,
		ExpiresAt: d.clock.Now().Add(8 * time.Hour)})
	if err != nil {
		return err
	}
	issued, err := stepuptest.Approve(ctx, desk, d.dana, req.ID)
	if err != nil {
		return err
	}
	if issued.Status != stepup.StatusExecuted {
		return fmt.Errorf("grant not issued: %s", issued.Status)
	}
	d.line("grant signed with Dana's passkey", "issued")

	for _, c := range []struct{ label, args string }{
		{"refund 120 to A-17", `{"order":"A-17","amount":120}`},
		{"refund 300 to A-17", `{"order":"A-17","amount":300}`},
		{"refund 1200 to A-17", `{"order":"A-17","amount":1200}`},
		{"refund 120 to A-18", `{"order":"A-18","amount":120}`},
		{"refund 120 to A-17, extra argument", `{"order":"A-17","amount":120,"to_account":"X-9"}`},
		{"refund 100 to A-17 (second use)", `{"order":"A-17","amount":100}`},
		{"refund 100 to A-17 (grant used up)", `{"order":"A-17","amount":100}`},
	} {
		call := refund("step-"+c.label, c.args)
		call.Grant = string(req.ID)
		word, err := d.withGrant(ctx, call)
		if err != nil {
			return err
		}
		d.line(c.label, word)
	}

	args, _ := json.Marshal(map[string]any{"grant": tmpl, "uses": 1000, "expires_at": "2100-01-01T00:00:00Z"})
	tk, err := d.gate.Propose(ctx, stepup.Call{Tool: plug.GrantTool, Args: args, Task: "t-77",
		Session: "session-refunds", Principal: canon.Principal{User: "user:dana", Agent: "agent:support"}})
	if err != nil {
		return err
	}
	d.line("agent proposes a grant of its own", "deny: "+tk.Reason)

	// A "refunds are fine" approval checks the tool name only; the gate
	// checks every argument against the grant.
	naive := refund("step-naive", `{"order":"Z-99","amount":90,"to_account":"X-9"}`)
	naive.Grant = string(req.ID)
	word, err := d.withGrant(ctx, naive)
	if err != nil {
		return err
	}
	d.line("refund 90 to Z-99, extra argument", "naive grant (tool only): runs; gate: "+word)
	return nil
}

// withGrant proposes a call naming a grant and words the gate's answer,
// with the audit row's note when the grant was not used.
func (d *demo) withGrant(ctx context.Context, c stepup.Call) (string, error) {
	tk, err := d.gate.Propose(ctx, c)
	if err != nil {
		return "", err
	}
	switch tk.Status {
	case stepup.StatusApproved:
		before := d.mail.count()
		if _, err := d.gate.Execute(ctx, tk.ID); err != nil || d.mail.count() != before+1 {
			return "", fmt.Errorf("granted refund did not run once: %v", err)
		}
		return "approved by the grant, ran", nil
	case stepup.StatusPending:
		rows, err := d.st.AuditByTask(ctx, c.Task)
		if err != nil {
			return "", err
		}
		_, why, _ := strings.Cut(rows[len(rows)-1].Reason, "grant not used: ")
		why = strings.TrimPrefix(why, "effect not covered: ")
		if _, err := stepuptest.Deny(ctx, d.gate.Desk(), d.dana, tk.ID, "demo"); err != nil {
			return "", err
		}
		return "ask Dana (" + why + ")", nil
	default:
		return "deny: " + tk.Reason, nil
	}
}

// writeReceipt writes the receipt of case 1's approved send_email call to
// file and prints the approver's public key, as held by her authenticator.
func (d *demo) writeReceipt(ctx context.Context, file string) error {
	r, err := d.gate.Desk().Receipt(ctx, d.sent)
	if err != nil {
		return err
	}
	data, err := r.Marshal()
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return err
	}
	key := base64.RawURLEncoding.EncodeToString(d.dana.PublicKey(d.dana.CredentialIDs()[0]))
	keyFile := keyFileFor(file)
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o644); err != nil {
		return err
	}
	rp := stepuptest.RP()
	fmt.Fprintf(d.out, "\nreceipt (%s) of the approved send_email call written\n", receipt.FormatV1)
	fmt.Fprintf(d.out, "approver public key: %s\n", key)
	fmt.Fprintf(d.out, "approver public key written to %s; check the receipt with only that key:\n", keyFile)
	fmt.Fprintf(d.out, "verify: go run ./examples/verify receipt %s --key %s --rp-id %s --origin %s\n",
		shellQuote(file), shellQuote(keyFile), shellQuote(rp.ID), shellQuote(rp.Origin))
	return nil
}

// keyFileFor names the approver's key file beside receipt file: r.json
// gives r.key.
func keyFileFor(file string) string {
	return strings.TrimSuffix(file, filepath.Ext(file)) + ".key"
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// characters a shell leaves alone.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
