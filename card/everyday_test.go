package card_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"
)

// shownAs renders s as an argument value and as the agent's rationale
// and returns how each is shown.
func shownAs(t *testing.T, s string) (value, rationale shownText) {
	t.Helper()
	args, err := json.Marshal(map[string]string{"subject": s})
	require.NoError(t, err)
	ctx := injectivityContext()
	ctx.Rationale = s
	js, err := mustRender(t, effectWith(string(args)), ctx).JSON()
	require.NoError(t, err)
	var m struct {
		Args []struct {
			Value shownText `json:"value"`
		} `json:"args"`
		Untrusted struct {
			Rationale shownText `json:"rationale"`
		} `json:"untrusted"`
	}
	require.NoError(t, json.Unmarshal(js, &m))
	require.Len(t, m.Args, 1)
	return m.Args[0].Value, m.Untrusted.Rationale
}

// assertReadsAsWritten checks that every line, everyday text in NFC, is
// shown as written and flagged for nothing.
func assertReadsAsWritten(t *testing.T, lines []string) {
	t.Helper()
	for _, l := range lines {
		require.True(t, norm.NFC.IsNormalString(l), "%q is not in NFC", l)
		v, r := shownAs(t, l)
		for what, s := range map[string]shownText{"value": v, "rationale": r} {
			assert.Equal(t, l, s.Text, "%s %q is not shown as written", what, l)
			assert.Empty(t, s.Flags, "%s %q is flagged", what, l)
		}
	}
}

// assertEscaped checks that s is not shown as written and is flagged.
func assertEscaped(t *testing.T, s string) {
	t.Helper()
	v, r := shownAs(t, s)
	for what, sh := range map[string]shownText{"value": v, "rationale": r} {
		assert.NotEqual(t, s, sh.Text, "%s %q is shown as written", what, s)
		assert.NotEmpty(t, sh.Flags, "%s %q is not flagged", what, s)
	}
}

// TestFullWidthPunctuationInHanText: Chinese and Japanese sentences,
// written with the full-width comma, exclamation and question marks,
// colon, semicolon and parentheses and the ideographic punctuation, read
// as written.
func TestFullWidthPunctuationInHanText(t *testing.T) {
	assertReadsAsWritten(t, []string{
		"你好，世界！",
		"请问您什么时候付款？",
		"注意：明天开会；请准时。",
		"付款已完成，谢谢！",
		"株式会社（東京）",
		"本当ですか？",
		"ありがとうございます！",
		"会議は明日です：午前十時。",
		"《红楼梦》是一本书，「你好」。",
		"【通知】请查收附件、并回复。",
		"한국어（조선어）를 배웁니다！",
	})
}

// TestFullWidthPunctuationKeepsTwinsApart: the full-width forms are shown
// only in text of Chinese, Japanese or Korean; elsewhere they are
// escaped, so that "a！b" never passes for "a!b". In Han text their ASCII
// twins stay ASCII, and the two spellings render differently.
func TestFullWidthPunctuationKeepsTwinsApart(t *testing.T) {
	for _, s := range []string{"Pay now！", "a，b", "Total：100", "x；y", "（note）", "Why？", "привет！", "مرحبا："} {
		assertEscaped(t, s)
	}
	for _, pair := range [][2]string{
		{"你好，世界！", "你好,世界!"},
		{"注意：明天", "注意:明天"},
		{"株式会社（東京）", "株式会社(東京)"},
	} {
		a, _ := shownAs(t, pair[0])
		b, _ := shownAs(t, pair[1])
		assert.Equal(t, pair[1], b.Text, "ASCII punctuation in Han text")
		assert.NotEqual(t, a.Text, b.Text, "%q and %q render alike", pair[0], pair[1])
	}
	// A look-alike of the colon other than the full-width one (U+2236
	// RATIO) stays escaped in Han text.
	assertEscaped(t, "注意∶明天")
}

// TestEverydaySymbolsReadAsWritten: the pound and degree signs, and the
// danda ending a Hindi sentence, read as written.
func TestEverydaySymbolsReadAsWritten(t *testing.T) {
	assertReadsAsWritten(t, []string{
		"Total £1,200.00",
		"The invoice is £45.50, due Friday.",
		"Today 21°C, tomorrow 18°C",
		"Set the oven to 180°",
		"आपका बिल संलग्न है।",
		"भुगतान हो गया है। धन्यवाद।",
		"कल बैठक है॥",
	})
}

// TestEverydaySymbolsKeepTwinsApart: the look-alikes of the symbols shown
// stay escaped (the lira sign ₤ beside £, the ring operator ∘ and white
// bullet ◦ beside °, the fraction sign ꠰ beside the danda), the danda
// outside Devanagari text, and two dandas never pass for a double danda.
func TestEverydaySymbolsKeepTwinsApart(t *testing.T) {
	for _, s := range []string{"Total ₤1,200.00", "Today 21∘C", "Today 21◦C", "बिल संलग्न है꠰", "a।b", "Total । 5", "कल बैठक है।।"} {
		assertEscaped(t, s)
	}
	a, _ := shownAs(t, "कल बैठक है॥")
	b, _ := shownAs(t, "कल बैठक है।।")
	assert.NotEqual(t, a.Text, b.Text)
}
