package grant_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/grant"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// dana's support agent asks to refund an order.
func refundCall(args string) canon.Effect {
	return canon.Effect{
		Tool: "issue_refund", Args: []byte(args), Task: "t-42", Step: "s1",
		Principal:     canon.Principal{User: "user:dana", Agent: "agent:support"},
		PolicyVersion: "2026-10-30.1", Audience: "payments",
	}
}

func ExampleCovers() {
	// Dana approved refunds of order A-17 in EUR, up to 120.
	g := grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "issue_refund", Audience: "payments", User: "user:dana",
		Args: []grant.Rule{
			grant.Pin("/order", "A-17"),
			grant.Range("/amount", "0", "120"),
			grant.Pin("/currency", "EUR"),
		},
	}}
	for _, args := range []string{
		`{"order":"A-17","currency":"EUR","amount":120}`,
		`{"order":"A-17","currency":"EUR","amount":1200}`,
		`{"order":"A-17","currency":"EUR","amount":120,"to_account":"X-9"}`,
		`{"order":"A-17","amount":120}`,
	} {
		cov, err := grant.Covers(g, refundCall(args))
		if err != nil {
			panic(err)
		}
		fmt.Printf("%v %q %q\n", cov.Covered, cov.Reason, cov.Path)
	}
	// Output:
	// true "" ""
	// false "argument outside the grant bounds" "/amount"
	// false "argument not pinned" "/to_account"
	// false "pinned argument missing" "/currency"
}

func ExamplePlan() {
	// Approve a plan, not keystrokes: these three refunds, these amounts.
	var ds []canon.Digest
	for _, args := range []string{
		`{"order":"A-17","amount":120}`, `{"order":"B-02","amount":35.5}`, `{"order":"C-88","amount":12}`,
	} {
		d, err := refundCall(args).Digest()
		if err != nil {
			panic(err)
		}
		ds = append(ds, d)
	}
	plan := grant.Plan(ds...)
	for _, args := range []string{`{"amount":35.50,"order":"B-02"}`, `{"order":"D-01","amount":12}`} {
		cov, err := grant.Covers(plan, refundCall(args))
		if err != nil {
			panic(err)
		}
		fmt.Printf("%v %q\n", cov.Covered, cov.Reason)
	}
	// Output:
	// true ""
	// false "digest not granted"
}

func ExampleExact() {
	call := refundCall(`{"order":"A-17","amount":120}`)
	d, err := call.Digest()
	if err != nil {
		panic(err)
	}
	cov, _ := grant.Covers(grant.Exact(d), call)
	fmt.Println(cov.Covered)
	// Output:
	// true
}

func ExampleInDomains() {
	g := grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "send_email", Audience: "mail", User: "user:dana",
		Args: []grant.Rule{grant.InDomains("/to", "example.com"), grant.Text("/subject", 100)},
	}}
	for _, to := range []string{"finance@example.com", "finance@exarnple.com", "evil@attacker.test, finance@example.com"} {
		e := canon.Effect{Tool: "send_email", Audience: "mail", Principal: canon.Principal{User: "user:dana"},
			Args: fmt.Appendf(nil, `{"to":%q,"subject":"Q3 summary"}`, to)}
		cov, _ := grant.Covers(g, e)
		fmt.Println(cov.Covered)
	}
	// Output:
	// true
	// false
	// false
}

func ExampleGrant_Marshal() {
	g := grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "issue_refund", Audience: "payments", User: "user:dana",
		Args: []grant.Rule{grant.Pin("/order", "A-17"), grant.Range("/amount", "0", "120.00")},
	}}
	spec, err := g.Marshal()
	fmt.Println(string(spec), err)
	// Output:
	// {"kind":"template","template":{"args":[{"equals":"A-17","path":"/order"},{"max":120,"min":0,"path":"/amount"}],"audience":"payments","tool":"issue_refund","user":"user:dana"}} <nil>
}

func ExampleGrant_Validate() {
	g := grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "issue_refund", User: "user:dana",
		Args: []grant.Rule{{Path: "/amount"}}, // a rule that constrains nothing
	}}
	fmt.Println(g.Validate())
	// Output:
	// grant: invalid grant: rule 0: a rule sets exactly one of equals, one_of, min/max, domains, max_bytes
}

