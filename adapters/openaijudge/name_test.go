package openaijudge_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/adapters/openaijudge"
	"github.com/agentstepup/asu/canon"
)

// TestNameIsAValidStablePrincipal: the model approver's name is the one
// configured (or the model's), a valid principal id once the gate puts
// "model:" before it, and the same whatever base URL, host or port
// serves the model; a name that would not make a valid id is refused at
// New with ErrName, naming the field, instead of being hashed into
// another name at decision time.
func TestNameIsAValidStablePrincipal(t *testing.T) {
	urls := []string{"", "http://127.0.0.1:8080/v1", "http://127.0.0.1:9191/v1", "https://models.example.com/openai/v1"}
	for _, tc := range []struct{ model, name, want string }{
		{"gpt-4o-mini", "", "gpt-4o-mini"},
		{"gpt-4o-mini", "screener", "screener"},
		{"Meta/Llama-3.1-8B", "llama-screener", "llama-screener"},
		{"judge", "screener@team.example", "screener@team.example"},
	} {
		for _, u := range urls {
			m, err := openaijudge.New(tc.model, &openaijudge.Options{BaseURL: u, Name: tc.name})
			require.NoError(t, err, "%s %s %s", tc.model, tc.name, u)
			assert.Equal(t, tc.want, m.ID())
			assert.NoError(t, canon.CheckPrincipalID(canon.PrefixModel+m.ID()))
		}
	}
	for _, tc := range []struct{ model, name, field string }{
		{"Meta/Llama-3.1-8B", "", "model name"},
		{"gpt-4o", "Screener", "Options.Name"},
		{"gpt-4o", "screener bot", "Options.Name"},
		{"gpt-4o", "scr\u0435ener", "Options.Name"}, // Cyrillic е
		{"gpt-4o", "-screener", "Options.Name"},
		{"gpt-4o", strings.Repeat("a", 300), "Options.Name"},
		{"gpt-4o", "model:screener", "Options.Name"},
	} {
		_, err := openaijudge.New(tc.model, &openaijudge.Options{Name: tc.name})
		assert.ErrorIs(t, err, openaijudge.ErrName, "%q %q", tc.model, tc.name)
		assert.ErrorContains(t, err, tc.field)
	}
}
