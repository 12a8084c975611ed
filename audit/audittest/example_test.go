package audittest_test

import (
	"fmt"
	"time"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/audit/audittest"
	"github.com/agentstepup/asu/canon"
)

func ExampleChain() {
	chain := audittest.Chain(4, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	fmt.Println(len(chain), chain[3].Seq, audit.VerifyChain(chain, canon.Digest{}))
	// Output: 4 4 <nil>
}
