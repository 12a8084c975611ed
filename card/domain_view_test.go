package card_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/card"
)

// TestUnicodeDomainInEveryView: a domain whose Unicode form may be shown is
// shown in it, after its A-label form, in the text and HTML views.
func TestUnicodeDomainInEveryView(t *testing.T) {
	c, err := card.Render(effectWith(`{"to":"info@b\u00fccher.de"}`), injectivityContext())
	require.NoError(t, err)
	assert.Contains(t, c.Text(), "domain xn--bcher-kva.de, shown as b\u00fccher.de")
	assert.True(t, strings.Contains(string(c.HTML()), `shown as <span class="asu-mono"><span class="asu-t">b`+"\u00fc"+`cher.de</span>`), "%s", c.HTML())
}

// TestFlagAndWarningOfTheSameName: a string's mixed-script flag and its
// domain's mixed-script warning are different notes, each said as itself.
func TestFlagAndWarningOfTheSameName(t *testing.T) {
	c, err := card.Render(effectWith(`{"to":"x@p\u0430ypal.com","cc":"x@p\u0430ypal.com"}`), injectivityContext())
	require.NoError(t, err)
	text := c.TextWidth(200)
	assert.Equal(t, 2, strings.Count(text, "(!) mixes scripts in one word\n"), text)
	assert.Equal(t, 2, strings.Count(text, "(!) mixes scripts within a label; the Unicode form is not shown (scripts: Cyrillic+Latin)\n"), text)
}
