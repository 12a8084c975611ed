package remote

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/internal/wire"
)

// TestProposeBodyIsTheWireCall: the body the client writes by hand reads,
// with encoding/json, as the wire call encoding/json would have written,
// its arguments in canonical form; arguments canon refuses go as
// encoding/json writes them.
func TestProposeBodyIsTheWireCall(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	texts := []string{"", "a", "read_file", "user:dana", "sess-1", `q"uote`, `back\slash`, "<tag>&amp;", "é😀", "line\nbreak", "\u2028", "tool,\"args\":null"}
	pick := func() string { return texts[rng.IntN(len(texts))] }
	argsOf := []string{`{}`, `{"b":1,"a":[true,null,"x"]}`, `{"n":1.50,"s":"\u00e9"}`, `[1,2]`, `"s"`, `{"big":1e400}`, `{"a":1,"a":2}`}
	for i := range 3000 {
		call := stepup.Call{Tool: pick(), Args: json.RawMessage(argsOf[rng.IntN(len(argsOf))]), Task: pick(), Step: pick(),
			Session: pick(), Principal: canon.Principal{User: pick(), Agent: pick()}, Rationale: pick(), Grant: pick()}
		if rng.IntN(2) == 0 {
			call.Taint = []string{pick(), pick()}
		}
		if rng.IntN(2) == 0 {
			call.Principal.Delegations = []string{pick()}
		}
		body, err := proposeBody(call)
		plain, perr := json.Marshal(wire.FromCall(call))
		if perr != nil {
			require.Error(t, err, "case %d", i)
			continue
		}
		require.NoError(t, err, "case %d", i)
		var got, want wire.Call
		require.NoError(t, json.Unmarshal(body, &got), "case %d: %s", i, body)
		require.NoError(t, json.Unmarshal(plain, &want))
		if c, err := canon.Canonicalize(want.Args); err == nil {
			want.Args = c
		}
		require.Equal(t, fmt.Sprintf("%+v", want), fmt.Sprintf("%+v", got), "case %d", i)
	}
}
