package card_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
)

// recipientSpellings are hosts and addresses a recipient argument may
// hold: trusted and not, subdomains, letter case, trailing dots, Unicode
// and A-label forms, look-alikes, URLs, relay addresses, IP literals.
var recipientSpellings = []string{
	"finance@example.com", "FINANCE@Example.COM.", "a@sub.example.com", "payout+1@evil.net",
	"x@mail.evil.net.", "https://evil.net/pay", "https://example.com.evil.net./", "x@exampie.com",
	"x@examplė.com", "x@xn--exampl-n4a.com", "x@ᴇxample.com", "x@paypa丨.com", "spy%evil.net@example.com",
	"x@[192.0.2.1]", "x@bücher.de", "Name <boss@evil.co.uk>", "not an address", "", "x@localhost",
}

// TestRecipientsOfJSONIsTheSummarys: for generated recipient arguments
// (one address, a list, nested lists, objects and lists of them, hosts
// in keys, mixed spellings), the recipients
// read back from a card's JSON are those its Summary names, in order,
// with the same standing.
func TestRecipientsOfJSONIsTheSummarys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func() string { return recipientSpellings[rng.IntN(len(recipientSpellings))] }
	for range 500 {
		var to any = gen()
		switch rng.IntN(5) {
		case 1:
			list := make([]any, rng.IntN(6))
			for i := range list {
				list[i] = gen()
			}
			to = list
		case 2:
			to = []any{gen(), []any{gen(), []any{gen()}}}
		case 3: // an object, as some tools take a recipient
			to = map[string]any{"address": gen(), "name": "Finance", "cc": []any{gen()}}
		case 4: // a list of objects, hosts in keys too
			to = []any{map[string]any{"email": gen()}, map[string]any{gen(): true, "more": map[string]any{"to": gen()}}}
		}
		args, err := json.Marshal(map[string]any{"to": to, "amount": 5, "note": gen()})
		require.NoError(t, err)
		c, err := card.Render(effectWith(string(args)), card.Context{
			Title: "Send payment", Class: card.ClassIrreversible, Trusted: []string{"example.com"},
			Hints: card.Hints{Recipient: "to", Amount: "amount"},
		})
		require.NoError(t, err)
		js, err := c.JSON()
		require.NoError(t, err)
		got, err := card.RecipientsOfJSON(js)
		require.NoError(t, err)
		require.Equal(t, c.Summary().Recipients, got, "%s", args)
	}
}

// TestRecipientsOfJSONRefusesWhatIsNotACard: text that is not JSON is
// an error, never a recipient.
func TestRecipientsOfJSONRefusesWhatIsNotACard(t *testing.T) {
	for _, in := range []string{"", "{", "[1", strings.Repeat("[", 100)} {
		_, err := card.RecipientsOfJSON([]byte(in))
		assert.Error(t, err, "%q", in)
	}
	got, err := card.RecipientsOfJSON([]byte(`{"args":[]}`))
	assert.NoError(t, err)
	assert.Empty(t, got)
}

// ExampleRecipientsOfJSON reads where a stored card's effect goes.
func ExampleRecipientsOfJSON() {
	js, err := summaryCard().JSON()
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := card.RecipientsOfJSON(js)
	fmt.Printf("%+v %v\n", r, err)
	// Output:
	// [{Domain:evil.net Trusted:false Warned:true}] <nil>
}

// FuzzRecipientsOfJSON: any bytes are read without a panic, as recipients
// or an error; a card's own JSON reads as its Summary's recipients.
func FuzzRecipientsOfJSON(f *testing.F) {
	js, _ := summaryCard().JSON()
	f.Add(js)
	f.Add([]byte(`{"args":[{"role":"recipient","value":{"domains":[{"ascii":"a.b"}],"items":[{"items":[]}]}}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		_, _ = card.RecipientsOfJSON(in)
		var args any
		if json.Unmarshal(in, &args) != nil {
			return
		}
		c, err := card.Render(effectWith(`{"to":`+string(mustJSON(t, args))+`}`), card.Context{
			Title: "Send", Class: card.ClassExternal, Trusted: []string{"example.com"}, Hints: card.Hints{Recipient: "to"},
		})
		if err != nil {
			return
		}
		cj, err := c.JSON()
		if err != nil {
			return
		}
		got, err := card.RecipientsOfJSON(cj)
		require.NoError(t, err)
		require.Equal(t, c.Summary().Recipients, got)
	})
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestSummaryNamesRecipientsInsideObjects: a recipient argument given as
// an object, or a list of them, names the domains its members hold, keys
// included, in the order the card shows them; a summary that read only a
// value's own hosts and its items' would name none of these.
func TestSummaryNamesRecipientsInsideObjects(t *testing.T) {
	for args, want := range map[string][]string{
		`{"to":{"address":"x@evil.net"}}`:                                   {"evil.net"},
		`{"to":[{"email":"x@evil.net"},{"email":"finance@example.com"}]}`:   {"evil.net", "example.com"},
		`{"to":{"name":"Finance","address":{"mailbox":"x@mail.evil.net"}}}`: {"evil.net"},
		`{"to":{"x@evil.net":true}}`:                                        {"evil.net"},
	} {
		c, err := card.Render(effectWith(args), card.Context{Title: "Send", Class: card.ClassExternal,
			Trusted: []string{"example.com"}, Hints: card.Hints{Recipient: "to"}})
		require.NoError(t, err)
		var got []string
		for _, r := range c.Summary().Recipients {
			got = append(got, r.Domain)
		}
		assert.Equal(t, want, got, args)
	}
}
