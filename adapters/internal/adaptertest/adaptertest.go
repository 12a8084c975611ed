// Package adaptertest holds what the adapters' tests share: asu's
// in-process gate on the seed catalog with a recording executor, and a
// scripted fake of a model's HTTP endpoint.
package adaptertest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/agentstepup/asu/adapters/tooluse"
	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// World is the seed catalog on asu's in-process gate, every tool run by
// Rec.
type World struct {
	*stepuptest.Harness
	Rec *stepuptest.Recorder
}

// NewWorld builds a World.
func NewWorld(t testing.TB) *World {
	t.Helper()
	rec := &stepuptest.Recorder{}
	var opts []gate.Option
	for _, tool := range stepuptest.SeedTools() {
		opts = append(opts, gate.WithExecutor(tool.Name, rec))
	}
	return &World{Harness: stepuptest.NewGate(t, nil, opts...), Rec: rec}
}

// Scope is a session of the harness's approver through agent:reports,
// tainted by a web page so that external calls go to a person.
func Scope() tooluse.Scope {
	return tooluse.Scope{
		Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:reports"},
		Session:   "sess-1", Task: "t-42",
		Taint: []string{"read web page https://example.org/offer"},
	}
}

// Model is a fake model endpoint: it answers each request with the next
// scripted JSON body and keeps the request bodies.
type Model struct {
	*httptest.Server

	mu       sync.Mutex
	replies  []string
	requests [][]byte
}

// NewModel starts a Model answering with replies in order; it is closed
// when the test ends.
func NewModel(t testing.TB, replies ...string) *Model {
	t.Helper()
	m := &Model{replies: replies}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.requests = append(m.requests, body)
		if len(m.replies) == 0 {
			m.mu.Unlock()
			http.Error(w, `{"error":{"message":"no more replies"}}`, http.StatusInternalServerError)
			return
		}
		reply := m.replies[0]
		m.replies = m.replies[1:]
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(m.Close)
	return m
}

// Requests returns the request bodies the model received, in order.
func (m *Model) Requests() [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]byte(nil), m.requests...)
}

// Wait is how long tests let a gate wait for a person: long enough that
// reading a decided ticket never runs out of it on a loaded machine, short
// enough for the attacks that resume pending tickets many times.
const Wait = 100 * time.Millisecond
