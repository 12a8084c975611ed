package policy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// argValue generates one argument value: strings (addresses among them),
// numbers in several spellings, booleans, null, and nested arrays and
// objects.
func argValue(r *rand.Rand, depth int) string {
	switch k := r.IntN(9); {
	case k == 0 && depth < 3:
		parts := make([]string, r.IntN(3))
		for i := range parts {
			parts[i] = argValue(r, depth+1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case k == 1 && depth < 3:
		return argObject(r, depth+1)
	case k == 2:
		return []string{"1e2", "500", "500.0", "5e2", "-0", "0.1", "499.99999999999999999", "1E400", "12345678901234567890"}[r.IntN(9)]
	case k == 3:
		return []string{"true", "false", "null"}[r.IntN(3)]
	case k == 4:
		return fmt.Sprint(r.IntN(1000) - 100)
	default:
		return fmt.Sprintf("%q", []string{"finance@example.com", "q3.csv", "not an address", "a@b", "",
			"\u00e9\u0301", "x\\u0041y"}[r.IntN(7)])
	}
}

// argObject generates an object over the seed tools' argument names and a
// few others, members in any order.
func argObject(r *rand.Rand, depth int) string {
	keys := []string{"to", "subject", "body", "attachment", "path", "order", "amount", "extra"}
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	var b strings.Builder
	b.WriteString("{")
	for i, k := range keys[:r.IntN(len(keys)+1)] {
		if i > 0 {
			b.WriteString(" , ")
		}
		fmt.Fprintf(&b, "%q: %s", k, argValue(r, depth))
	}
	b.WriteString("}")
	return b.String()
}

// TestParsedArgumentsDecideAsText: the catalog decides the same with the
// arguments the gate parsed once (Proposal.Parsed, schemas validated from
// that Value) as with the text alone, canonical or not, and with a Parsed
// that does not match the text (the text wins), and by DecideParsed with
// the Value alone, over generated arguments for every seed tool.
func TestParsedArgumentsDecideAsText(t *testing.T) {
	ctx := context.Background()
	cat := stepuptest.SeedCatalog()
	r := rand.New(rand.NewPCG(11, 12))
	verdicts := map[plug.Verdict]int{}
	for i := range 3000 {
		raw := argObject(r, 0)
		parsed, err := canon.Parse([]byte(raw))
		if err != nil {
			continue // the gate denies it before the policy
		}
		canonical := json.RawMessage(parsed.Canonical())
		tool := stepuptest.SeedTools()[i%len(stepuptest.SeedTools())].Name
		want, err := cat.Decide(ctx, plug.Proposal{Tool: tool, Args: canonical})
		require.NoError(t, err)
		verdicts[want.Verdict]++
		other, err := canon.Parse([]byte(`{"amount":1,"order":"o-1","path":"q3.csv","to":"finance@example.com"}`))
		require.NoError(t, err)
		for name, p := range map[string]plug.Proposal{
			"parsed":    {Tool: tool, Args: canonical, Parsed: parsed},
			"raw text":  {Tool: tool, Args: json.RawMessage(raw)},
			"mismatch":  {Tool: tool, Args: canonical, Parsed: other},
			"raw+other": {Tool: tool, Args: json.RawMessage(raw), Parsed: other},
		} {
			got, err := cat.Decide(ctx, p)
			require.NoError(t, err)
			assert.Equal(t, want.Verdict, got.Verdict, "%s %s %s", name, tool, raw)
			assert.Equal(t, want.Reason, got.Reason, "%s %s %s", name, tool, raw)
			assert.Equal(t, want.Refs, got.Refs, "%s %s %s", name, tool, raw)
		}
		// What the gate hands a plug.ParsedDecider: Parsed alone.
		got, err := cat.DecideParsed(ctx, plug.Proposal{Tool: tool, Parsed: parsed})
		require.NoError(t, err)
		assert.Equal(t, want, got, "parsed only %s %s", tool, raw)
	}
	d, err := cat.DecideParsed(ctx, plug.Proposal{Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com"}`)})
	require.NoError(t, err)
	assert.Equal(t, plug.Deny, d.Verdict, "DecideParsed reads Parsed, not Args")
	assert.Greater(t, verdicts[plug.Deny], 100, "the generator reaches denials")
	assert.Greater(t, verdicts[plug.Allow]+verdicts[plug.NeedsApproval], 100, "and calls the policy lets through")
}
