package card_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// TestEveryAgentStringFlaggedInEveryView: whatever field of the effect an
// agent influences, an invisible character in it is shown escaped and
// flagged in the text view, the HTML view and the JSON.
func TestEveryAgentStringFlaggedInEveryView(t *testing.T) {
	const bad = "x\u200by"
	base := func() canon.Effect {
		e := effectWith(`{"subject":"s"}`)
		e.Principal.Delegations = []string{"team:a"}
		e.Refs = []canon.Ref{{Name: "a.csv", Kind: "file", Size: 1, SHA256: canon.Digest{1}},
			{Name: "https://example.org/a", Kind: "url", Unbound: "not fetched"}}
		return e
	}
	fields := map[string]func(*canon.Effect){
		"key":        func(e *canon.Effect) { e.Args = []byte(`{"` + bad + `":"s"}`) },
		"nested key": func(e *canon.Effect) { e.Args = []byte(`{"cc":{"` + bad + `":"s"}}`) },
		"value":      func(e *canon.Effect) { e.Args = []byte(`{"subject":"` + bad + `"}`) },
		"task":       func(e *canon.Effect) { e.Task = bad },
		"step":       func(e *canon.Effect) { e.Step = bad },
		"user":       func(e *canon.Effect) { e.Principal.User = bad },
		"agent":      func(e *canon.Effect) { e.Principal.Agent = bad },
		"delegation": func(e *canon.Effect) { e.Principal.Delegations = []string{bad} },
		"audience":   func(e *canon.Effect) { e.Audience = bad },
		"tool":       func(e *canon.Effect) { e.Tool = bad },
		"ref name":   func(e *canon.Effect) { e.Refs[0].Name = bad },
		"ref kind":   func(e *canon.Effect) { e.Refs[0].Kind = bad },
		"ref reason": func(e *canon.Effect) { e.Refs[1].Unbound = bad },
	}
	ctx := injectivityContext()
	for name, set := range fields {
		t.Run(name, func(t *testing.T) {
			e := base()
			set(&e)
			c := mustRender(t, e, ctx)
			text, html := c.TextWidth(1000), string(c.HTML())
			js, err := c.JSON()
			require.NoError(t, err)
			assert.Contains(t, text, `x\u{200B}y`)
			assert.Contains(t, text, "contains invisible characters (shown escaped)")
			assert.Contains(t, html, `x<span class="asu-esc">\u{200B}</span>y`)
			assert.Contains(t, html, "contains invisible characters (shown escaped)")
			assert.Regexp(t, `"flags":\["invisible"\],("kind":"string",)?"text":"x\\\\u\{200B\}y"`, string(js))
			assert.NotContains(t, text+html+string(js), "\u200b")
		})
	}
}

// TestMultiLineValuesReadAsLines: a value's line breaks are shown as \n
// and end a displayed line, in the text and the HTML view; the card says
// the value has several lines rather than that it holds control characters.
func TestMultiLineValuesReadAsLines(t *testing.T) {
	c := mustRender(t, effectWith(`{"body":"Dear team,\nthe numbers are attached.\n\nDana"}`), injectivityContext())
	text := c.Text()
	assert.Contains(t, text, `body: "Dear team,\n`+"\n")
	assert.Contains(t, text, "▌   ┆the numbers are attached.\\n\n▌   ┆\\n\n▌   ┆Dana\"\n")
	assert.Contains(t, text, "has several lines")
	assert.NotContains(t, text, "control characters")
	html := string(c.HTML())
	assert.Contains(t, html, `Dear team,<span class="asu-esc">\n</span>`+"\nthe numbers")
}

// TestEmptyStepIsAbsent: an effect without a step shows none.
func TestEmptyStepIsAbsent(t *testing.T) {
	e := effectWith(`{"subject":"s"}`)
	e.Step = ""
	c := mustRender(t, e, injectivityContext())
	js, err := c.JSON()
	require.NoError(t, err)
	assert.NotContains(t, c.Text(), "step")
	assert.NotContains(t, string(c.HTML()), "step")
	assert.NotContains(t, string(js), `"step"`)
	e.Step = "1"
	assert.Contains(t, mustRender(t, e, injectivityContext()).Text(), `step "1"`)
}

// TestWhatRunsComesFirst: the action and its arguments come before the
// reasons for asking, in both views.
func TestWhatRunsComesFirst(t *testing.T) {
	c := mustRender(t, sendEmailEffect(t, "finance@example.com"), sendEmailContext())
	text, html := c.Text(), string(c.HTML())
	assert.Less(t, strings.Index(text, "WHAT WILL RUN"), strings.Index(text, `"finance@example.com"`))
	assert.Less(t, strings.Index(text, `"finance@example.com"`), strings.Index(text, "WHY YOU ARE ASKED"))
	assert.Less(t, strings.Index(html, "What will run"), strings.Index(html, "finance@example.com"))
	assert.Less(t, strings.Index(html, "finance@example.com"), strings.Index(html, "Why you are asked"))
}

// TestAgentValuesNeverSplicedIntoCardText: the currency (and the unit) are
// shown quoted and labelled in every view, never run on after the amount;
// hints relabel and reorder, nothing more.
func TestAgentValuesNeverSplicedIntoCardText(t *testing.T) {
	ctx := card.Context{Class: card.ClassIrreversible, Hints: card.Hints{Amount: "amount", Currency: "currency"}}
	for _, cur := range []string{"000 EUR", "EUR (approved by finance)", "EUR\nREAD: reads data"} {
		args := `{"amount":1,"currency":` + quoteJSON(cur) + `}`
		c := mustRender(t, effectWith(args), ctx)
		text := c.TextWidth(1000)
		assert.Contains(t, text, `amount: 1 [currency "`)
		assert.NotContains(t, text, "1 000")
		html := string(c.HTML())
		assert.Contains(t, html, `<span class="asu-unit">currency <span class="asu-mono">"`)
		assert.NotContains(t, html, "<strong")
	}
}

func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
