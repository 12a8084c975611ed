package attackkit

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// Tools stands in for every tool the integration runs: it records each
// run and answers {"ok":true}. It implements plug.Executor, so an asu gate
// takes it with gate.WithExecutor for each tool; a framework's own loop
// calls Execute with the effect it is about to run. It is safe for
// concurrent use.
type Tools struct {
	mu   sync.Mutex
	runs []Ran
}

// Ran is one run of a tool: the effect it was handed and the idempotency
// key it ran with.
type Ran struct {
	Effect canon.Effect
	Key    string
}

// Execute records that e ran with key.
func (t *Tools) Execute(_ context.Context, e canon.Effect, key string) ([]byte, error) {
	e.Args = bytes.Clone(e.Args)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.runs = append(t.runs, Ran{Effect: e, Key: key})
	return []byte(`{"ok":true}`), nil
}

// Runs returns what ran, in order.
func (t *Tools) Runs() []Ran {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Ran(nil), t.runs...)
}

// same reports whether r ran call c: the same tool, canonically equal
// arguments, and, when the effect names its principal, the same user and
// agent.
func (r Ran) same(c stepup.Call) bool {
	if r.Effect.Tool != c.Tool {
		return false
	}
	if p := r.Effect.Principal; p.User != "" && (p.User != c.Principal.User || p.Agent != c.Principal.Agent) {
		return false
	}
	a, err1 := canon.Canonicalize(r.Effect.Args)
	b, err2 := canon.Canonicalize(c.Args)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// count returns how many runs ran call c.
func (t *Tools) count(c stepup.Call) int {
	n := 0
	for _, r := range t.Runs() {
		if r.same(c) {
			n++
		}
	}
	return n
}

// args builds an argument object from name, value pairs.
func args(kv ...any) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		b.Write(k)
		b.WriteByte(':')
		if raw, ok := kv[i+1].(json.RawMessage); ok {
			b.Write(raw)
			continue
		}
		v, _ := json.Marshal(kv[i+1])
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// setArg returns the object raw with member name set to v.
func setArg(raw json.RawMessage, name string, v any) json.RawMessage {
	m := map[string]json.RawMessage{}
	_ = json.Unmarshal(raw, &m)
	b, _ := json.Marshal(v)
	m[name] = b
	out, _ := json.Marshal(m)
	return out
}

// maxRunBytes bounds one run [Tools.ServeHTTP] records.
const maxRunBytes = 1 << 20

// ServeHTTP records a run that a service in another process reports: a
// POST of {"effect": <the canonical effect as JSON>, "key": "<idempotency
// key>"}, answered with {"ok":true}. Point the executors of a service
// under test ([Remote]) here, so the kit sees what ran.
func (t *Tools) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST a run", http.StatusMethodNotAllowed)
		return
	}
	var run struct {
		Effect canon.Effect `json:"effect"`
		Key    string       `json:"key"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRunBytes)).Decode(&run); err != nil || run.Effect.Tool == "" {
		http.Error(w, "want {\"effect\":{...},\"key\":\"...\"}", http.StatusBadRequest)
		return
	}
	out, _ := t.Execute(r.Context(), run.Effect, run.Key)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}
