package main

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agentstepup/asu/canon"
)

// recorder stands in for the upstream tools: it records each execution
// and does nothing else. It receives the effect the gate stored, never the
// model's arguments, and acts once per idempotency key.
type recorder struct {
	mu   sync.Mutex
	runs []run
	keys map[string]bool
}

// run is one recorded execution.
type run struct {
	Effect canon.Effect
	Key    string
}

func newRecorder() *recorder { return &recorder{keys: map[string]bool{}} }

// Execute implements stepup.Executor.
func (r *recorder) Execute(_ context.Context, e canon.Effect, key string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.keys[key] {
		r.keys[key] = true
		r.runs = append(r.runs, run{Effect: e, Key: key})
	}
	d, err := e.Digest()
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"tool": e.Tool, "done": true, "digest": d.Short(),
		"note": "recorded by the example's executor; nothing left this machine"})
}

// recorded returns the executions so far.
func (r *recorder) recorded() []run {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]run(nil), r.runs...)
}
