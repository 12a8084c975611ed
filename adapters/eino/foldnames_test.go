package eino_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	einoadapter "github.com/agentstepup/asu/adapters/eino"
	"github.com/agentstepup/asu/adapters/internal/adaptertest"
	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// payment is an Eino tool's arguments as a Go program names them; what
// nests below is kept as written (InferTool's schema takes no recursive
// type).
type payment struct {
	PayeeID string            `json:"payeeId"`
	Kind    string            `json:"kind"`
	Status  string            `json:"status"`
	ID      string            `json:"id"`
	Next    json.RawMessage   `json:"next,omitempty"`
	Lines   []json.RawMessage `json:"lines,omitempty"`
}

// payTool is an InferTool (its arguments decoded by sonic) that keeps
// what it was called with.
func payTool(t testing.TB) (*sync.Mutex, *[]payment, einoadapter.Executor) {
	var mu sync.Mutex
	var got []payment
	real, err := utils.InferTool("pay", "pay a supplier", func(_ context.Context, a payment) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, a)
		return "paid", nil
	})
	require.NoError(t, err)
	return &mu, &got, einoadapter.Executor{Tool: real}
}

// swapCase returns every spelling of s with its letters in either case.
func swapCase(s string) []string {
	out := []string{""}
	for _, c := range s {
		var next []string
		for _, p := range out {
			next = append(next, p+string(c), p+string(unicode.SimpleFold(c)))
		}
		out = next
	}
	return out
}

// nestAt puts object at depth, through next and lines alternately.
func nestAt(object string, depth int) string {
	for d := range depth {
		if d%2 == 0 {
			object = `{"payeeId":"outer","next":` + object + `}`
		} else {
			object = `{"payeeId":"outer","lines":[{"payeeId":"first"},` + object + `]}`
		}
	}
	return object
}

// TestExecutorRefusesCaseFoldedNames: the Executor never runs its tool
// with arguments in which one object, at depths 0 to 5, has a member
// name beside a spelling of it that sonic or encoding/json takes for
// the same field (every ASCII case variant; ſ for s, the Kelvin sign for
// k, İ for i), even when the gate that stored the call did not refuse
// it. Names that differ otherwise (ı, U+0131, is no i) still run.
func TestExecutorRefusesCaseFoldedNames(t *testing.T) {
	var twins [][2]string
	for _, v := range swapCase("payeeId") {
		if v != "payeeId" {
			twins = append(twins, [2]string{"payeeId", v})
		}
	}
	twins = append(twins, [2]string{"status", "\u017ftatus"}, [2]string{"status", "statu\u017f"},
		[2]string{"kind", "\u212aind"}, [2]string{"id", "\u0130d"}, [2]string{"id", "\u0130D"})
	mu, got, x := payTool(t)
	for depth := range 6 {
		for _, tw := range twins {
			a, _ := json.Marshal(tw[0])
			b, _ := json.Marshal(tw[1])
			args, err := canon.Canonicalize([]byte(nestAt(fmt.Sprintf(`{%s:"shown",%s:"hidden"}`, a, b), depth)))
			require.NoError(t, err)
			_, err = x.Execute(context.Background(), canon.Effect{Tool: "pay", Args: args}, "k")
			assert.Error(t, err, "%s", args)
		}
		args, err := canon.Canonicalize([]byte(nestAt(`{"id":"shown","\u0131d":"other","payeeId":"acme"}`, depth)))
		require.NoError(t, err)
		_, err = x.Execute(context.Background(), canon.Effect{Tool: "pay", Args: args}, "k")
		assert.NoError(t, err, "%s", args)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, *got, 6, "only the calls without twins ran")
	assert.Equal(t, "shown", (*got)[0].ID)
}

// TestCaseFoldedNamesNeverReachTheTool is the whole path: a model's call
// that names payeeId twice, in two cases, is refused by the gate at
// Propose, and the Eino tool never runs; the same call without the
// twin waits for the person and pays the payee the card shows.
func TestCaseFoldedNamesNeverReachTheTool(t *testing.T) {
	c, err := policy.NewCatalog("v1", policy.Tool{Name: "pay", Title: "Pay a supplier", Class: card.ClassExternal,
		Schema: json.RawMessage(`{"type":"object","required":["payeeId"],"properties":{"payeeId":{"type":"string"}}}`)})
	require.NoError(t, err)
	mu, got, x := payTool(t)
	h := stepuptest.NewGate(t, c, gate.WithExecutor("pay", x))
	g := tooluse.New(h.Gate, &tooluse.Options{Wait: adaptertest.Wait})
	ctx := context.Background()

	for _, twin := range []string{"payeeid", "PAYEEID", "payeeİd"} {
		o := g.Run(ctx, adaptertest.Scope(), tooluse.Request{ID: "c1", Name: "pay",
			Args: json.RawMessage(`{"payeeId":"acme-supplies","` + twin + `":"attacker-llc"}`)})
		assert.Equal(t, tooluse.Denied, o.State, o.Text())
		assert.Contains(t, o.Text(), "letter case")
		assert.NotContains(t, o.Text(), "attacker")
	}
	o := g.Run(ctx, adaptertest.Scope(), tooluse.Request{ID: "c2", Name: "pay", Args: json.RawMessage(`{"payeeId":"acme-supplies"}`)})
	require.Equal(t, tooluse.Pending, o.State, o.Text())
	_, err = h.Approve(o.Ticket.ID)
	require.NoError(t, err)
	require.Equal(t, tooluse.Ran, g.Resume(ctx, o.Ticket.ID).State)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, *got, 1)
	assert.Equal(t, "acme-supplies", (*got)[0].PayeeID)
	assert.False(t, strings.Contains(fmt.Sprint(*got), "attacker"))
}
