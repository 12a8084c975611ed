package modelapprove

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAnswer(t *testing.T) {
	ok, why, err := parseAnswer("\n {\"decision\" : \"approve\" ,\n \"reason\":\"fine\"}\t")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "fine", why)

	ok, why, err = parseAnswer(`{"reason":"","decision":"deny"}`)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Empty(t, why)

	// Escapes spell the same JSON string; the decoder reads it as such.
	ok, _, err = parseAnswer(`{"decision":"appro\u0076e","reason":"x"}`)
	require.NoError(t, err)
	assert.True(t, ok)
}

// FuzzParseAnswer: the parser never panics; what it accepts is a JSON
// object with exactly the members decision and reason, both strings,
// decision "approve" or "deny", and the verdict agrees with it.
func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{
		`{"decision":"approve","reason":"fine"}`,
		`{"decision":"deny","reason":""}`,
		`{"decision":"deny","decision":"approve","reason":""}`,
		`{"DECISION":"approve","reason":""}`,
		`{"decision":"approve","reason":"x","y":1}`,
		`{"decision":"approve","reason":"x"}{}`,
		`{"decision":"approve","reason":"x"} x`,
		"```json\n{\"decision\":\"approve\",\"reason\":\"x\"}\n```",
		`[]`, `null`, ``, `{`, `{"decision":`, `{"decision":"approve","reason":"\ud800"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		approve, reason, err := parseAnswer(raw)
		if err != nil {
			if approve {
				t.Fatal("approve with an error")
			}
			return
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatalf("accepted what encoding/json refuses: %v", err)
		}
		d, _ := m["decision"].(string)
		_, isStr := m["reason"].(string)
		if len(m) != 2 || !isStr || (d != "approve" && d != "deny") {
			t.Fatalf("accepted %q", raw)
		}
		if approve != (d == "approve") {
			t.Fatalf("verdict %v disagrees with %q", approve, d)
		}
		if strings.ContainsAny(reason, "\n\r\x00") {
			t.Fatalf("reason keeps control characters: %q", reason)
		}
	})
}
