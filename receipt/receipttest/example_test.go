package receipttest_test

import (
	"fmt"
	"time"

	"github.com/agentstepup/asu/receipt"
	"github.com/agentstepup/asu/receipt/receipttest"
)

func ExampleSigner_Sign() {
	s, err := receipttest.New(receipttest.EdDSA, "user:dana")
	if err != nil {
		fmt.Println(err)
		return
	}
	e := receipttest.Effect("finance@example.com")
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	r, err := s.Sign(e, receipttest.Card(e), at.Add(15*time.Minute), at)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := receipt.Verify(r, s.Trusted(), s.Policy())
	fmt.Println(res.Valid, err)

	bent, _ := s.Sign(e, receipttest.Card(e), at.Add(15*time.Minute), at, receipttest.WithFlags(0x01))
	_, err = receipt.Verify(bent, s.Trusted(), s.Policy())
	fmt.Println(err)
	// Output:
	// true <nil>
	// receipt: user_verified check failed: user verification flag not set
}
