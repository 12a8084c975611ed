package modelapprove

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/agentstepup/asu/stepup/plug"
)

// Model is a language model that completes one exchange: a system
// message, a user message, and its answer as text. Complete must honour
// ctx; package openaijudge in the adapters module implements it for
// OpenAI-compatible chat endpoints.
type Model interface {
	// ID names the model (provider and model name), for the record.
	ID() string
	// Complete returns the model's answer to the two messages.
	Complete(ctx context.Context, system, user string) (string, error)
}

// Why a judgment is a denial the model did not give; test plug.Judgment.Err
// with errors.Is.
var (
	// ErrInput means the card is empty or too long, or the agent text is
	// too long: the model was not asked.
	ErrInput = errors.New("modelapprove: input refused")
	// ErrTimeout means the model did not answer within the timeout or
	// before the caller's context ended.
	ErrTimeout = errors.New("modelapprove: no answer in time")
	// ErrModel means the model call failed.
	ErrModel = errors.New("modelapprove: model call failed")
	// ErrOversize means the answer is longer than MaxResponseBytes.
	ErrOversize = errors.New("modelapprove: answer too long")
	// ErrMalformed means the answer is not exactly
	// {"decision":"approve"|"deny","reason":"..."}.
	ErrMalformed = errors.New("modelapprove: malformed answer")
)

// Options tunes a [Judge]; nil or zero fields take the defaults.
type Options struct {
	// Timeout bounds one decision, the model call included (default
	// 30 s).
	Timeout time.Duration
	// MaxResponseBytes bounds the model's answer (default 2 KiB).
	MaxResponseBytes int
	// MaxCardBytes bounds the card (default 32 KiB); a longer card is
	// denied, never cut short.
	MaxCardBytes int
	// MaxUntrustedBytes bounds the agent's text (default 8 KiB); longer
	// text is denied, never cut short.
	MaxUntrustedBytes int
	// Instructions are the integrator's criteria, in words, placed in
	// the system prompt (default [DefaultInstructions]). They are
	// trusted: never build them from agent text.
	Instructions string
	// Rand is where boundary codes come from (default crypto/rand). Set
	// it only in tests that need the same prompt twice.
	Rand io.Reader
}

// Judge asks a [Model] to approve or deny a tool call, and denies on its
// own whenever the model's answer is missing, late, or not exactly what
// it must be. A Judge is safe for concurrent use when its Model is.
type Judge struct {
	m Model
	o Options
}

// NewJudge returns a Judge asking m. opts may be nil.
func NewJudge(m Model, opts *Options) (*Judge, error) {
	if m == nil {
		return nil, errors.New("modelapprove: no model")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Timeout = positive(o.Timeout, 30*time.Second)
	o.MaxResponseBytes = positive(o.MaxResponseBytes, 2<<10)
	o.MaxCardBytes = positive(o.MaxCardBytes, 32<<10)
	o.MaxUntrustedBytes = positive(o.MaxUntrustedBytes, 8<<10)
	if o.Instructions == "" {
		o.Instructions = DefaultInstructions
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	return &Judge{m: m, o: o}, nil
}

func positive[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Decide asks the model whether the tool call shown on card may run. card
// is the trusted approval card's text (card.Card.Text); untrusted is the
// agent's own text about the call (its rationale, a tool server's
// description), which the model sees only as delimited data. Decide
// never fails: anything but a well-formed, timely "approve" is a denial,
// with Judgment.Err saying why when the model did not decide. The
// judgment is plug.Judgment, which the gate takes from any plug.Judge.
func (j *Judge) Decide(ctx context.Context, card, untrusted string) plug.Judgment {
	v := plug.Judgment{ModelID: j.m.ID()}
	deny := func(err error) plug.Judgment {
		v.Approve, v.Err = false, err
		v.Reason = forcedReason(err)
		return v
	}
	switch {
	case len(card) == 0:
		return deny(fmt.Errorf("%w: no card", ErrInput))
	case len(card) > j.o.MaxCardBytes:
		return deny(fmt.Errorf("%w: card longer than %d bytes", ErrInput, j.o.MaxCardBytes))
	case len(untrusted) > j.o.MaxUntrustedBytes:
		return deny(fmt.Errorf("%w: agent text longer than %d bytes", ErrInput, j.o.MaxUntrustedBytes))
	}
	card, untrusted = escape(card), escape(untrusted)
	boundary, err := newBoundary(j.o.Rand, card, untrusted)
	if err != nil {
		return deny(fmt.Errorf("%w: %w", ErrInput, err))
	}
	system, user := systemPrompt(boundary, j.o.Instructions), userPrompt(boundary, card, untrusted)

	ctx, cancel := context.WithTimeout(ctx, j.o.Timeout)
	defer cancel()
	if ctx.Err() != nil {
		return deny(fmt.Errorf("%w: %w", ErrTimeout, ctx.Err()))
	}
	v.PromptHash = PromptHash(system, user)
	raw, err := j.complete(ctx, system, user)
	if ctx.Err() != nil {
		// An answer that came after the deadline counts as none.
		return deny(fmt.Errorf("%w: %w", ErrTimeout, ctx.Err()))
	}
	if err != nil {
		return deny(fmt.Errorf("%w: %v", ErrModel, err))
	}
	v.ResponseHash = sha256.Sum256([]byte(raw))
	if len(raw) > j.o.MaxResponseBytes {
		return deny(fmt.Errorf("%w: more than %d bytes", ErrOversize, j.o.MaxResponseBytes))
	}
	approve, reason, err := parseAnswer(raw)
	if err != nil {
		return deny(fmt.Errorf("%w: %v", ErrMalformed, err))
	}
	v.Approve, v.Reason = approve, reason
	return v
}

// complete calls the model, returning when it answers or ctx ends,
// whichever is first: a model that ignores ctx delays no decision, though
// its call runs on until it returns. A panicking model is an error.
func (j *Judge) complete(ctx context.Context, system, user string) (string, error) {
	type answer struct {
		s   string
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- answer{err: errors.New("model panicked")}
			}
		}()
		s, err := j.m.Complete(ctx, system, user)
		ch <- answer{s, err}
	}()
	select {
	case a := <-ch:
		return a.s, a.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// forcedReasons say, for each way a Judge denies without the model's
// decision, why in one clause; the detail stays in Judgment.Err.
var forcedReasons = []struct {
	err    error
	reason string
}{
	{ErrInput, "the model was not asked: the card or the agent's text is empty or too long"},
	{ErrTimeout, "the model did not answer in time"},
	{ErrModel, "the model could not be asked"},
	{ErrOversize, "the model's answer was too long"},
	{ErrMalformed, "the model's answer was not in the required form"},
}

// forcedReason is the Reason of a denial the model did not give.
func forcedReason(err error) string {
	for _, f := range forcedReasons {
		if errors.Is(err, f.err) {
			return f.reason
		}
	}
	return "the model did not decide"
}
