package flood_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store/memory"
)

func ExampleNew() {
	st := memory.New(nil) // store/sqlite or store/postgres in a real gate
	now := func() time.Time { return time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC) }
	lim, err := flood.New(st, flood.Limits{
		Session: flood.Rate{N: 5, Per: time.Minute},
		// Zero fields take the defaults; a negative count turns a limit off.
		UserLockout: flood.Lockout{After: -1},
	}, now)
	if err != nil {
		panic(err)
	}
	fmt.Println(lim.Limits().Session.N, lim.Limits().User == flood.DefaultUserRate,
		lim.Limits().ApproverInflow == flood.DefaultApproverInflow)

	_, err = flood.New(st, flood.Limits{Session: flood.Rate{N: 5}}, now)
	fmt.Println(errors.Is(err, flood.ErrInvalidLimits))
	// Output:
	// 5 true true
	// true
}

func ExampleLimiter_Admit() {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	lim, err := flood.New(memory.New(nil), flood.Limits{Session: flood.Rate{N: 2, Per: time.Minute}},
		func() time.Time { return now })
	if err != nil {
		panic(err)
	}
	// The gate names the call's principal, its session and the people its
	// prompt would reach.
	erin := flood.Request{User: "user:erin", Agent: "agent:reports", Session: "run-9",
		Approvers: []string{"user:erin"}}
	for range 3 {
		err := lim.Admit(ctx, erin)
		var le *flood.LimitError
		switch {
		case err == nil:
			fmt.Println("admitted")
		case errors.As(err, &le):
			fmt.Println(errors.Is(err, flood.ErrRateLimited), le.Scope, le.RetryAfter)
		default:
			fmt.Println("not admitted:", err) // fail closed
		}
	}
	// Another tenant's session with the same id has its own count.
	dana := flood.Request{User: "user:dana", Agent: "agent:reports", Session: "run-9",
		Approvers: []string{"user:dana"}}
	fmt.Println(lim.Admit(ctx, dana))
	// Output:
	// admitted
	// admitted
	// true session 1m30s
	// <nil>
}

func ExampleLimiter_Admit_approverInflow() {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	lim, err := flood.New(memory.New(nil), flood.Limits{ApproverInflow: flood.Rate{N: 2, Per: time.Hour}},
		func() time.Time { return now })
	if err != nil {
		panic(err)
	}
	// Three users' agents, each well within its own limits, all prompt
	// the same on-call approver.
	for _, user := range []string{"user:ann", "user:bob", "user:cy"} {
		err := lim.Admit(ctx, flood.Request{User: user, Agent: "agent:ops", Session: "s1",
			Approvers: []string{"user:oncall"}})
		var le *flood.LimitError
		if errors.As(err, &le) {
			fmt.Println(user, le.Scope, le.RetryAfter)
			continue
		}
		fmt.Println(user, err)
	}
	// Output:
	// user:ann <nil>
	// user:bob <nil>
	// user:cy approver 1h30m0s
}

func ExampleLimiter_Decided() {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	lim, err := flood.New(memory.New(nil), flood.Limits{
		AgentLockout: flood.Lockout{After: 2, For: 10 * time.Minute},
	}, func() time.Time { return now })
	if err != nil {
		panic(err)
	}
	r := flood.Request{User: "user:erin", Agent: "agent:reports", Approvers: []string{"user:erin"}}
	// An approver denied two requests of the agent, in two sessions: the
	// agent is locked out in every session, a fresh one included.
	r.Session = "run-1"
	_ = lim.Decided(ctx, r, false)
	r.Session = "run-2"
	_ = lim.Decided(ctx, r, false)
	r.Session = "run-3"
	err = lim.Admit(ctx, r)
	fmt.Println(errors.Is(err, flood.ErrLockedOut), err)

	// An approval ends the run of denials.
	_ = lim.Decided(ctx, r, true)
	fmt.Println(lim.Admit(ctx, r))
	// Output:
	// true flood: locked out after repeated denials (agent); retry after 10m0s
	// <nil>
}

func ExampleLimiter_Caps() {
	lim, err := flood.New(memory.New(nil), flood.Limits{PendingPerSession: 3}, time.Now)
	if err != nil {
		panic(err)
	}
	// The gate passes these to store.Tickets.Park, which refuses a fourth
	// live pending ticket of a session with an error wrapping
	// flood.ErrPendingCap, and merges duplicates instead of parking them.
	fmt.Printf("%+v\n", lim.Caps())
	// Output:
	// {PerSession:3 PerUser:20}
}

func ExampleLimits_Validate() {
	err := flood.Limits{ApproverInflow: flood.Rate{N: 100, Per: time.Nanosecond}}.Validate()
	fmt.Println(err)
	// Output:
	// flood: invalid limits: approver inflow: window must be whole microseconds, at least 1ms
}

func ExampleLimiter_Prune() {
	st := memory.New(nil)
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	lim, err := flood.New(st, flood.Limits{}, func() time.Time { return at })
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	req := flood.Request{User: "user:dana", Agent: "agent:mailer", Session: "s1", Approvers: []string{"user:dana"}}
	if err := lim.Admit(ctx, req); err != nil {
		panic(err)
	}
	n, _ := lim.Prune(ctx)
	fmt.Println("pruned at once:", n)
	at = at.Add(3 * 24 * time.Hour) // past every window, and the clocks' horizon
	n, _ = lim.Prune(ctx)
	fmt.Println("pruned three days on:", n)
	// Output:
	// pruned at once: 0
	// pruned three days on: 4
}
