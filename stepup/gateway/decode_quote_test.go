package gateway

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup/remote"
)

// genKey returns a member name no API key is: a marker and random
// characters, some of them ones JSON escapes.
func genKey(r *rand.Rand) string {
	alphabet := []rune("abcXYZ019 _-.:/\\\"'<>{}[]\u00e9\u65e5\U0001F600\u202e\t")
	var b strings.Builder
	b.WriteString("secret")
	for range 1 + r.IntN(12) {
		b.WriteRune(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// TestRefusalsQuoteNothingSent: a refused propose body's message never
// holds a member name the caller sent (which may be anything, a secret
// included), whether canon parses the body or it is walked token by token
// (a number canon cannot hash faithfully sends it there), and whatever
// is wrong with it: an unknown name at the top or in the principal, a
// repeated name at any depth, a syntax error or a wrong type after it.
func TestRefusalsQuoteNothingSent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	shapes := []string{
		`{"tool":"t","KEY":1,"args":{ARGS}}`,
		`{"tool":"t","args":{ARGS},"principal":{"user":"user:dana","KEY":"x"}}`,
		`{"tool":"t","args":{ARGS,"KEY":1,"KEY":2}}`,
		`{"tool":"t","args":{ARGS,"a":[{"KEY":1,"KEY":2}]}}`,
		`{"tool":"t","args":{ARGS},"principal":{"KEY":"x","KEY":"y"}}`,
		`{"tool":"t","args":{ARGS,"KEY":}}`,
		`{"tool":"t","args":{ARGS,"KEY":1}} {"KEY":1}`,
		`{"tool":{"KEY":1},"args":{ARGS}}`,
		`{"tool":"t","args":{ARGS},"principal":{"user":{"KEY":1}}}`,
		`{"tool":"t","args":{ARGS},"taint":[{"KEY":1}]}`,
	}
	for range 200 {
		key := genKey(r)
		enc, err := json.Marshal(key)
		require.NoError(t, err)
		quoted := string(enc[1 : len(enc)-1])
		for _, args := range []string{`"n":1`, `"n":1e400`} { // canon's path, then the token walk
			for _, shape := range shapes {
				body := strings.ReplaceAll(strings.ReplaceAll(shape, "ARGS", args), `"KEY"`, string(enc))
				_, one := decodeCall([]byte(body))
				_, walk := decodeCallTokens([]byte(body))
				for _, err := range []error{one, walk} {
					require.Error(t, err, body)
					assert.ErrorIs(t, err, remote.ErrInvalid)
					_, _, msg := classify(err)
					for _, text := range []string{err.Error(), msg} {
						assert.NotContains(t, text, "secret", "a refusal of %s quotes what was sent: %s", body, text)
						assert.NotContains(t, text, quoted)
					}
				}
			}
		}
	}
}
