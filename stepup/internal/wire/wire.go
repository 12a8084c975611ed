// Package wire is the JSON shape of the agent API, shared by the HTTP
// gateway and its thin client. Names are snake_case so runtimes in any
// language speak it without Go's field names.
package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// Call is a [stepup.Call] on the wire.
type Call struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
	Rest                 // its other members, in this order
}

// Rest is a [Call]'s members after its tool and arguments: a client that
// writes those two itself encodes the rest alone.
type Rest struct {
	Task      string    `json:"task,omitempty"`
	Step      string    `json:"step,omitempty"`
	Session   string    `json:"session"`
	Principal Principal `json:"principal"`
	Taint     []string  `json:"taint,omitempty"`
	Rationale string    `json:"rationale,omitempty"`
	Grant     string    `json:"grant,omitempty"`
}

// Principal is a canon.Principal on the wire.
type Principal struct {
	User        string   `json:"user"`
	Agent       string   `json:"agent"`
	Delegations []string `json:"delegations,omitempty"`
}

// FromCall is c on the wire.
func FromCall(c stepup.Call) Call {
	return Call{Tool: c.Tool, Args: c.Args, Rest: Rest{Task: c.Task, Step: c.Step, Session: c.Session,
		Principal: Principal{User: c.Principal.User, Agent: c.Principal.Agent, Delegations: c.Principal.Delegations},
		Taint:     c.Taint, Rationale: c.Rationale, Grant: c.Grant}}
}

// Call returns the runtime call w carries.
func (w Call) Call() stepup.Call {
	return stepup.Call{Tool: w.Tool, Args: w.Args, Task: w.Task, Step: w.Step, Session: w.Session,
		Principal: canon.Principal{User: w.Principal.User, Agent: w.Principal.Agent, Delegations: w.Principal.Delegations},
		Taint:     w.Taint, Rationale: w.Rationale, Grant: w.Grant}
}

// Ticket is a [stepup.Ticket] on the wire.
type Ticket struct {
	ID           string    `json:"id"`
	Status       string    `json:"status"`
	Tool         string    `json:"tool"`
	Digest       string    `json:"digest,omitempty"`
	Reason       string    `json:"reason,omitempty"`
	ExpiresAt    time.Time `json:"expires_at,omitzero"`
	Next         string    `json:"next,omitempty"`
	RetryAfterMS int64     `json:"retry_after_ms,omitempty"`
}

// FromTicket is t on the wire.
func FromTicket(t stepup.Ticket) Ticket {
	w := Ticket{ID: string(t.ID), Status: string(t.Status), Tool: t.Tool, Reason: t.Reason,
		ExpiresAt: t.ExpiresAt, Next: string(t.Next), RetryAfterMS: t.RetryAfter.Milliseconds()}
	if !t.Digest.IsZero() {
		w.Digest = t.Digest.String()
	}
	return w
}

// Ticket returns the ticket w carries, or an error when it is malformed.
func (w Ticket) Ticket() (stepup.Ticket, error) {
	t := stepup.Ticket{ID: stepup.TicketID(w.ID), Status: stepup.Status(w.Status), Tool: w.Tool,
		Reason: w.Reason, ExpiresAt: w.ExpiresAt, Next: stepup.TicketID(w.Next),
		RetryAfter: time.Duration(w.RetryAfterMS) * time.Millisecond}
	if w.Digest != "" {
		d, err := canon.ParseDigest(w.Digest)
		if err != nil {
			return stepup.Ticket{}, fmt.Errorf("ticket digest: %v", err)
		}
		t.Digest = d
	}
	if w.ID == "" || w.Status == "" {
		return stepup.Ticket{}, errors.New("ticket without id or status")
	}
	return t, nil
}

// Result is a [stepup.Result] on the wire.
type Result struct {
	Ticket         string          `json:"ticket"`
	Output         json.RawMessage `json:"output,omitempty"`
	IdempotencyKey string          `json:"idempotency_key"`
}

// Error is every refusal's body: {"error":{"code":...,"also":[...],"message":...}}.
// Also lists the codes of the other sentinels the refusal wraps.
type Error struct {
	Error struct {
		Code    string   `json:"code"`
		Also    []string `json:"also,omitempty"`
		Message string   `json:"message,omitempty"`
	} `json:"error"`
}

// Cancel is the body of a cancel: why the agent withdraws its ticket.
type Cancel struct {
	Reason string `json:"reason,omitempty"`
}
