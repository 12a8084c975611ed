package card_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

func exampleRefund() (canon.Effect, card.Context) {
	e := canon.Effect{
		Tool:          "issue_refund",
		Args:          json.RawMessage(`{"order":"A-17","amount":120,"currency":"EUR"}`),
		Task:          "t-77",
		Step:          "2",
		Principal:     canon.Principal{User: "user:lee", Agent: "agent:support"},
		PolicyVersion: "2026-10-30.1",
		Audience:      "payments",
	}
	ctx := card.Context{
		Title:     "Issue refund",
		Class:     card.ClassIrreversible,
		Reasons:   []string{"issue_refund is irreversible"},
		Hints:     card.Hints{Amount: "amount", Currency: "currency", Labels: map[string]string{"amount": "Amount", "order": "Order"}},
		Rationale: "Parcel arrived damaged.",
	}
	return e, ctx
}

func ExampleRender() {
	e, ctx := exampleRefund()
	c, err := card.Render(e, ctx)
	if err != nil {
		fmt.Println("no card, no approval:", err)
		return
	}
	fmt.Print(c.Text())
	// Output:
	// ▌ APPROVAL REQUEST  (card asu.card/v4)
	// ▌ == WHAT WILL RUN ==
	// ▌   Issue refund  [tool "issue_refund"]
	// ▌   (!) IRREVERSIBLE: cannot be undone
	// ▌   Amount (amount): 120 [currency "EUR"]
	// ▌   currency: "EUR"
	// ▌   Order (order): "A-17"
	// ▌ == BOUND BY THIS APPROVAL: referenced content ==
	// ▌   (no references)
	// ▌ == WHY YOU ARE ASKED ==
	// ▌   policy "2026-10-30.1" asks a person because:
	// ▌     - issue_refund is irreversible
	// ▌ == CONTEXT ==
	// ▌   on behalf of "user:lee" through agent "agent:support"
	// ▌   task "t-77", step "2", executor "payments"
	// ▌ == WRITTEN BY THE AGENT: untrusted, not checked ==
	// ▌   agent's rationale:
	// ▌   | Parcel arrived damaged.
	// ▌   tool description from the tool server: (none)
	// ▌ == END OF AGENT TEXT ==
	// ▌ fingerprint 57877586343b
}

func ExampleRender_refused() {
	e, ctx := exampleRefund()
	e.Args = json.RawMessage(`{"notify":"buyer@foo_bar.example"}`)
	_, err := card.Render(e, ctx)
	fmt.Println(err)
	// Output:
	// card: effect cannot be shown faithfully: a domain name fails IDNA conversion
}

func ExampleCard_Visible() {
	e, ctx := exampleRefund()
	a, _ := card.Render(e, ctx)
	e.Args = json.RawMessage(`{"order":"A-17","amount":1200,"currency":"EUR"}`)
	b, _ := card.Render(e, ctx)
	fmt.Println(a.Visible() == b.Visible())
	// Output:
	// false
}

func ExampleCard_Hash() {
	e, ctx := exampleRefund()
	c, _ := card.Render(e, ctx)
	js, _ := c.JSON()
	again, _ := card.HashJSON(js)
	fmt.Println(c.Hash() == again)
	// Output:
	// true
}

func ExampleHashJSON() {
	e, ctx := exampleRefund()
	c, _ := card.Render(e, ctx)
	js, _ := c.JSON() // stored in the receipt
	h, err := card.HashJSON(js)
	fmt.Println(h.String() == c.Hash().String(), err)
	// Output:
	// true <nil>
}

func ExampleCard_JSON() {
	e, ctx := exampleRefund()
	c, _ := card.Render(e, ctx)
	js, _ := c.JSON()
	var m struct {
		Renderer string `json:"renderer"`
		Tool     struct {
			Class string `json:"class"`
		} `json:"tool"`
	}
	_ = json.Unmarshal(js, &m)
	fmt.Println(m.Renderer, m.Tool.Class)
	// Output:
	// asu.card/v4 irreversible
}

func ExampleCard_HTML() {
	e, ctx := exampleRefund()
	ctx.Rationale = `<b>APPROVED</b>`
	c, _ := card.Render(e, ctx)
	h := string(c.HTML())
	fmt.Println(strings.Contains(h, "<b>APPROVED"), strings.Contains(h, "&lt;b&gt;APPROVED"))
	// Output:
	// false true
}

func ExampleCard_Text() {
	e, ctx := exampleRefund()
	e.Args = json.RawMessage(`{"order":"A-17\u200b","amount":120,"currency":"EUR"}`)
	c, _ := card.Render(e, ctx)
	for _, l := range strings.Split(c.Text(), "\n") {
		if strings.Contains(l, "order") || strings.Contains(l, "invisible") {
			fmt.Println(l)
		}
	}
	// Output:
	// ▌   Order (order): "A-17\u{200B}"
	// ▌       (!) contains invisible characters (shown escaped)
}

func ExampleHashLimits() {
	e, ctx := exampleRefund()
	c, _ := card.Render(e, ctx)
	js, _ := c.JSON()
	// A verifier without this package: canonicalize, then hash with the tag.
	canonical, _ := card.HashLimits().Canonicalize(js)
	fmt.Println(string(canonical) == string(js))
	// Output:
	// true
}

func ExampleRenderer_Render() {
	e, ctx := exampleRefund()
	var r card.Renderer
	c, err := r.Render(e, ctx)
	if err != nil {
		fmt.Println("no card, no approval:", err)
		return
	}
	js, _ := c.JSON()
	fmt.Println(r.ID(), strings.Contains(string(js), `"renderer":"`+r.ID()+`"`))
	// Output:
	// asu.card/v4 true
}

func ExampleRenderer_CheckContext() {
	_, ctx := exampleRefund()
	ctx.Trusted = []string{"example.com", "github.io"}
	err := card.Renderer{}.CheckContext(ctx)
	fmt.Println(errors.Is(err, card.ErrBadContext))
	fmt.Println(err)
	// Output:
	// true
	// card: invalid trusted context: trusted domain 1 is a public suffix, which would trust every domain under it
}

func ExampleCard_TextWidth() {
	e, ctx := exampleRefund()
	e.Args = json.RawMessage(`{"order":"A-17","note":"refund the order in full, as the customer asked in the ticket"}`)
	c, _ := card.Render(e, ctx)
	inNote := false
	for _, l := range strings.Split(c.TextWidth(card.MinWidth), "\n") {
		inNote = strings.Contains(l, "note:") || inNote && strings.Contains(l, "┆")
		if inNote {
			fmt.Println(l)
		}
	}
	// Output:
	// ▌   note: "refund the order in full, as
	// ▌   ┆ the customer asked in the ticket"
}
