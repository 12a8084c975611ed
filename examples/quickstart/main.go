// Command quickstart runs seed 002's approval program on the asu gate, on
// an embedded SQLite store in a temporary directory with a software
// passkey, and prints each policy decision, the canonical digests, the
// approval card, and every attack on P1-P3 with its outcome.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"os"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}