// A rule's path is bounded by MaxPathBytes and MaxPathTokens: a longer one
// could name no argument canon accepts, or none a person would read.
func ExampleGrant_Validate_pathLimits() {
	deep := strings.Repeat("/a", grant.MaxPathTokens+1)
	g := grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "issue_refund", User: "user:dana", Args: []grant.Rule{grant.Pin(deep, 1)},
	}}
	fmt.Println(g.Validate())
	// Output:
	// grant: invalid grant: rule 0: path is over 4096 bytes or 64 tokens
}

// A plan is revoked by its own id; its steps, each stored with a record of
// its own, are revoked with it.
func ExampleTarget_revoked() {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	st := memory.New(&memory.Options{Clock: func() time.Time { return now }})
	call := refundCall(`{"order":"A-17","amount":120}`)
	s, _ := canon.Seal(call)
	id, _ := grant.Put(ctx, st, grant.Plan(s.Digest()), grant.Record{
		ID: "plan-7", User: "user:dana", CreatedAt: now, ExpiresAt: now.Add(time.Hour),
	})
	target, err := grant.Target(ctx, st, id, s)
	fmt.Println(target == id+"/"+s.Digest().String(), err)
	_ = st.RevokeGrant(ctx, id, now, func(store.Approval, bool) audit.Record {
		return audit.Record{TicketID: id, Task: "grant", Session: "grant:user:dana",
			Decision: audit.DecisionRevoked, Reason: "revoked", Approver: "user:dana"}
	})
	_, err = grant.Target(ctx, st, id, s)
	fmt.Println(errors.Is(err, grant.ErrRevoked))
	_, err = grant.Use(ctx, st, id, call, now)
	fmt.Println(errors.Is(err, grant.ErrRevoked))
	// Output:
	// true <nil>
	// true
	// true
}

func ExampleParse() {
	_, err := grant.Parse([]byte(`{"kind":"template","template":{"tool":"issue_refund","audience":"payments",
		"user":"user:dana","args":[{"path":"/amount","max":"120"}]}}`))
	fmt.Println(errors.Is(err, grant.ErrInvalidGrant), err)
	// Output:
	// true grant: invalid grant: not exactly the fields of a grant
}

func ExamplePut() {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	st := memory.New(&memory.Options{Clock: func() time.Time { return now }}) // store/sqlite or store/postgres in a real gate
	d, _ := refundCall(`{"order":"A-17","amount":120}`).Digest()
	id, err := grant.Put(ctx, st, grant.Plan(d), grant.Record{
		ID: "plan-7", User: "user:dana", CreatedAt: now, ExpiresAt: now.Add(time.Hour),
	})
	fmt.Println(id, err)
	// Output:
	// plan-7 <nil>
}

func ExampleUse() {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	st := memory.New(&memory.Options{Clock: func() time.Time { return now }})
	g := grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "issue_refund", Audience: "payments", User: "user:dana",
		Args: []grant.Rule{grant.Pin("/order", "A-17"), grant.Range("/amount", "0", "120")},
	}}
	id, err := grant.Put(ctx, st, g, grant.Record{User: "user:dana", Uses: 1, CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
	if err != nil {
		panic(err)
	}
	_, err = grant.Use(ctx, st, id, refundCall(`{"order":"A-17","amount":1200}`), now)
	fmt.Println(err)
	after, err := grant.Use(ctx, st, id, refundCall(`{"order":"A-17","amount":120}`), now)
	fmt.Println(after.Remaining, err)
	_, err = grant.Use(ctx, st, id, refundCall(`{"order":"A-17","amount":120}`), now)
	fmt.Println(errors.Is(err, grant.ErrUsedUp))
	// Output:
	// grant: effect not covered: argument outside the grant bounds at "/amount"
	// 0 <nil>
	// true
}

func ExampleCoversSealed() {
	g := grant.Grant{Kind: grant.KindTemplate, Template: &grant.Template{
		Tool: "issue_refund", Audience: "payments", User: "user:dana",
		Args: []grant.Rule{grant.Pin("/order", "A-17"), grant.Range("/amount", "0", "120.00")},
	}}
	// The gate seals a call once and hands the same Sealed to every check.
	s, err := canon.Seal(refundCall(`{"order":"A-17","amount":119.99}`))
	if err != nil {
		panic(err)
	}
	cov, err := grant.CoversSealed(g, s)
	fmt.Println(cov.Covered, err)
	// Output: true <nil>
}
