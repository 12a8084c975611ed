package openaijudge_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/adapters/openaijudge"
	"github.com/agentstepup/asu/stepup/modelapprove"
)

const (
	approve = `{\"decision\":\"approve\",\"reason\":\"x\"}`
	deny    = `{\"decision\":\"deny\",\"reason\":\"y\"}`
)

// canned is a Model whose endpoint answers every request with body.
func canned(t *testing.T, body string) *openaijudge.Model {
	t.Helper()
	m, err := openaijudge.New("judge-test", &openaijudge.Options{BaseURL: "http://judge.invalid/v1",
		HTTPClient: &http.Client{Transport: cannedTransport{status: http.StatusOK, body: []byte(body)}}})
	require.NoError(t, err)
	return m
}

// chat is a chat completion body around the choices' JSON.
func chat(choices string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion","created":0,"model":"judge-test","choices":` + choices + `}`
}

// TestAnswerIsOneJSONString: the answer is the first choice's content
// only when it is one JSON string in a response where no member read
// (choices, message, content, refusal) appears twice, in any letter
// case: a content of any other JSON type, or two of a member either way
// round, is an error and the judge denies.
func TestAnswerIsOneJSONString(t *testing.T) {
	var bodies []string
	for _, content := range []string{`{"decision":"approve","reason":"x"}`, `1`, `-0.5e3`, `true`, `false`, `null`,
		`["` + approve + `"]`, `[]`, `{}`} {
		bodies = append(bodies, chat(`[{"message":{"role":"assistant","content":`+content+`}}]`))
	}
	bodies = append(bodies, chat(`[{"message":{"role":"assistant"}}]`), chat(`[{"message":null}]`), chat(`[{}]`),
		chat(`[null]`), chat(`["`+approve+`"]`), chat(`{"message":{"content":"`+approve+`"}}`))
	for _, order := range [][2]string{{approve, deny}, {deny, approve}} {
		a, b := order[0], order[1]
		for _, twin := range []string{"content", "Content", "CONTENT"} {
			bodies = append(bodies, chat(`[{"message":{"content":"`+a+`","`+twin+`":"`+b+`"}}]`))
		}
		for _, twin := range []string{"message", "Message"} {
			bodies = append(bodies, chat(`[{"message":{"content":"`+a+`"},"`+twin+`":{"content":"`+b+`"}}]`))
		}
		for _, twin := range []string{"choices", "CHOICES"} {
			bodies = append(bodies, `{"choices":[{"message":{"content":"`+a+`"}}],"`+twin+`":[{"message":{"content":"`+b+`"}}]}`)
		}
	}
	for _, twin := range []string{"refusal", "Refusal"} {
		bodies = append(bodies, chat(`[{"message":{"content":"`+approve+`","refusal":null,"`+twin+`":"I cannot"}}]`),
			chat(`[{"message":{"content":"`+approve+`","`+twin+`":"I cannot","refusal":null}}]`))
	}
	for _, refusal := range []string{`"I cannot"`, `7`, `{}`, `true`} {
		bodies = append(bodies, chat(`[{"message":{"content":"`+approve+`","refusal":`+refusal+`}}]`))
	}

	for _, body := range bodies {
		m := canned(t, body)
		content, err := m.Complete(context.Background(), "s", "u")
		assert.Error(t, err, "%s gave the answer %q", body, content)
		assert.NotContains(t, strings.ToLower(errText(err)), "approve", "the error carries no body")
		j, err := modelapprove.NewJudge(m, nil)
		require.NoError(t, err)
		assert.False(t, j.Decide(context.Background(), "card", "").Approve, body)
	}

	for _, body := range []string{
		chat(`[{"message":{"role":"assistant","content":"` + approve + `","refusal":null}}]`),
		chat(`[{"message":{"content":"` + approve + `","refusal":""}},{"message":{"content":"` + deny + `"}}]`),
		chat(`[{"index":0,"message":{"content":"a\u0070prove","tool_calls":[]},"finish_reason":"stop"}]`),
	} {
		content, err := canned(t, body).Complete(context.Background(), "s", "u")
		require.NoError(t, err, body)
		assert.NotEmpty(t, content)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestModelNotMadeByNewAsksNobody: a nil or zero Model has no name and
// answers every Complete with an error, without a request.
func TestModelNotMadeByNewAsksNobody(t *testing.T) {
	for _, m := range []*openaijudge.Model{nil, {}} {
		assert.Empty(t, m.ID())
		var none context.Context
		for _, ctx := range []context.Context{context.Background(), none} {
			_, err := m.Complete(ctx, "s", "u")
			assert.Error(t, err)
		}
	}
	m, err := openaijudge.New("judge-test", &openaijudge.Options{BaseURL: "http://judge.invalid/v1",
		HTTPClient: &http.Client{Transport: cannedTransport{status: http.StatusOK, body: []byte(chat(`[{"message":{"content":"` + deny + `"}}]`))}}})
	require.NoError(t, err)
	var none context.Context
	content, err := m.Complete(none, "s", "u")
	require.NoError(t, err)
	assert.Contains(t, content, "deny")
}
