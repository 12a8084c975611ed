// Command quickstart runs the reference program's approval program on the asu gate, on
// an embedded SQLite store in a temporary directory with a software
// passkey, and prints each policy decision, the canonical digests, the
// approval card, every attack on P1-P3, P6 and P7 with its outcome, and the
// dwell time and rule of two that keep approvers reading.
//
//	go run ./examples/quickstart
//
// With -receipt FILE it also writes the receipt (format asu.receipt.v1) of
// the demo's approved send_email call to FILE, the approver's public key
// (COSE_Key, base64url) to FILE's name with the extension .key, and
// prints the key and the whole command that checks the receipt with a
// verifier trusting only that key:
//
//	go run ./examples/quickstart -receipt r.json
//	go run ./examples/verify receipt r.json --key r.key --rp-id approve.example.com --origin https://approve.example.com
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
)

func main() {
	var o options
	flag.StringVar(&o.receipt, "receipt", "", "write the receipt of the approved send_email call to `FILE`")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, o); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}
