package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
)

// callJSON is a [stepup.Call] on the wire. Names are snake_case so that
// runtimes in any language can speak the API without Go's field names.
type callJSON struct {
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	Task      string          `json:"task,omitempty"`
	Step      string          `json:"step,omitempty"`
	Session   string          `json:"session"`
	Principal principalJSON   `json:"principal"`
	Taint     []string        `json:"taint,omitempty"`
	Rationale string          `json:"rationale,omitempty"`
	Grant     string          `json:"grant,omitempty"`
}

type principalJSON struct {
	User        string   `json:"user"`
	Agent       string   `json:"agent"`
	Delegations []string `json:"delegations,omitempty"`
}

func callToWire(c stepup.Call) callJSON {
	return callJSON{Tool: c.Tool, Args: c.Args, Task: c.Task, Step: c.Step, Session: c.Session,
		Principal: principalJSON{User: c.Principal.User, Agent: c.Principal.Agent, Delegations: c.Principal.Delegations},
		Taint:     c.Taint, Rationale: c.Rationale, Grant: c.Grant}
}

func (w callJSON) call() stepup.Call {
	return stepup.Call{Tool: w.Tool, Args: w.Args, Task: w.Task, Step: w.Step, Session: w.Session,
		Principal: canon.Principal{User: w.Principal.User, Agent: w.Principal.Agent, Delegations: w.Principal.Delegations},
		Taint:     w.Taint, Rationale: w.Rationale, Grant: w.Grant}
}

// ticketJSON is a [stepup.Ticket] on the wire.
type ticketJSON struct {
	ID           string    `json:"id"`
	Status       string    `json:"status"`
	Tool         string    `json:"tool"`
	Digest       string    `json:"digest,omitempty"`
	Reason       string    `json:"reason,omitempty"`
	ExpiresAt    time.Time `json:"expires_at,omitzero"`
	Next         string    `json:"next,omitempty"`
	RetryAfterMS int64     `json:"retry_after_ms,omitempty"`
}

func ticketToWire(t stepup.Ticket) ticketJSON {
	w := ticketJSON{ID: string(t.ID), Status: string(t.Status), Tool: t.Tool, Reason: t.Reason,
		ExpiresAt: t.ExpiresAt, Next: string(t.Next), RetryAfterMS: t.RetryAfter.Milliseconds()}
	if !t.Digest.IsZero() {
		w.Digest = t.Digest.String()
	}
	return w
}

func (w ticketJSON) ticket() (stepup.Ticket, error) {
	t := stepup.Ticket{ID: stepup.TicketID(w.ID), Status: stepup.Status(w.Status), Tool: w.Tool,
		Reason: w.Reason, ExpiresAt: w.ExpiresAt, Next: stepup.TicketID(w.Next),
		RetryAfter: time.Duration(w.RetryAfterMS) * time.Millisecond}
	if w.Digest != "" {
		d, err := canon.ParseDigest(w.Digest)
		if err != nil {
			return stepup.Ticket{}, fmt.Errorf("%w: ticket digest: %v", ErrInvalid, err)
		}
		t.Digest = d
	}
	if w.ID == "" || w.Status == "" {
		return stepup.Ticket{}, fmt.Errorf("%w: ticket without id or status", ErrInvalid)
	}
	return t, nil
}

// resultJSON is a [stepup.Result] on the wire.
type resultJSON struct {
	Ticket         string          `json:"ticket"`
	Output         json.RawMessage `json:"output,omitempty"`
	IdempotencyKey string          `json:"idempotency_key"`
}

// errorJSON is every refusal's body: {"error":{"code":...,"message":...}}.
type errorJSON struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message,omitempty"`
	} `json:"error"`
}

// callKeys and principalKeys are the only member names a call may use,
// spelled exactly: encoding/json would also take "Tool" or "TOOL" for
// "tool", which another parser in front of the gate would not.
var (
	callKeys      = []string{"tool", "args", "task", "step", "session", "principal", "taint", "rationale", "grant"}
	principalKeys = []string{"user", "agent", "delegations"}
)

// decodeCall decodes a propose body strictly.
func decodeCall(body []byte) (callJSON, error) {
	var w callJSON
	if err := decodeStrict(body, &w, callKeys); err != nil {
		return callJSON{}, err
	}
	var top struct {
		Principal json.RawMessage `json:"principal"`
	}
	_ = json.Unmarshal(body, &top)
	if len(top.Principal) > 0 && string(top.Principal) != "null" {
		if err := exactKeys(top.Principal, principalKeys); err != nil {
			return callJSON{}, fmt.Errorf("%w: principal: %v", ErrInvalid, err)
		}
	}
	return w, nil
}

// exactKeys fails unless raw is an object whose member names are all in
// allowed, byte for byte.
func exactKeys(raw []byte, allowed []string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return errors.New("not a JSON object")
	}
	for k := range m {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("unknown field %q", k)
		}
	}
	return nil
}

// maxDepth bounds the nesting of a request body; the gate's canonical form
// refuses deeper arguments anyway.
const maxDepth = 128

var errDuplicate = errors.New("duplicate object key")

// decodeStrict decodes one JSON object from body into v, refusing member
// names not in keys (spelled exactly), trailing data, and duplicate keys
// anywhere: a body two parsers could read differently is not a body to
// act on.
func decodeStrict(body []byte, v any, keys []string) error {
	if err := noDuplicates(body); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := exactKeys(body, keys); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: data after the JSON value", ErrInvalid)
	}
	return nil
}

// noDuplicates walks body's tokens and fails on a repeated key in any
// object, or nesting deeper than maxDepth.
func noDuplicates(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	type frame struct {
		keys   map[string]bool
		object bool
		key    bool // the next token in an object is a key
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			top := &stack[n-1]
			if top.key {
				if d, ok := tok.(json.Delim); ok && d == '}' {
					stack = stack[:n-1]
					continue
				}
				k, _ := tok.(string)
				if top.keys[k] {
					return fmt.Errorf("%w %q", errDuplicate, k)
				}
				top.keys[k] = true
				top.key = false
				continue
			}
			top.key = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{keys: map[string]bool{}, object: true, key: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > maxDepth {
			return fmt.Errorf("nesting deeper than %d", maxDepth)
		}
	}
}
