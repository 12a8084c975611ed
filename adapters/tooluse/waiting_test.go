package tooluse

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/stepup"
)

// TestWaitingIsBounded: however many calls wait, are joined and are
// forgotten, the index holds at most maxWaiting calls and its order at
// most twice that, and the oldest is forgotten first.
func TestWaitingIsBounded(t *testing.T) {
	var w waiting
	key := func(i int) [32]byte { return sha256.Sum256([]byte(fmt.Sprint(i))) }
	for i := range 3 * maxWaiting {
		w.remember(key(i), stepup.TicketID(fmt.Sprint("tk-", i)))
		if i%3 == 0 {
			w.forget(stepup.TicketID(fmt.Sprint("tk-", i)))
		}
		assert.LessOrEqual(t, len(w.ids), maxWaiting)
		assert.LessOrEqual(t, len(w.order), 2*maxWaiting+1)
	}
	assert.Equal(t, len(w.ids), len(w.keys))
	assert.Nil(t, w.lookup(key(1)), "the oldest is forgotten first")
	recent := w.lookup(key(3*maxWaiting - 1))
	if assert.NotNil(t, recent) {
		assert.Equal(t, stepup.TicketID(fmt.Sprint("tk-", 3*maxWaiting-1)), recent.id)
	}
}

// TestJoinKeyBindsEverythingButTheStep: the key changes with every field
// the gate stores, never with the step or the arguments' spelling.
func TestJoinKeyBindsEverythingButTheStep(t *testing.T) {
	base := stepup.Call{Tool: "send_email", Args: []byte(`{"a":1,"b":"x"}`), Task: "t", Step: "1", Session: "s",
		Rationale: "r", Grant: "g", Taint: []string{"p"}}
	base.Principal.User, base.Principal.Agent = "user:dana", "agent:reports"
	k0, ok := joinKey(base)
	assert.True(t, ok)
	same := base
	same.Step, same.Args = "2", []byte(` {"b":"x", "a":1} `)
	k1, _ := joinKey(same)
	assert.Equal(t, k0, k1)
	for name, vary := range map[string]func(*stepup.Call){
		"tool":      func(c *stepup.Call) { c.Tool = "send_mail" },
		"args":      func(c *stepup.Call) { c.Args = []byte(`{"a":2,"b":"x"}`) },
		"task":      func(c *stepup.Call) { c.Task = "u" },
		"session":   func(c *stepup.Call) { c.Session = "z" },
		"user":      func(c *stepup.Call) { c.Principal.User = "user:erin" },
		"agent":     func(c *stepup.Call) { c.Principal.Agent = "agent:x" },
		"rationale": func(c *stepup.Call) { c.Rationale = "" },
		"grant":     func(c *stepup.Call) { c.Grant = "" },
		"taint":     func(c *stepup.Call) { c.Taint = nil },
		"taint moved to delegations": func(c *stepup.Call) {
			c.Taint, c.Principal.Delegations = nil, []string{"p"}
		},
		"taint split": func(c *stepup.Call) { c.Taint = []string{"", "p"} },
	} {
		c := base
		vary(&c)
		k, ok := joinKey(c)
		assert.True(t, ok, name)
		assert.NotEqual(t, k0, k, name)
	}
	_, ok = joinKey(stepup.Call{Args: []byte(`{"a":1,"a":2}`)})
	assert.False(t, ok, "arguments the gate would refuse join nothing")
}
