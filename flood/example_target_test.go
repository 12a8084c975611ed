package flood_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store/memory"
)

func ExampleEmailTarget() {
	for _, addr := range []string{
		"payout@attacker.example",
		"Payout+7@Pay.ATTACKER.example.",
		"Accounts <ap@ａｔｔａｃｋｅｒ.example>",
		"ap@аttacker.example", // a Cyrillic а: another domain
	} {
		t, err := flood.EmailTarget(addr)
		fmt.Println(t, err)
	}
	_, err := flood.EmailTarget("not an address")
	fmt.Println(errors.Is(err, flood.ErrInvalidTarget))
	// Output:
	// domain:attacker.example <nil>
	// domain:attacker.example <nil>
	// domain:attacker.example <nil>
	// domain:xn--ttacker-1fg.example <nil>
	// true
}

func ExampleRepositoryTarget() {
	for _, repo := range []string{"https://github.com/Owner/Repo.git", "git@github.com:owner/repo"} {
		t, err := flood.RepositoryTarget(repo)
		fmt.Println(t, err)
	}
	// Output:
	// repo:github.com/owner/repo <nil>
	// repo:github.com/owner/repo <nil>
}

func ExampleLimiter_Admission() {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	lim, err := flood.New(memory.New(nil), flood.Limits{}, func() time.Time { return now })
	if err != nil {
		panic(err)
	}
	to, err := flood.EmailTarget("payout@attacker.example")
	if err != nil {
		panic(err)
	}
	// A hijacked agent asks to pay a domain nobody in the operator's
	// history has been paid at: a first contact, which the gate may send
	// to a second approver.
	r := flood.Request{User: "user:erin", Agent: "agent:a", Session: "s1", Approvers: []string{"user:erin"}, Target: to}
	adm, err := lim.Admission(ctx, r)
	fmt.Println(adm.FirstContact, err)

	// Another user's agent, another session, another spelling: the same
	// target, one request an hour until a person approves one.
	r2 := r
	r2.User, r2.Agent, r2.Session = "user:dana", "agent:b", "s2"
	r2.Target, _ = flood.EmailTarget("Billing+2@ATTACKER.example.")
	_, err = lim.Admission(ctx, r2)
	var le *flood.LimitError
	fmt.Println(errors.As(err, &le), le.Scope)

	// Erin denies the first: the target is locked for a day.
	if err := lim.Decided(ctx, r, false); err != nil {
		panic(err)
	}
	_, err = lim.Admission(ctx, r2)
	fmt.Println(errors.Is(err, flood.ErrLockedOut))
	// Output:
	// true <nil>
	// true first-contact
	// true
}

func ExampleLimiter_Introduce() {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	lim, err := flood.New(memory.New(nil), flood.Limits{}, func() time.Time { return now })
	if err != nil {
		panic(err)
	}
	// The operator imports the team's known vendors.
	vendor, err := flood.DomainTarget("vendor.example")
	if err != nil {
		panic(err)
	}
	if err := lim.Introduce(ctx, vendor); err != nil {
		panic(err)
	}
	adm, err := lim.Admission(ctx, flood.Request{User: "user:erin", Agent: "agent:a", Session: "s",
		Approvers: []string{"user:erin"}, Target: vendor})
	fmt.Println(adm.FirstContact, err)
	// Output:
	// false <nil>
}
