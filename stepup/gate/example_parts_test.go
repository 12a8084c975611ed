package gate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
)

// mailCards is a renderer of one's own: the e-mail's arguments in the
// words of a German-speaking office, in package card's frame.
type mailCards struct{}

func (mailCards) RenderSealed(s canon.Sealed, c card.Context) (*card.Card, error) {
	args := s.Args()
	to, _ := args.Get("to")
	subject, _ := args.Get("subject")
	return card.Custom("acme.mail/v1", s, c, []card.Line{
		{Label: "Empfänger", Value: to.String()},
		{Label: "Betreff", Value: subject.String()},
	})
}

// A custom renderer draws the card; the gate hashes that card, and its
// hash is what the approver's passkey signs.
func Example_customRenderer() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithRenderer(mailCards{}))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	dana, err := stepuptest.Enroll(ctx, stepuptest.Enrollment(st), "user:dana")
	if err != nil {
		panic(err)
	}
	tk, _ := g.Propose(ctx, stepuptest.SendEmail("finance@example.com"))
	p, err := g.Desk().Prompt(ctx, tk.ID)
	if err != nil {
		panic(err)
	}
	for _, l := range strings.Split(p.Card.Visible(), "\n") {
		if strings.Contains(l, "Empfänger") || strings.Contains(l, "Betreff") {
			fmt.Println(strings.TrimSpace(strings.TrimPrefix(l, "▌")))
		}
	}
	signed, _ := card.HashJSON(p.CardJSON)
	fmt.Println("the challenge binds this card:", signed == p.Card.Hash())
	// The approver reads the card (the dwell time), then signs.
	_ = g.Desk().Show(ctx, tk.ID)
	clock.Advance(gate.DefaultDwell)
	answer, err := dana.Assert(p.Options)
	if err != nil {
		panic(err)
	}
	tk, err = g.Desk().Approve(ctx, tk.ID, answer)
	fmt.Println(tk.Status, err)
	// Output:
	// "Empfänger": "finance@example.com"
	// Betreff: "Q3 summary"
	// the challenge binds this card: true
	// approved <nil>
}

// onlyToday is a grant check of one's own: it asks no store and covers
// nothing, so every call that names a grant goes to a person.
type onlyToday struct{}

func (onlyToday) Target(_ context.Context, id string, s canon.Sealed) (string, error) {
	fmt.Printf("grant check: %s for %s\n", id, s.Effect().Tool)
	return "", errors.New("grants are not honoured today")
}

// A custom grant check decides whether the grant a call names covers it.
func Example_customCoverage() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithCoverage(onlyToday{}))
	if err != nil {
		panic(err)
	}
	c := stepuptest.SendEmail("finance@example.com")
	c.Grant = "g-7"
	tk, _ := g.Propose(context.Background(), c)
	fmt.Println(tk.Status)
	// Output:
	// grant check: g-7 for send_email
	// pending
}

// quietHours is flood control of one's own: no approval requests at all
// (say, at night), and one pending ticket per session.
type quietHours struct{}

func (quietHours) Admit(_ context.Context, r flood.Request) error {
	fmt.Println("flood control asked about session", r.Session)
	return &flood.LimitError{Err: flood.ErrRateLimited, Scope: flood.ScopeSession}
}
func (quietHours) Decided(context.Context, flood.Request, bool) error { return nil }
func (quietHours) Caps() store.Caps                                   { return store.Caps{PerSession: 1} }

// A custom flood control admits, or refuses, each request for a person's
// attention.
func Example_customFlood() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st), gate.WithFlood(quietHours{}))
	if err != nil {
		panic(err)
	}
	tk, _ := g.Propose(context.Background(), stepuptest.SendEmail("finance@example.com"))
	fmt.Println(tk.Status, "-", tk.Reason)
	// Output:
	// flood control asked about session sess-1
	// denied - rate limited: too many approval requests from this session; retry after 0s
}

// There is no custom canonicalizer: the effect's digest is the protocol
// (P2). Two spellings of one call are one effect with one digest, and
// anyone holding the stored effect recomputes that digest with package
// canon alone, as a receipt's verifier does.
func Example_canonIsFixed() {
	clock := stepuptest.NewClock(stepuptest.Start())
	st := stepuptest.Memory(clock)
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	a := stepuptest.SendEmail("finance@example.com")
	b := a
	b.Session = "sess-2" // a second session, so the two are not merged
	b.Args = []byte(`{ "subject" : "Q3 summary", "attachment":"q3.csv", "to":"finance@example.com" }`)
	ta, _ := g.Propose(ctx, a)
	tb, _ := g.Propose(ctx, b)
	fmt.Println("one digest for both spellings:", ta.Digest == tb.Digest)
	stored, _ := st.Get(ctx, string(ta.ID))
	s, err := canon.ParseSealed(stored.Effect)
	fmt.Println("recomputed with canon:", err == nil && s.Digest() == ta.Digest)
	// Output:
	// one digest for both spellings: true
	// recomputed with canon: true
}
