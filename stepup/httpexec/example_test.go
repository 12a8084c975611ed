package httpexec_test

import (
	"fmt"
	"time"

	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/httpexec"
)

// The executor of one tool, registered with the gate: the gate runs each
// approved issue_refund by POSTing it, signed, to the refunds service.
func ExampleNew() {
	secret := []byte("a secret of 32 bytes or more, shared with the tool")
	exec, err := httpexec.New("issue_refund", "https://refunds.internal.example/asu", secret,
		&httpexec.Options{Timeout: 10 * time.Second, Retries: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	opts := []gate.Option{gate.WithExecutor("issue_refund", exec)} // for gate.New
	fmt.Println(len(opts), "executor")
	// Output: 1 executor
}

// A tool that has read the request's body itself checks it with
// VerifyMessage; the string its secret signs is CanonicalString's.
func ExampleCanonicalString() {
	body := []byte(`{"digest":"...","effect":{},"idempotency_key":"k-1","ticket":""}`)
	fmt.Printf("%q\n", httpexec.CanonicalString(1800000000, "issue_refund", "k-1", body)[:40])
	// Output: "asu/v1/exec\n1800000000\nissue_refund\nk-1\n"
}
