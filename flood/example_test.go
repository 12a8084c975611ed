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
	st := memory.New() // store/sqlite or store/postgres in a real gate
	now := func() time.Time { return time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC) }
	lim, err := flood.New(st, flood.Limits{
		Session: flood.Rate{N: 5, Per: time.Minute},
		// Zero fields take the defaults; a negative count turns a limit off.
		UserLockout: flood.Lockout{After: -1},
	}, now)
	if err != nil {
		panic(err)
	}
	fmt.Println(lim.Limits().Session.N, lim.Limits().User == flood.DefaultUserRate)

	_, err = flood.New(st, flood.Limits{Session: flood.Rate{N: 5}}, now)
	fmt.Println(errors.Is(err, flood.ErrInvalidLimits))
	// Output:
	// 5 true
	// true
}

func ExampleLimiter_Admit() {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	lim, err := flood.New(memory.New(), flood.Limits{Session: flood.Rate{N: 2, Per: time.Minute}},
		func() time.Time { return now })
	if err != nil {
		panic(err)
	}
	for range 3 {
		err := lim.Admit(ctx, "session-7", "alice")
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
	// Output:
	// admitted
	// admitted
	// true session 1m30s
}

func ExampleLimiter_Denied() {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	lim, err := flood.New(memory.New(), flood.Limits{
		SessionLockout: flood.Lockout{After: 2, For: 10 * time.Minute},
	}, func() time.Time { return now })
	if err != nil {
		panic(err)
	}
	// An approver denied two requests of the session in a row.
	_ = lim.Denied(ctx, "session-7", "alice")
	_ = lim.Denied(ctx, "session-7", "alice")
	err = lim.Admit(ctx, "session-7", "alice")
	fmt.Println(errors.Is(err, flood.ErrLockedOut), err)
	// Output:
	// true flood: locked out after repeated denials (session); retry after 10m0s
}

func ExampleLimiter_Approved() {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	lim, err := flood.New(memory.New(), flood.Limits{
		SessionLockout: flood.Lockout{After: 2, For: 10 * time.Minute},
	}, func() time.Time { return now })
	if err != nil {
		panic(err)
	}
	_ = lim.Denied(ctx, "session-7", "alice")
	_ = lim.Approved(ctx, "session-7", "alice") // ends the run of denials
	_ = lim.Denied(ctx, "session-7", "alice")
	fmt.Println(lim.Admit(ctx, "session-7", "alice"))
	// Output:
	// <nil>
}

func ExampleLimiter_Caps() {
	lim, err := flood.New(memory.New(), flood.Limits{PendingPerSession: 3}, time.Now)
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
	err := flood.Limits{User: flood.Rate{N: 100, Per: time.Nanosecond}}.Validate()
	fmt.Println(err)
	// Output:
	// flood: invalid limits: user rate: window must be whole microseconds, at least 1ms
}
