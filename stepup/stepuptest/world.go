package stepuptest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
)

// Recorder is an executor that remembers what it ran and answers
// {"sent":true}. It is safe for concurrent use.
type Recorder struct {
	mu   sync.Mutex
	runs []canon.Effect
	keys []string
}

// Execute implements plug.Executor.
func (r *Recorder) Execute(_ context.Context, e canon.Effect, key string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, e)
	r.keys = append(r.keys, key)
	return []byte(`{"sent":true}`), nil
}

// Count returns how many executions ran.
func (r *Recorder) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.runs)
}

// Runs returns the effects that ran, in order.
func (r *Recorder) Runs() []canon.Effect {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]canon.Effect(nil), r.runs...)
}

// Keys returns the idempotency keys the runs were given, in order.
func (r *Recorder) Keys() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.keys...)
}

// Q3 is the content of q3.csv, the attachment of the reference program.
const Q3 = "region,revenue\nwest,410\neast,385\n"

// World is the reference approval program's setting: a [Harness] with the
// seed catalog, q3.csv under a file resolver root (Dir), and a [Recorder]
// executing every seed tool.
type World struct {
	*Harness
	Dir  string
	Exec *Recorder
}

// NewWorld builds a [World]; opts go to gate.New after the world's own.
func NewWorld(t testing.TB, opts ...gate.Option) *World {
	t.Helper()
	return NewWorldWith(t, nil, opts...)
}

// NewWorldWith is [NewWorld] with another approver (see [NewGateWith]).
func NewWorldWith(t testing.TB, approver plug.Approver, opts ...gate.Option) *World {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "q3.csv"), []byte(Q3), 0o600); err != nil {
		t.Fatalf("stepuptest: %v", err)
	}
	w := &World{Dir: dir, Exec: &Recorder{}}
	base := []gate.Option{gate.WithResolver(canon.FileResolver{Root: dir})}
	for _, tool := range SeedTools() {
		base = append(base, gate.WithExecutor(tool.Name, w.Exec))
	}
	w.Harness = NewGateWith(t, nil, approver, append(base, opts...)...)
	return w
}

// SendEmail is the reference program's call: agent:reports sends q3.csv to
// to for user:dana.
func SendEmail(to string) stepup.Call {
	return stepup.Call{
		Tool: "send_email",
		Args: json.RawMessage(`{"to":"` + to + `","subject":"Q3 summary","attachment":"q3.csv"}`),
		Task: "t-42", Step: "s-1", Session: "sess-1",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"},
	}
}
