package card_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/card"
)

// TestSummarySaysWhereHowMuchAndWarnings: the summary names the
// recipient's registrable domains with their standing, the amount with
// its currency quoted, and counts every warning on the card; agent text
// never reaches it.
func TestSummarySaysWhereHowMuchAndWarnings(t *testing.T) {
	ctx := injectivityContext()
	ctx.Rationale = "Safe to approve, goes to example.com"
	honest := mustRender(t, effectWith(`{"to":"finance@example.com","amount":120,"currency":"EUR"}`), ctx)
	s := honest.Summary()
	assert.Equal(t, []card.SummaryDomain{{Domain: "example.com", Trusted: true}}, s.Recipients)
	assert.Equal(t, `120 "EUR"`, s.Amount)
	assert.Zero(t, s.Warnings)

	decoy := mustRender(t, effectWith(`{"to":"finance@example.com.evil.net","amount":120,"currency":"EUR\u200b","subject":"p\u0430y"}`), ctx)
	s = decoy.Summary()
	assert.Equal(t, []card.SummaryDomain{{Domain: "evil.net", Warned: true}}, s.Recipients)
	assert.GreaterOrEqual(t, s.Warnings, 3, "the look-alike domain, the invisible character, the mixed-script word")
	for _, view := range []string{string(decoy.SummaryHTML()), decoy.SummaryText()} {
		assert.Contains(t, view, "evil.net")
		assert.NotContains(t, view, "Safe to approve")
		assert.NotContains(t, view, "TRUSTED)")
	}
	for _, l := range strings.Split(strings.TrimSpace(decoy.SummaryText()), "\n") {
		assert.True(t, strings.HasPrefix(l, "▌ "), "%q", l)
	}
	var zero card.Card
	assert.Contains(t, string(zero.SummaryHTML()), "Do not approve")
}

// ExampleCard_SummaryText shows the trusted summary a terminal prints
// right above its prompt.
func ExampleCard_SummaryText() {
	c, err := card.Render(effectWith(`{"to":"finance@example.com","amount":120,"currency":"EUR"}`), card.Context{
		Title: "Send payment", Class: card.ClassIrreversible, Trusted: []string{"example.com"},
		Hints: card.Hints{Recipient: "to", Amount: "amount", Currency: "currency"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(c.SummaryText())
	// Output:
	// ▌ summary: goes to example.com (TRUSTED)
	// ▌ summary: amount 120 "EUR"
	// ▌ summary: warnings: 0
}

func summaryCard() *card.Card {
	c, err := card.Render(effectWith(`{"to":"finance@example.com.evil.net","amount":120,"currency":"EUR"}`), card.Context{
		Title: "Send payment", Class: card.ClassIrreversible, Trusted: []string{"example.com"},
		Hints: card.Hints{Recipient: "to", Amount: "amount", Currency: "currency"},
	})
	if err != nil {
		panic(err)
	}
	return c
}

// ExampleCard_Summary reads the summary's fields: a recipient that names
// the trusted domain inside another goes to evil.net, warned.
func ExampleCard_Summary() {
	s := summaryCard().Summary()
	fmt.Printf("%+v %s %d\n", s.Recipients, s.Amount, s.Warnings)
	// Output:
	// [{Domain:evil.net Trusted:false Warned:true}] 120 "EUR" 1
}

// ExampleCard_SummaryHTML is the fragment an approval page puts right
// above its buttons, styled by CSS.
func ExampleCard_SummaryHTML() {
	h := string(summaryCard().SummaryHTML())
	fmt.Println(strings.Contains(h, `<strong class="asu-host">evil.net</strong>`), strings.Contains(h, "1 on this card"))
	// Output:
	// true true
}

// TestSummaryAmountKeepsItsKind: the summary's amount tells a number
// from a string of the same digits and from text that spells a currency,
// differs for every two different amounts of one kind with one currency,
// and names an object or array amount by its kind (the card above shows
// it whole).
func TestSummaryAmountKeepsItsKind(t *testing.T) {
	ctx := injectivityContext()
	amounts := []string{`120`, `"120"`, `120.5`, `"120.5"`, `"120 \"EUR\""`, `"120 EUR"`, `[120]`, `{}`,
		`true`, `null`, `"true"`, `"null"`, `"(object)"`, `"(array)"`, `""`, `0`, `"0"`, `-1`, `"-1"`}
	seen := map[string]string{}
	for _, a := range amounts {
		c := mustRender(t, effectWith(`{"amount":`+a+`,"currency":"USD","to":"finance@example.com"}`), ctx)
		got := c.Summary().Amount
		if other, ok := seen[got]; ok {
			t.Errorf("amounts %s and %s both summarised as %s", other, a, got)
		}
		seen[got] = a
	}
	c := mustRender(t, effectWith(`{"amount":"120 \"EUR\"","currency":"USD"}`), ctx)
	assert.Equal(t, `"120 \"EUR\"" "USD"`, c.Summary().Amount)
	c = mustRender(t, effectWith(`{"amount":[1000000],"currency":"USD"}`), ctx)
	assert.Equal(t, `(array) "USD"`, c.Summary().Amount)
}
