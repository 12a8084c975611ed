package card_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// A renderer of one's own shows the arguments in its own words; the frame
// (tool, user, fingerprint, untrusted region) stays the package's, and
// the card JSON names the renderer, so the hash covers it.
func ExampleCustom() {
	s, err := canon.Seal(canon.Effect{Tool: "pay", Args: json.RawMessage(`{"amount":"12.50","to":"dana"}`),
		PolicyVersion: "v1", Task: "t-1", Principal: canon.Principal{User: "user:dana", Agent: "agent:books"}})
	if err != nil {
		panic(err)
	}
	c, err := card.Custom("acme.pay/v1", s, card.Context{Title: "Zahlung", Class: card.ClassExternal},
		[]card.Line{{Label: "Betrag", Value: "12,50 € an dana"}})
	if err != nil {
		panic(err)
	}
	for _, l := range strings.Split(c.Visible(), "\n") {
		if strings.Contains(l, "Betrag") {
			fmt.Println(strings.TrimSpace(strings.TrimPrefix(l, "▌")))
		}
	}
	j, _ := c.JSON()
	fmt.Println(strings.Contains(string(j), `"renderer":"acme.pay/v1"`))
	h, _ := card.HashJSON(j)
	fmt.Println(h == c.Hash())
	// Output:
	// Betrag: "12,50 € an dana"
	// true
	// true
}
